package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatedSessions gives every append of a run with a session.Pending a
// queued write that finishes only when gate closes, with err: a store
// whose disk is slow, or whose queued write fails.
type gatedSessions struct {
	session.Service
	gate    chan struct{}
	err     error
	queued  atomic.Int32
	pending atomic.Bool // an append saw a Pending
}

func (g *gatedSessions) AppendEvent(ctx context.Context, s *session.Session, e *session.Event) error {
	if err := g.Service.AppendEvent(ctx, s, e); err != nil {
		return err
	}
	if p := session.PendingFrom(ctx); p != nil {
		g.pending.Store(true)
		g.queued.Add(1)
		p.Add(session.Deferred{Done: g.gate, Err: func() error { return g.err }})
	}
	return nil
}

// TestRunWaitsForQueuedAppends: /run gives its appends a Pending and
// answers only once every queued write finished, with the failure of one
// as its answer.
func TestRunWaitsForQueuedAppends(t *testing.T) {
	gs := &gatedSessions{gate: make(chan struct{})}
	h := newHarness(t, t.TempDir(), harnessOpts{wrapSessions: func(s session.Service) session.Service {
		gs.Service = s
		return gs
	}})
	h.setupApp("wx", "ok", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/wx/users/u/sessions/s1", map[string]any{}))

	type answer struct {
		status int
		body   []byte
	}
	answered := make(chan answer, 1)
	var gateOpen atomic.Bool
	go func() {
		st, b := h.do("POST", "/run", runBody("wx", "u", "s1", "Paris"))
		if !gateOpen.Load() {
			st = -st // answered before its writes finished
		}
		answered <- answer{st, b}
	}()
	// The turn's four appends are queued while the gate is shut.
	for gs.queued.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // time for an answer that does not wait
	gateOpen.Store(true)
	close(gs.gate)
	a := <-answered
	if a.status != http.StatusOK {
		t.Fatalf("/run answered %d (negative: before its queued writes finished): %s", a.status, a.body)
	}
	if !gs.pending.Load() {
		t.Fatal("/run's appends carried no session.Pending")
	}

	// A queued write that fails fails the run: another writer appended
	// first (409), as a synchronous stale append would.
	gs.err = session.ErrStale
	st, body := h.do("POST", "/run", runBody("wx", "u", "s1", "Rome"))
	if st != http.StatusConflict {
		t.Fatalf("/run with a failed queued write: %d %s, want 409", st, body)
	}
}

// TestMCPCallWaitsForQueuedAppends: an MCP tool call queues its events as
// /run does, and a queued write that fails fails the call (a JSON-RPC
// error, not the tool's), since its events were not stored.
func TestMCPCallWaitsForQueuedAppends(t *testing.T) {
	gs := &gatedSessions{gate: make(chan struct{})}
	close(gs.gate)
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: runToken, wrapSessions: func(s session.Service) session.Service {
		gs.Service = s
		return gs
	}})
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/counter", counterWasm(t)))
	h.must(http.StatusCreated)(h.putBundle("tools", counterApp()))
	cs, err := h.mcpConnect(t, "tools", runToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callTool(t, cs, "add", map[string]any{"n": 2}); res.IsError || resultText(res) != `{"total":2}` {
		t.Fatalf("add: isError=%v %s", res.IsError, resultText(res))
	}
	if !gs.pending.Load() || gs.queued.Load() < 2 {
		t.Fatalf("the call queued %d appends (with a Pending: %v), want its two events queued", gs.queued.Load(), gs.pending.Load())
	}
	gs.err = session.ErrStale
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"n": 1}})
	if err == nil {
		t.Fatalf("a call whose events were not stored answered %v %s", res.IsError, resultText(res))
	}
}
