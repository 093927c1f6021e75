package bolt

import (
	"errors"
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
	// gatherFor bounds how long a leader waits for the writers it just
	// acknowledged to announce their next write (0: no wait);
	// gatherMax how long it waits for announced writes (see gather).
	gatherFor, gatherMax time.Duration

	mu         sync.Mutex
	pending    []*write
	committing bool
	// lastGroup is the size of the group committed last: writers that
	// likely append again at once; lastTook is how long it took.
	lastGroup int
	lastTook  time.Duration
	// preparing counts writes announced (announce) and not yet pending:
	// their writers are encoding them and will submit within microseconds.
	preparing int
	// gathering is set while a leader waits in gather: arrivals then
	// signal wake.
	gathering bool
	wake      chan struct{}

	// commits counts transactions committed (for tests and the bench).
	commits atomic.Uint64
}

// ticket is a write announced to the committer before it is encoded, so
// that a leader gathering a group waits for it rather than committing
// without it. submit or cancel ends it.
type ticket struct {
	c    *committer
	done bool
}

// announce tells c a write is coming. The caller must call cancel (a
// no-op once the write was submitted) on every path, and must not hold
// anything a pending write may wait for (the group waits for it).
func (c *committer) announce() *ticket {
	c.mu.Lock()
	c.preparing++
	c.mu.Unlock()
	return &ticket{c: c}
}

// cancel withdraws an announced write that will not be submitted. Only
// the announcing goroutine uses t, so done is read without the lock.
func (t *ticket) cancel() {
	if t.done {
		return
	}
	c := t.c
	c.mu.Lock()
	t.end()
	c.mu.Unlock()
}

// end counts the ticket's write as no longer being prepared. c.mu is held.
func (t *ticket) end() {
	if t == nil || t.done {
		return
	}
	t.done = true
	t.c.preparing--
	t.c.signal()
}

// signal wakes a gathering leader. c.mu is held.
func (c *committer) signal() {
	if !c.gathering {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// write is one change waiting to be committed.
type write struct {
	// apply makes the change in tx. It may run more than once, in a new
	// transaction each time, so it must be idempotent; it returns an error
	// made by refuse when the change is refused before anything was
	// written (the other writes of the group go on). alone is true when
	// the transaction holds this write only.
	apply func(tx *bbolt.Tx, alone bool) error
	// finish, if set, runs on the committing goroutine once err is final
	// (nil: on disk), before the writer hears of it; writes of one
	// session finish in the order they were submitted.
	finish func(err error)
	err    error
	// done gets true when this writer is to lead the next group, false
	// when its write is finished and err is set. A queued write (see
	// queue) has no done: its writer is not waiting, and fin is closed
	// instead.
	done chan bool
	fin  chan struct{}
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
	return c.submit(nil, func(tx *bbolt.Tx, _ bool) error { return apply(tx) }, nil)
}

// submit is do for a write announced with t (nil: not announced), whose
// apply is told whether it is alone in its transaction; finish is the
// write's (see write.finish).
func (c *committer) submit(t *ticket, apply func(tx *bbolt.Tx, alone bool) error, finish func(error)) error {
	if err := c.begin(t); err != nil {
		return err
	}
	defer c.db.life.RUnlock()
	w := &write{apply: apply, finish: finish, done: make(chan bool, 1)}
	c.add(t, w)
	if c.committing {
		c.mu.Unlock()
		if lead := <-w.done; !lead {
			return w.err
		}
		c.mu.Lock()
	}
	// w leads: it is the oldest pending write. It commits one group and
	// returns; queued writes behind it get a leader of their own.
	c.committing = true
	c.lead(true)
	<-w.done
	return w.err
}

// begin takes the DB's life for reading, for the caller to release; once
// the DB is closed it fails with ErrClosed and withdraws t.
func (c *committer) begin(t *ticket) error {
	c.db.life.RLock()
	if c.db.closed {
		c.db.life.RUnlock()
		if t != nil {
			t.cancel()
		}
		return ErrClosed
	}
	return nil
}

// add puts w, the write announced with t, in line and returns with c.mu
// held.
func (c *committer) add(t *ticket, w *write) {
	c.mu.Lock()
	c.pending = append(c.pending, w)
	t.end()
	c.signal()
}

// queue is submit without waiting: it returns at once with the write in
// line, which is committed in order behind the writes submitted or queued
// before it and after them all. fin is closed once the write's err is
// final. The DB's Close waits for queued writes.
func (c *committer) queue(t *ticket, apply func(tx *bbolt.Tx, alone bool) error, finish func(error)) (*write, error) {
	if err := c.begin(t); err != nil {
		return nil, err
	}
	defer c.db.life.RUnlock()
	w := &write{apply: apply, finish: finish, fin: make(chan struct{})}
	c.db.queued.Add(1)
	c.add(t, w)
	if c.committing {
		c.mu.Unlock()
		return w, nil
	}
	c.committing = true
	c.leadQueued()
	c.mu.Unlock()
	return w, nil
}

// leadQueued passes the lead to a new goroutine, for queued writes whose
// writers are not waiting to lead; c.committing stays set.
func (c *committer) leadQueued() {
	go func() {
		c.mu.Lock()
		c.lead(false)
	}()
}

// lead commits groups from the head of pending; c.mu is held on entry and
// released on return, and c.committing is set. once is set when the
// caller is a waiting writer, whose write is in the first group: it leads
// that group only. Then the lead passes to the next waiting writer, or to
// a new goroutine when the next write is queued (its writer is not
// waiting), which leads while queued writes come first.
func (c *committer) lead(once bool) {
	for {
		c.gather()
		n := min(len(c.pending), c.maxGroup)
		group := make([]*write, n)
		copy(group, c.pending)
		c.pending = append(c.pending[:0], c.pending[n:]...)
		c.mu.Unlock()

		began := time.Now()
		c.run(group)
		took := time.Since(began)

		c.mu.Lock()
		c.lastGroup, c.lastTook = len(group), took
		if len(c.pending) == 0 {
			c.committing = false
			c.mu.Unlock()
			return
		}
		if next := c.pending[0]; next.fin == nil {
			c.mu.Unlock()
			next.done <- true
			return
		}
		if once {
			c.leadQueued()
			c.mu.Unlock()
			return
		}
	}
}

// gather holds the group open for the writes about to arrive, so that
// concurrent writers share one transaction instead of splitting into
// cohorts that take turns, each commit carrying part of them. It waits,
// blocked (the CPU goes to the writers it waits for), while
//
//   - writes are announced but not yet submitted: their writers are
//     encoding them (up to gatherMax), or
//   - fewer writes are pending than the group committed last: those
//     writers were acknowledged a moment ago and are likely about to
//     announce their next write. This waits up to gatherFor, or up to as
//     long as the last commit took if that is longer (at most
//     gatherMax): on a loaded machine the writers may need that long to
//     get a CPU, and a commit carrying all of them is worth a wait as
//     long as a commit.
//
// A full group (maxGroup) never waits, nor does a lone writer: its last
// group was itself and nothing else is announced. c.mu is held.
func (c *committer) gather() {
	if c.gatherFor <= 0 {
		return
	}
	var start time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for len(c.pending) < c.maxGroup {
		var limit time.Duration
		switch {
		case c.preparing > 0:
			limit = c.gatherMax
		case len(c.pending) < c.lastGroup:
			limit = min(max(c.gatherFor, c.lastTook), c.gatherMax)
		default:
			return
		}
		if start.IsZero() {
			start = time.Now()
		}
		left := limit - time.Since(start)
		if left <= 0 {
			return
		}
		c.gathering = true
		c.mu.Unlock()
		// One timer for the whole wait: each arrival wakes this loop.
		if timer == nil {
			timer = time.NewTimer(left)
		} else {
			timer.Reset(left)
		}
		select {
		case <-c.wake:
		case <-timer.C:
		}
		c.mu.Lock()
		c.gathering = false
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
				w.err = w.apply(tx, len(group) == 1)
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
			w.err = guard(c.db.path, func() error {
				return c.db.bdb.Update(func(tx *bbolt.Tx) error { return w.apply(tx, true) })
			})
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
		if w.finish != nil {
			w.finish(w.err)
		}
		if w.fin != nil {
			close(w.fin)
			c.db.queued.Done()
			continue
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
