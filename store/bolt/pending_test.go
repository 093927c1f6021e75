package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
	"github.com/adkhost/adkhost/store/bolt"
)

// pipelined runs the session suite with every append queued
// (session.Pending), as the run API does: each session copy has a Pending
// of its own that its appends join, and every other call first waits for
// all of them, as the run API's answer does, so the suite sees the queued
// appends' errors; Get does not, since the store's Get waits for the
// session's queued appends.
type pipelined struct {
	session.Service
	mu      sync.Mutex
	pending map[*session.Session]*session.Pending
}

func (p *pipelined) of(s *session.Session) *session.Pending {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[*session.Session]*session.Pending{}
	}
	if p.pending[s] == nil {
		_, p.pending[s] = session.WithPending(context.Background())
	}
	return p.pending[s]
}

func (p *pipelined) waitAll() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for s, pend := range p.pending {
		errs = append(errs, pend.Wait())
		delete(p.pending, s)
	}
	return errors.Join(errs...)
}

func (p *pipelined) AppendEvent(ctx context.Context, s *session.Session, e *session.Event) error {
	pend := p.of(s)
	return p.Service.AppendEvent(withPending(ctx, pend), s, e)
}

func (p *pipelined) Create(ctx context.Context, req *session.CreateRequest) (*session.Session, error) {
	if err := p.waitAll(); err != nil {
		return nil, err
	}
	return p.Service.Create(ctx, req)
}

// Get does not wait: the store's Get waits for the session's queued
// appends itself. Their errors show at the next call that waits.
func (p *pipelined) Get(ctx context.Context, req *session.GetRequest) (*session.Session, error) {
	return p.Service.Get(ctx, req)
}

func (p *pipelined) List(ctx context.Context, req *session.ListRequest) ([]*session.Session, error) {
	if err := p.waitAll(); err != nil {
		return nil, err
	}
	return p.Service.List(ctx, req)
}

func (p *pipelined) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if err := p.waitAll(); err != nil {
		return err
	}
	return p.Service.Delete(ctx, req)
}

// withPending returns ctx carrying pend.
func withPending(ctx context.Context, pend *session.Pending) context.Context {
	return session.ContextWithPending(ctx, pend)
}

func TestSessionServiceConformancePipelined(t *testing.T) {
	newService := func(t *testing.T) session.Service { return &pipelined{Service: open(t).Sessions()} }
	sessiontest.Run(t, newService)
	sessiontest.RunKeyOrder(t, newService)
}

// TestPendingAppends queues a run's appends, checks that the copy has them
// at once and the store once Wait returns, that a stale copy and a missing
// session are still refused by AppendEvent itself, and that a queued
// append failing in its transaction fails Wait and the run's next append.
func TestPendingAppends(t *testing.T) {
	db := open(t)
	svc := db.Sessions()
	ctx := t.Context()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	qctx, pend := session.WithPending(ctx)
	const n = 200 // past the Pending's bound on unfinished writes
	for i := range n {
		e := session.NewEvent("inv", "agent", "")
		e.Actions.StateDelta = map[string]any{"n": float64(i), fmt.Sprintf("k%d", i): true, "user:last": float64(i)}
		if err := svc.AppendEvent(qctx, s, e); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if got := len(s.Events()); got != i+1 {
			t.Fatalf("after append %d the copy holds %d events", i, got)
		}
	}
	// A copy read before the queued appends is stale at once, whether
	// they are still queued or done.
	if err := svc.AppendEvent(qctx, stale, session.NewEvent("inv", "agent", "")); !errors.Is(err, session.ErrStale) {
		t.Fatalf("append through a stale copy: %v, want ErrStale", err)
	}
	// Get waits for the session's queued appends: it sees them all,
	// before Wait.
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events()) != n || got.Revision() != s.Revision() {
		t.Fatalf("stored %d events at revision %d; want %d at %d", len(got.Events()), got.Revision(), n, s.Revision())
	}
	if err := pend.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, e := range got.Events() {
		if e.ID != s.Events()[i].ID {
			t.Fatalf("event %d is %s, the copy's is %s: out of order", i, e.ID, s.Events()[i].ID)
		}
	}
	if v, _ := got.StateValue("n"); v != float64(n-1) {
		t.Fatalf("state n = %v, want %d", v, n-1)
	}
	if v, _ := got.StateValue("user:last"); v != float64(n-1) {
		t.Fatalf("state user:last = %v, want %d", v, n-1)
	}

	// A missing session is refused by the append itself.
	ghost := session.New("a", "u", "ghost", nil, nil, got.LastUpdateTime(), got.Revision())
	if err := svc.AppendEvent(qctx, ghost, session.NewEvent("inv", "agent", "")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("append to a missing session: %v, want ErrNotFound", err)
	}

	// A session deleted after the check and before the transaction: the
	// delete is submitted while the append is queued behind a write that
	// holds the committer, so it commits first.
	qctx2, pend2 := session.WithPending(ctx)
	hold := make(chan struct{})
	release := bolt.HoldCommits(db, hold)
	if err := svc.AppendEvent(qctx2, got, session.NewEvent("inv", "agent", "")); err != nil {
		t.Fatal(err)
	}
	deleted := make(chan error, 1)
	go func() {
		deleted <- svc.Delete(ctx, &session.DeleteRequest{AppName: "a", UserID: "u", SessionID: "s"})
	}()
	bolt.WaitPending(db, 2)
	close(hold)
	release()
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	// The append was queued first, so it commits first, and the delete
	// then removes it: Wait is nil. The next append finds no session.
	if err := pend2.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if err := svc.AppendEvent(qctx2, got, session.NewEvent("inv", "agent", "")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("append after the delete: %v, want ErrNotFound", err)
	}
}

// TestPendingCloseWaits closes the DB with appends queued: Close waits for
// them, and a reopened file holds them all.
func TestPendingCloseWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := db.Sessions()
	ctx := t.Context()
	const sessions, events = 8, 20
	var wg sync.WaitGroup
	for i := range sessions {
		s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			qctx, _ := session.WithPending(ctx)
			for range events {
				if err := svc.AppendEvent(qctx, s, session.NewEvent("inv", "agent", "")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range sessions {
		s, err := db.Sessions().Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Events()) != events {
			t.Fatalf("session %d: %d events after Close, want %d", i, len(s.Events()), events)
		}
	}
}
