package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
)

// A session never writes the slice it was built from, not even its spare
// capacity: stores hand several sessions one shared history.
func TestNewLeavesHandedSliceAlone(t *testing.T) {
	first := session.NewEvent("inv", "user", "")
	backing := make([]*session.Event, 1, 4)
	backing[0] = first
	a := session.New("app", "u", "s", nil, backing, time.Now(), 1)
	b := session.New("app", "u", "s", nil, backing, time.Now(), 1)
	ea, eb := session.NewEvent("inv", "a", ""), session.NewEvent("inv", "b", "")
	a.Commit(ea, nil, 2)
	b.Commit(eb, nil, 2)
	if spare := backing[:cap(backing)]; spare[1] != nil {
		t.Fatalf("Commit wrote into the spare capacity of the slice given to New: %v", spare[1])
	}
	for _, c := range []struct {
		s    *session.Session
		want *session.Event
	}{{a, ea}, {b, eb}} {
		got := c.s.Events()
		if len(got) != 2 || got[0] != first || got[1] != c.want {
			t.Errorf("events = %v, want [%p %p]", got, first, c.want)
		}
	}
}

// The in-memory service shares its history with the sessions Get returns;
// a session's commits and the store's appends must not overwrite each
// other.
func TestInMemoryGetSharesHistorySafely(t *testing.T) {
	ctx := context.Background()
	svc := session.NewInMemoryService()
	key := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	// Enough events that the stored slice has spare capacity.
	for range 5 {
		if err := svc.AppendEvent(ctx, s, session.NewEvent("inv", "user", "")); err != nil {
			t.Fatal(err)
		}
	}
	get := func() *session.Session {
		got, err := svc.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	stale, fresh := get(), get()
	n := len(stale.Events())
	stored := session.NewEvent("inv", "model", "")
	if err := svc.AppendEvent(ctx, fresh, stored); err != nil {
		t.Fatal(err)
	}
	// A copy committing on its own (as a store's session would after its
	// write) must not overwrite the stored history's next slot.
	stale.Commit(session.NewEvent("inv", "other", ""), nil, stale.Revision()+100)
	for name, events := range map[string][]*session.Event{"fresh": fresh.Events(), "stored": get().Events()} {
		if len(events) != n+1 || events[n] != stored {
			t.Errorf("%s events[%d] = %v, want the stored event %p", name, n, events[n:], stored)
		}
	}
	if events := stale.Events(); len(events) != n+1 || events[n] == stored {
		t.Errorf("stale session events = %d, last %v; want its own commit", len(events), events[len(events)-1])
	}
}
