package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// blockingHost holds every state_get until release is closed.
type blockingHost struct {
	abi.UnavailableHost
	inside  chan struct{}
	release chan struct{}
}

func (h *blockingHost) StateGet(ctx context.Context, key string) (json.RawMessage, error) {
	h.inside <- struct{}{}
	select {
	case <-h.release:
		return json.RawMessage(`"passed"`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestMemoryBudget: the runtime-wide budget bounds the memory of all
// instances together. With room for two instances, a third call fails
// fast with ErrMemoryBudget while two are busy; another pool's call closes
// an idle instance to get its room; idle instances are closed after
// IdleTimeout, giving their reservations back.
func TestMemoryBudget(t *testing.T) {
	const pages = 1024
	perInstance := int64(pages) << 16
	ctx := context.Background()
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: cacheDir, MemoryBudget: 2 * perInstance,
		AdmissionWait: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	m := load(t, r, goGuest(t, "goguest"))
	limits := sandbox.Limits{MemoryPages: pages, MaxInstances: 4, Timeout: 20 * time.Second}
	a := pool(t, r, m, sandbox.PoolConfig{Owner: "a", Limits: limits, Grants: goGrants(t)})
	b := pool(t, r, m, sandbox.PoolConfig{Owner: "b", Limits: limits, Grants: goGrants(t)})

	h := &blockingHost{inside: make(chan struct{}), release: make(chan struct{})}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := invokeTool(ctx, a, h, "barrier", nil); err != nil {
				t.Error(err)
			}
		})
	}
	<-h.inside
	<-h.inside
	if st := r.MemoryStats(); st.Reserved != 2*perInstance || st.Instances != 2 {
		t.Fatalf("stats with two busy instances: %+v", st)
	}
	start := time.Now()
	_, err = invokeTool(ctx, a, nil, "echo", map[string]any{"x": 1.0})
	if !errors.Is(err, sandbox.ErrMemoryBudget) {
		t.Fatalf("third instance: err = %v, want ErrMemoryBudget", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("the refusal took %s", waited)
	}
	close(h.release)
	wg.Wait()

	// Both of a's instances are idle now: b's call takes the room of one.
	if _, err := invokeTool(ctx, b, nil, "echo", map[string]any{"x": 1.0}); err != nil {
		t.Fatalf("b's call with a's instances idle: %v", err)
	}
	if st := r.MemoryStats(); st.Reserved > 2*perInstance {
		t.Fatalf("over budget: %+v", st)
	}
	// After IdleTimeout every idle instance is closed.
	deadline := time.Now().Add(10 * time.Second)
	for r.MemoryStats().Instances > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if st := r.MemoryStats(); st.Instances != 0 || st.Reserved != 0 {
		t.Errorf("after the idle timeout: %+v, want nothing live", st)
	}
	// And the pools still work.
	if _, err := invokeTool(ctx, a, nil, "echo", map[string]any{"x": 1.0}); err != nil {
		t.Fatal(err)
	}
}

// ctxHost records what a host function's context says, then waits on it.
type ctxHost struct {
	abi.UnavailableHost
	deadline time.Time
	hasDL    bool
	errFirst error
	errAfter error
	value    any
}

type ctxKey struct{}

func (h *ctxHost) StateGet(ctx context.Context, key string) (json.RawMessage, error) {
	h.deadline, h.hasDL = ctx.Deadline()
	h.errFirst = ctx.Err()
	h.value = ctx.Value(ctxKey{})
	<-ctx.Done()
	h.errAfter = ctx.Err()
	return nil, h.errAfter
}

// TestHostFunctionContext: a host function's context carries the caller's
// values and the call's deadline, and a host function waiting on it is
// ended by the deadline, though the timer behind Done is made lazily.
func TestHostFunctionContext(t *testing.T) {
	r := newRuntime(t)
	p := pool(t, r, load(t, r, goGuest(t, "goguest")), sandbox.PoolConfig{Limits: sandbox.Limits{Timeout: 300 * time.Millisecond, MaxInstances: 1}, Grants: goGrants(t)})
	h := &ctxHost{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	start := time.Now()
	_, err := invokeTool(ctx, p, h, "barrier", nil)
	// The call ends with ErrTimeout, or, when the guest returns from the
	// failed state_get before its interrupt check runs, with its own
	// answer: which one is a race; that Done ended the wait is not.
	if err != nil && !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout or the guest's answer", err)
	}
	if !errors.Is(h.errAfter, context.DeadlineExceeded) {
		t.Fatalf("Err() after Done = %v, want context.DeadlineExceeded", h.errAfter)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the blocked host function held the call %s", d)
	}
	if !h.hasDL || h.deadline.Before(start) || h.deadline.After(start.Add(time.Second)) {
		t.Fatalf("Deadline() = %v, %v; want about %v", h.deadline, h.hasDL, start.Add(300*time.Millisecond))
	}
	if h.errFirst != nil || h.value != "v" {
		t.Fatalf("Err() before the deadline = %v, Value = %v", h.errFirst, h.value)
	}
}
