package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrMemoryBudget: a new instance needed more guest memory than the
// runtime's MemoryBudget had left, even after closing idle instances, and
// none came free within AdmissionWait. Nothing ran.
var ErrMemoryBudget = errors.New("guest memory budget spent")

// memBudget is the runtime-wide bound on guest memory: every live instance
// holds a reservation of its pool's MemoryPages (the most its linear
// memory can grow to), taken before the instance is made and given back
// when it is closed. So the memory of all instances together never passes
// the budget, whatever the apps' limits multiply to.
type memBudget struct {
	total int64 // 0: unlimited

	mu      sync.Mutex
	used    int64
	freed   chan struct{} // closed and replaced on every release
	waiting int
}

func newMemBudget(total int64) *memBudget {
	return &memBudget{total: total, freed: make(chan struct{})}
}

// reserve takes n bytes, waiting up to wait (or ctx) for them; evict is
// asked first to close idle instances anywhere in the runtime.
func (b *memBudget) reserve(ctx context.Context, n int64, wait time.Duration, evict func(need int64)) error {
	if b.total <= 0 { // unlimited: only count
		b.mu.Lock()
		b.used += n
		b.mu.Unlock()
		return nil
	}
	if n > b.total {
		return fmt.Errorf("%w: an instance may need %d MiB, more than the whole budget of %d MiB", ErrMemoryBudget, n>>20, b.total>>20)
	}
	var timer <-chan time.Time
	evicted := false
	for {
		b.mu.Lock()
		if b.used+n <= b.total {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		need, freed := b.used+n-b.total, b.freed
		b.mu.Unlock()
		if !evicted {
			evicted = true
			evict(need)
			continue
		}
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-freed:
		case <-timer:
			used, total := b.stats()
			return fmt.Errorf("%w: %d of %d MiB reserved by live instances, %d MiB more needed; waited %s (raise the budget, lower the apps' memory_pages or max_instances)",
				ErrMemoryBudget, used>>20, total>>20, n>>20, wait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives n bytes back and wakes the waiters.
func (b *memBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	if b.total <= 0 {
		b.mu.Unlock()
		return
	}
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

func (b *memBudget) stats() (used, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.total
}

// janitor closes the instances idle for longer than the runtime's
// IdleTimeout, so a burst's memory goes back once it is over.
func (r *Runtime) janitor(every, idle time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if freed := r.closeIdle(idle, 0); freed >= 64<<20 {
				// Closed instances' memories are garbage now: return them
				// to the OS instead of waiting for the scavenger.
				debug.FreeOSMemory()
			}
		}
	}
}

// closeIdle closes the idle instances of every pool that have been idle for
// at least olderThan, stopping once need bytes of reservations are freed
// (need 0: all of them). It returns the bytes freed.
func (r *Runtime) closeIdle(olderThan time.Duration, need int64) int64 {
	r.mu.Lock()
	pools := make([]*Pool, 0, len(r.pools))
	for _, p := range r.pools {
		pools = append(pools, p)
	}
	r.mu.Unlock()
	var freed int64
	now := time.Now()
	for _, p := range pools {
		freed += p.closeIdle(now, olderThan, func() bool { return need > 0 && freed >= need })
		if need > 0 && freed >= need {
			break
		}
	}
	return freed
}

// MemoryStats is the runtime's guest memory accounting.
type MemoryStats struct {
	// Budget is the runtime's MemoryBudget (0: unlimited); Reserved what
	// live instances hold of it.
	Budget, Reserved int64
	// Instances live, Idle among them, in every pool.
	Instances, Idle int
	// LogDropped counts guest log lines dropped by the log limits.
	LogDropped uint64
}

// MemoryStats returns the runtime's guest memory accounting.
func (r *Runtime) MemoryStats() MemoryStats {
	used, total := r.budget.stats()
	st := MemoryStats{Budget: total, Reserved: used, LogDropped: r.logDropped.Load()}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pools {
		s := p.Stats()
		st.Instances += s.Live
		st.Idle += s.Idle
	}
	return st
}
