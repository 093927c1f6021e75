package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
)

// The bounded service is still a Service: with the default bound nothing
// the suite writes is refused.
func TestStateLimitConformance(t *testing.T) {
	newSvc := func(*testing.T) session.Service {
		return session.WithStateLimit(session.NewInMemoryService(), 0)
	}
	sessiontest.Run(t, newSvc)
	sessiontest.RunKeyOrder(t, newSvc)
}

// jsonLen is the length of m's JSON, as the bound measures a scope.
func jsonLen(t *testing.T, m map[string]any) int64 {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

func appendDelta(ctx context.Context, svc session.Service, s *session.Session, delta map[string]any) error {
	ev := session.NewEvent("inv", "user", "")
	ev.Actions.StateDelta = delta
	return svc.AppendEvent(ctx, s, ev)
}

// tooLarge checks that err is the refusal of scope at size over limit,
// with a message that names them.
func tooLarge(t *testing.T, err error, scope string, size, limit int64) {
	t.Helper()
	var e *session.StateTooLargeError
	if !errors.As(err, &e) || !errors.Is(err, session.ErrStateTooLarge) {
		t.Fatalf("got %v, want a StateTooLargeError", err)
	}
	if e.Scope != scope || e.Size != size || e.Limit != limit {
		t.Fatalf("got scope %q size %d limit %d, want %q %d %d", e.Scope, e.Size, e.Limit, scope, size, limit)
	}
	msg := err.Error()
	for _, want := range []string{scope + " state", itoa(size) + " bytes", "bound of " + itoa(limit)} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Each scope is bounded on its own: the write that would take it past the
// bound is refused and stores nothing, writes that keep it within pass,
// and temp: keys and partial events are not state that is kept.
func TestStateLimitPerScope(t *testing.T) {
	ctx := context.Background()
	const limit = 200
	val := strings.Repeat("x", 60)
	for _, sc := range []struct{ scope, prefix string }{{"session", ""}, {"user", "user:"}, {"app", "app:"}} {
		t.Run(sc.scope, func(t *testing.T) {
			svc := session.WithStateLimit(session.NewInMemoryService(), limit)
			s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			// Two 60-byte values fit in 200 bytes, a third does not.
			for _, k := range []string{"k1", "k2"} {
				if err := appendDelta(ctx, svc, s, map[string]any{sc.prefix + k: val}); err != nil {
					t.Fatalf("write %s within the bound: %v", k, err)
				}
				want[k] = val
			}
			over := map[string]any{"k3": val}
			for k, v := range want {
				over[k] = v
			}
			err = appendDelta(ctx, svc, s, map[string]any{sc.prefix + "k3": val, "temp:big": strings.Repeat("t", 1000)})
			tooLarge(t, err, sc.scope, jsonLen(t, over), limit)
			got, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got.Events()); n != 2 {
				t.Fatalf("%d events stored, want 2: the refused one was stored", n)
			}
			if _, ok := got.StateValue(sc.prefix + "k3"); ok {
				t.Fatal("the refused write reached the state")
			}
			// Overwriting a key with a smaller value, temp: keys of any
			// size and partial events pass.
			if err := appendDelta(ctx, svc, got, map[string]any{sc.prefix + "k1": "small", "temp:big": strings.Repeat("t", 1000)}); err != nil {
				t.Fatalf("shrinking write: %v", err)
			}
			partial := session.NewEvent("inv", "model", "")
			partial.Partial = true
			partial.Actions.StateDelta = map[string]any{sc.prefix + "huge": strings.Repeat("p", 1000)}
			if err := svc.AppendEvent(ctx, got, partial); err != nil {
				t.Fatalf("partial event: %v", err)
			}
		})
	}
}

// App state is every user's: a user whose session has not written it yet
// is refused once others filled it, and so is a Create that brings app:
// keys; a refused Create leaves no session behind.
func TestStateLimitAppStateAcrossUsers(t *testing.T) {
	ctx := context.Background()
	const limit = 200
	val := strings.Repeat("x", 60)
	svc := session.WithStateLimit(session.NewInMemoryService(), limit)
	s1, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u1", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := appendDelta(ctx, svc, s1, map[string]any{"app:k1": val, "app:k2": val}); err != nil {
		t.Fatal(err)
	}
	s2, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u2", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	wantApp := map[string]any{"k1": val, "k2": val, "k3": val}
	tooLarge(t, appendDelta(ctx, svc, s2, map[string]any{"app:k3": val}), "app", jsonLen(t, wantApp), limit)

	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u3", SessionID: "s", State: map[string]any{"app:k3": val, "mine": 1}})
	tooLarge(t, err, "app", jsonLen(t, wantApp), limit)
	list, err := svc.List(ctx, &session.ListRequest{AppName: "a", UserID: "u3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("a refused Create left %d sessions of its user (the probe or the session)", len(list))
	}
	// A session's own initial state is bounded too; within the bound a
	// Create with scoped keys stores them all.
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u3", State: map[string]any{"a": strings.Repeat("y", 300)}})
	var e *session.StateTooLargeError
	if !errors.As(err, &e) || e.Scope != "session" || !strings.Contains(err.Error(), "a new session") {
		t.Fatalf("got %v, want the session scope refused", err)
	}
	s3, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u3", SessionID: "ok", State: map[string]any{"app:k1": "small", "user:u": 1, "s": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s3.StateValue("app:k1"); v != "small" {
		t.Fatalf("app:k1 = %v after a Create within the bound", v)
	}
	if list, _ := svc.List(ctx, &session.ListRequest{AppName: "a", UserID: "u3"}); len(list) != 1 {
		t.Fatalf("user u3 has %d sessions, want 1 (no probe left)", len(list))
	}
}
