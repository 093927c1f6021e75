package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkhost/adkhost/host/appdef"
)

// TestKeyedMutexBoundsWaiters: the calls of one MCP session wait for each
// other, but no more than max of them at once: a client cannot pile up
// goroutines by sending calls and hanging up (the SDK runs a call to its
// end whether or not its POST is still open).
func TestKeyedMutexBoundsWaiters(t *testing.T) {
	k := keyedMutex{max: 3}
	unlock, err := k.lock(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan error, 2)
	for range 2 {
		go func() {
			u, err := k.lock(ctx, "s")
			if err == nil {
				u()
			}
			waited <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for k.refs("s") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// A fourth, in the same session, is refused at once...
	short, stop := context.WithTimeout(t.Context(), 5*time.Second)
	defer stop()
	if _, err := k.lock(short, "s"); !errors.Is(err, errTooManyCalls) {
		t.Errorf("a fourth call: err = %v, want errTooManyCalls", err)
	}
	// ...another session is not held up...
	if u, err := k.lock(short, "other"); err != nil {
		t.Errorf("another session: %v", err)
	} else {
		u()
	}
	// ...and the waiters get their turn.
	unlock()
	for range 2 {
		if err := <-waited; err != nil {
			t.Errorf("a waiting call: %v", err)
		}
	}
	cancel()
	if n := k.refs("s"); n != 0 {
		t.Errorf("%d references left", n)
	}
}

// refs is how many hold or wait for key.
func (k *keyedMutex) refs(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.locks[key]; l != nil {
		return l.refs
	}
	return 0
}

// TestMCPAppDeletedDuringRequest: an app deleted while a request for it is
// between its check of the app and getting the app's MCP server leaves no
// MCP server behind (get refuses it), and a session made on a server that
// was forgotten meanwhile is closed once its request ends.
func TestMCPAppDeletedDuringRequest(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler), apps: newAppSet()}
	s.mcp = newMCPApps(s, "token")
	s.apps.changed = s.mcp.changed
	served := func() *loadedApp { return &loadedApp{name: "a", app: &appdef.App{}, log: s.log} }
	s.apps.apps["a"] = served()

	// serveMCP found the app; it is deleted before get.
	if s.apps.get("a") == nil {
		t.Fatal("no app")
	}
	s.apps.remove("a")
	if a, _ := s.mcp.get("a"); a != nil {
		t.Error("get made an MCP server for a deleted app")
	}
	if n := len(s.mcp.byName); n != 0 {
		t.Errorf("%d MCP servers left behind", n)
	}

	// get succeeded; the app is deleted (forgetting its server) before the
	// request's session exists.
	s.apps.apps["a"] = served()
	a, la := s.mcp.get("a")
	if a == nil || la == nil {
		t.Fatal("no MCP server for a served app")
	}
	s.apps.remove("a")
	st, ct := mcp.NewInMemoryTransports()
	if _, err := a.server.Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s.mcp.closeIfForgotten(a)
	for range a.server.Sessions() {
		t.Error("a session of a forgotten MCP server is still open")
	}
}

// An MCP server names its tools and lists them again at every invocation:
// one renaming them each time added a tool call series per call, for
// good. The tool label values of tools without a module are bounded;
// names admitted keep their label.
func TestToolLabelsBounded(t *testing.T) {
	o := newObserver(&metrics{}, nil)
	for i := range maxToolLabels {
		if got := o.toolLabel("app", fmt.Sprintf("t%d", i)); got != fmt.Sprintf("t%d", i) {
			t.Fatalf("label %d = %q", i, got)
		}
	}
	if got := o.toolLabel("app", "renamed"); got != "<other>" {
		t.Errorf("past the bound: %q, want <other>", got)
	}
	if got := o.toolLabel("other_app", "t0"); got != "<other>" {
		t.Errorf("another app past the bound: %q, want <other>", got)
	}
	if got := o.toolLabel("app", "t7"); got != "t7" {
		t.Errorf("an admitted name: %q", got)
	}
}
