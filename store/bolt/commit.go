package bolt

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// committer is group commit: writes that arrive while a transaction is
// being committed wait, and the first of them then commits all that are
// waiting in one transaction (see "Group commit" in the package doc).
//
// There is no committer goroutine: the writer that finds no commit under
// way leads, running the transaction on its own goroutine; when it is done
// it acknowledges its group and hands the lead to the oldest waiting
// writer, if any. A lone writer thus commits without a goroutine switch,
// and a new group starts the moment the previous commit returns.
type committer struct {
	db       *DB
	maxGroup int

	mu         sync.Mutex
	pending    []*write
	committing bool
	// lastGroup is the size of the group committed last: writers that
	// likely append again at once.
	lastGroup int
	// gatherFor bounds how long a leader waits for them (0: no wait).
	gatherFor time.Duration

	// commits counts transactions committed (for tests and the bench).
	commits atomic.Uint64
}

// write is one change waiting to be committed.
type write struct {
	// apply makes the change in tx. It may run more than once, in a new
	// transaction each time, so it must be idempotent; it returns an error
	// made by refuse when the change is refused before anything was
	// written (the other writes of the group go on).
	apply func(tx *bbolt.Tx) error
	err   error
	// done gets true when this writer is to lead the next group, false
	// when its write is finished and err is set.
	done chan bool
}

// refusal is an error an apply function returns before writing anything:
// the transaction stays good for the rest of its group.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refuse marks err as a refusal; see write.apply.
func refuse(err error) error { return refusal{err} }

// do commits apply, grouped with concurrent writes, and returns once the
// transaction that holds it is on disk (or has failed).
func (c *committer) do(apply func(tx *bbolt.Tx) error) error {
	db := c.db
	db.life.RLock()
	defer db.life.RUnlock()
	if db.closed {
		return ErrClosed
	}
	w := &write{apply: apply, done: make(chan bool, 1)}
	c.mu.Lock()
	c.pending = append(c.pending, w)
	if c.committing {
		c.mu.Unlock()
		if lead := <-w.done; !lead {
			return w.err
		}
		c.mu.Lock()
	}
	// w leads: it is the oldest pending write.
	c.committing = true
	c.gather()
	n := min(len(c.pending), c.maxGroup)
	group := make([]*write, n)
	copy(group, c.pending)
	c.pending = append(c.pending[:0], c.pending[n:]...)
	c.mu.Unlock()

	c.run(group)

	c.mu.Lock()
	c.lastGroup = len(group)
	if len(c.pending) > 0 {
		next := c.pending[0]
		c.mu.Unlock()
		next.done <- true
	} else {
		c.committing = false
		c.mu.Unlock()
	}
	<-w.done
	return w.err
}

// gather lets the writers of the group committed last join the next one:
// they were acknowledged a moment ago and are likely preparing their next
// write. Without this, concurrent writers split into two cohorts that
// take turns, each commit carrying half of them. The leader yields its
// CPU until as many writes are pending as were just committed plus those
// that were already waiting, or gatherFor has passed. A lone writer never
// waits: the last group was itself. c.mu is held.
func (c *committer) gather() {
	want := min(c.lastGroup+len(c.pending)-1, c.maxGroup)
	if c.gatherFor <= 0 || len(c.pending) >= want {
		return
	}
	deadline := time.Now().Add(c.gatherFor)
	for len(c.pending) < want && time.Now().Before(deadline) {
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
}

// run commits group in one transaction and acknowledges each write. If
// that transaction fails (a write's own error, a panic from a damaged
// page, or the commit itself), each write is retried in a transaction of
// its own, as bbolt's DB.Batch does, so one bad write cannot fail the
// others.
func (c *committer) run(group []*write) {
	err := guard(c.db.path, func() error {
		return c.db.bdb.Update(func(tx *bbolt.Tx) error {
			changed := false
			for _, w := range group {
				w.err = w.apply(tx)
				if w.err != nil && !isRefusal(w.err) {
					return w.err
				}
				changed = changed || w.err == nil
			}
			if !changed {
				return errNoChange // every write was refused: skip the fsyncs
			}
			return nil
		})
	})
	if err == nil {
		c.commits.Add(1)
	}
	switch {
	case err == nil, err == errNoChange:
	case len(group) == 1:
		group[0].err = err
	default:
		for _, w := range group {
			w.err = guard(c.db.path, func() error { return c.db.bdb.Update(w.apply) })
			if w.err == nil {
				c.commits.Add(1)
			}
		}
	}
	for _, w := range group {
		var r refusal
		if errors.As(w.err, &r) {
			w.err = r.err
		}
		w.done <- false
	}
}

// errNoChange rolls back a transaction in which every write was refused.
var errNoChange = errors.New("no change")

func isRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}
