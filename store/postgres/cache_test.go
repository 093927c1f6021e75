package postgres_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/store/postgres"
)

// The session cache's behaviour is the uncached store's: the shared suite
// without a cache.
func TestSessionServiceConformanceNoCache(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Service {
		db, err := postgres.Open(t.Context(), pgtest.Database(t), postgres.Config{Logger: quiet, SessionCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Sessions()
	})
}

// TestSessionCacheOtherWriters: replica a caches the history; replica b,
// and a writer going around adkhost (as google-adk does: an event whose
// timestamp is not after the newest, update_time not moved), change the
// session between a's reads. Every Get of a is what an uncached store
// reads, in the stored order, with every filter.
func TestSessionCacheOtherWriters(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openURL(t, url), openURL(t, url)
	truth, err := postgres.Open(t.Context(), url, postgres.Config{Logger: quiet, SessionCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer truth.Close()
	ctx := t.Context()
	key := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	if _, err := a.Sessions().Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendVia := func(svc session.Service, id string, at time.Duration) {
		t.Helper()
		s, err := svc.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.AppendEvent(ctx, s, &session.Event{ID: id, InvocationID: "i", Author: "agent", Timestamp: t0.Add(at),
			Actions: session.EventActions{StateDelta: map[string]any{"last": id}}}); err != nil {
			t.Fatalf("append %s: %v", id, err)
		}
	}
	check := func(step string) {
		t.Helper()
		for _, req := range []session.GetRequest{*key, {AppName: "app", UserID: "u", SessionID: "s", NumRecentEvents: 2},
			{AppName: "app", UserID: "u", SessionID: "s", After: t0.Add(3 * time.Second)}} {
			got, err := a.Sessions().Get(ctx, &req)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			want, err := truth.Sessions().Get(ctx, &req)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := eventIDs(got), eventIDs(want); !slices.Equal(g, w) || got.State()["last"] != want.State()["last"] || got.Revision() != want.Revision() {
				t.Fatalf("%s, Get %+v: events %v state %v rev %d; uncached: %v %v %d", step, req, g, got.State()["last"], got.Revision(), w, want.State()["last"], want.Revision())
			}
		}
	}
	appendVia(a.Sessions(), "e1", time.Second)
	appendVia(a.Sessions(), "e2", 2*time.Second)
	check("a's own appends")
	appendVia(b.Sessions(), "e3", 4*time.Second)
	check("b appended after a's newest")
	appendVia(a.Sessions(), "e4", 5*time.Second)
	check("a appended after b")
	// b's clock behind: stored before a's newest event.
	appendVia(b.Sessions(), "e0", 1500*time.Millisecond)
	check("b appended before a's newest")
	// Around adkhost: an event at the newest timestamp, update_time left.
	if _, err := a.Pool().Exec(ctx, `INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data)
		SELECT 'e5', 'app', 'u', 's', 'i', timestamp, jsonb_build_object('author', 'python', 'timestamp', extract(epoch from timestamp))
		FROM events WHERE id = 'e4'`); err != nil {
		t.Fatal(err)
	}
	check("an event inserted by another program")
	// Deleted and created again under the same id, with as many events,
	// all older than a's newest: only create_time tells.
	if err := b.Sessions().Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Sessions().Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		appendVia(b.Sessions(), fmt.Sprintf("n%d", i), time.Duration(100+i)*time.Millisecond)
	}
	check("deleted and created again")
}

func eventIDs(s *session.Session) []string {
	var ids []string
	for _, e := range s.Events() {
		ids = append(ids, e.ID)
	}
	return ids
}
