package session

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// deferred returns a Deferred and the function that finishes it with err.
func deferred() (Deferred, func(error)) {
	done := make(chan struct{})
	var err error
	return Deferred{Done: done, Err: func() error { return err }}, func(e error) { err = e; close(done) }
}

func TestPending(t *testing.T) {
	ctx, p := WithPending(t.Context())
	if PendingFrom(ctx) != p || PendingFrom(t.Context()) != nil {
		t.Fatal("PendingFrom does not return the Pending the context carries")
	}
	d1, finish1 := deferred()
	d2, finish2 := deferred()
	p.Add(d1)
	p.Add(d2)
	if err := p.Err(); err != nil {
		t.Fatalf("Err with nothing finished: %v", err)
	}
	bad := errors.New("disk full")
	finish2(bad)
	// d2 failed, but d1 before it is unfinished: Err does not wait for it.
	if err := p.Err(); err != nil {
		t.Fatalf("Err = %v before the first write finished", err)
	}
	finish1(nil)
	if err := p.Err(); !errors.Is(err, bad) {
		t.Fatalf("Err = %v, want the second write's error", err)
	}
	if err := p.Wait(); !errors.Is(err, bad) {
		t.Fatalf("Wait = %v, want the first error kept", err)
	}
}

// TestPendingBound: past maxDeferred unfinished writes, Add waits for the
// oldest.
func TestPendingBound(t *testing.T) {
	_, p := WithPending(t.Context())
	finishes := make([]func(error), maxDeferred+1)
	for i := range maxDeferred {
		var d Deferred
		d, finishes[i] = deferred()
		p.Add(d)
	}
	d, last := deferred()
	var oldestDone atomic.Bool
	added := make(chan bool)
	go func() {
		p.Add(d)
		added <- oldestDone.Load()
	}()
	time.Sleep(20 * time.Millisecond) // time for an Add that does not wait to return
	oldestDone.Store(true)
	finishes[0](nil)
	if !<-added {
		t.Fatal("Add past the bound returned before the oldest write finished")
	}
	for _, f := range finishes[1:maxDeferred] {
		f(nil)
	}
	last(nil)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}
