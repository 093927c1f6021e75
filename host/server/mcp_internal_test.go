package server

import (
	"context"
	"errors"
	"testing"
	"time"
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
