package session

import (
	"context"
	"sync"
)

// Pending lets a Service's AppendEvent return before the event is durable,
// for a caller that acknowledges nothing until it calls Wait: the run API
// answers a /run only once the whole turn is stored, so it need not wait
// for each of the turn's appends in turn. A Service that supports it
// (store/bolt) applies the event to the session copy at once, queues the
// write in order behind the session's earlier ones and records it here;
// a Service that does not ignores Pending and stores synchronously.
//
// Errors found before queuing (a stale copy, a missing session) are still
// AppendEvent's; Wait returns those of the queued writes (the disk failed,
// or another writer got in between), and AppendEvent returns the first of
// them already known, so a run stops at its next append.
type Pending struct {
	mu     sync.Mutex
	writes []Deferred
	err    error
}

// Deferred is one queued write: Done is closed once it is durable or has
// failed, and Err then tells which.
type Deferred struct {
	Done <-chan struct{}
	Err  func() error
}

// maxDeferred bounds the writes one Pending holds unfinished: an append
// past it waits for the oldest, so a run producing events faster than the
// disk takes them is held back instead of queuing without bound.
const maxDeferred = 64

type pendingKey struct{}

// WithPending returns ctx carrying a new Pending, and the Pending.
func WithPending(ctx context.Context) (context.Context, *Pending) {
	p := &Pending{}
	return ContextWithPending(ctx, p), p
}

// ContextWithPending returns ctx carrying p.
func ContextWithPending(ctx context.Context, p *Pending) context.Context {
	return context.WithValue(ctx, pendingKey{}, p)
}

// PendingFrom returns the Pending ctx carries, or nil.
func PendingFrom(ctx context.Context) *Pending {
	p, _ := ctx.Value(pendingKey{}).(*Pending)
	return p
}

// Add records a queued write. It first drops the writes already finished
// (keeping the first error), and past maxDeferred unfinished ones waits
// for the oldest.
func (p *Pending) Add(d Deferred) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reapLocked(false)
	for len(p.writes) >= maxDeferred {
		p.finishLocked(p.writes[0])
		p.writes = p.writes[1:]
	}
	p.writes = append(p.writes, d)
}

// Err returns the first error of the writes finished so far, without
// waiting.
func (p *Pending) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reapLocked(false)
	return p.err
}

// Wait waits for every write recorded and returns the first error.
func (p *Pending) Wait() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reapLocked(true)
	return p.err
}

// reapLocked drops finished writes from the front (all of them, waiting,
// if all is set), keeping the first error.
func (p *Pending) reapLocked(all bool) {
	n := 0
	for _, d := range p.writes {
		if !all {
			select {
			case <-d.Done:
			default:
				p.writes = p.writes[:copy(p.writes, p.writes[n:])]
				return
			}
		}
		p.finishLocked(d)
		n++
	}
	p.writes = p.writes[:0]
}

func (p *Pending) finishLocked(d Deferred) {
	<-d.Done
	if err := d.Err(); err != nil && p.err == nil {
		p.err = err
	}
}
