package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pgtest"
)

// TestReplicasStale: two DBs on one database stand for two replicas, each
// with its own pool and its own in-process locks. Each round both read the
// session and append at once; exactly one append is stored, the other
// fails with ErrStale, and nothing the winners wrote is lost.
func TestReplicasStale(t *testing.T) {
	url := pgtest.Database(t)
	replicas := []session.Service{openURL(t, url).Sessions(), openURL(t, url).Sessions()}
	ctx := t.Context()
	if _, err := replicas[0].Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(time.Hour)
	var won []string
	for round := range 30 {
		copies := make([]*session.Session, 2)
		for i, r := range replicas {
			var err error
			if copies[i], err = r.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
				t.Fatal(err)
			}
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, r := range replicas {
			wg.Go(func() {
				<-start
				id := fmt.Sprintf("r%d-%d", round, i)
				errs[i] = r.AppendEvent(ctx, copies[i], &session.Event{ID: id, InvocationID: id, Author: "agent",
					Timestamp: t0.Add(time.Duration(round*10+i) * time.Millisecond),
					Actions:   session.EventActions{StateDelta: map[string]any{"last": id, "user:n": round}}})
			})
		}
		close(start)
		wg.Wait()
		switch {
		case errs[0] == nil && errors.Is(errs[1], session.ErrStale):
			won = append(won, fmt.Sprintf("r%d-0", round))
		case errs[1] == nil && errors.Is(errs[0], session.ErrStale):
			won = append(won, fmt.Sprintf("r%d-1", round))
		default:
			t.Fatalf("round %d: errors %v, %v; want one nil and one ErrStale", round, errs[0], errs[1])
		}
	}
	g, err := replicas[1].Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range g.Events() {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, won) {
		t.Errorf("stored events %q, want the winners %q", ids, won)
	}
	if v, _ := g.StateValue("last"); v != won[len(won)-1] {
		t.Errorf("state last = %v, want %s", v, won[len(won)-1])
	}
}

// TestServerRestart: appends go on while PostgreSQL is killed and started
// again; an append either returns nil and is stored, or returns an error
// and is not; the pool reconnects without help.
func TestServerRestart(t *testing.T) {
	url := pgtest.Database(t)
	svc := openURL(t, url).Sessions()
	ctx := t.Context()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	failed := 0
	t0 := time.Now().Add(time.Hour)
	restarted := false
	for i := 0; len(acked) < 40; i++ {
		if i == 20 {
			if err := pgtest.Get(t).Restart(); err != nil {
				t.Fatal(err)
			}
			restarted = true
		}
		id := fmt.Sprintf("e%d", i)
		err := svc.AppendEvent(ctx, s, &session.Event{ID: id, InvocationID: "inv", Author: "agent", Timestamp: t0.Add(time.Duration(i) * time.Millisecond)})
		switch {
		case err == nil:
			acked = append(acked, id)
		case errors.Is(err, session.ErrStale):
			t.Fatalf("append %s: %v", id, err)
		default:
			failed++
			if failed > 100 {
				t.Fatalf("the pool did not recover: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
			// The copy is still the newest: re-read it as a caller would
			// after an error it cannot place.
			if s, err = svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
				failed++
				continue
			}
		}
	}
	if !restarted {
		t.Fatal("never restarted")
	}
	g, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range g.Events() {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, acked) {
		t.Errorf("after a restart: stored %q, acknowledged %q", ids, acked)
	}
	t.Logf("%d appends failed while the server restarted", failed)
}
