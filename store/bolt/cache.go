package bolt

import (
	"container/list"
	"sync"
	"time"

	"github.com/adkhost/adkhost/engine/session"
)

// DefaultSessionCacheBytes is the budget of the session cache when
// Config.SessionCacheBytes is zero.
const DefaultSessionCacheBytes = 64 << 20

// What the cache charges, beside each event's stored JSON, for an event
// and for a session: rough costs of the decoded structures and of the
// bookkeeping, so that many small events or empty sessions are bounded
// too.
const (
	cacheEventOverhead   = 256
	cacheSessionOverhead = 512
)

// sessionCache keeps the decoded events of the sessions this process read
// in full or wrote lately, least recently used dropped first, so that Get
// of such a session decodes none of its history.
//
// An entry is only a hint: Get serves it only if its revision, last update
// time and event count are those of the session's header read in Get's own
// read transaction. Revisions come from one counter for the whole file and
// a committed revision is never reused, so a match means the stored
// history is the cached one; any other writer (another SessionService, a
// delete, a delete and create again) moves the revision and the entry is
// not served. The header's newest-event pointer is not compared: settling
// staged events moves it without changing the history.
//
// The decoded events are shared by every session Get returns (as
// session.InMemoryService shares them; sessions hand events out as
// read-only); the slices are not. Entry slices are only ever appended to,
// in place: what a reader took ([:n]) is never written again.
type sessionCache struct {
	max int64

	mu   sync.Mutex
	used int64
	m    map[string]*list.Element // of *cacheEntry
	lru  list.List                // front: most recently used
}

// cacheEntry is one session's history: its events, their stored
// timestamps (unix µs, what After compares) and the header they match.
type cacheEntry struct {
	key    string
	h      header
	events []*session.Event
	ts     []int64
	size   int64
}

// newSessionCache returns a cache of about max bytes, or nil (no cache)
// if max is not positive.
func newSessionCache(max int64) *sessionCache {
	if max <= 0 {
		return nil
	}
	return &sessionCache{max: max, m: map[string]*list.Element{}}
}

// matches reports whether e holds the history of the session whose
// stored header is h.
func (e *cacheEntry) matches(h header) bool {
	return e.h.rev == h.rev && e.h.lastUpdate == h.lastUpdate && e.h.count == h.count
}

// get returns the cached events of the session key, with their
// timestamps, if they are the history h describes. The slices must not be
// modified. An entry older than h is dropped.
func (c *sessionCache) get(key string, h header) (events []*session.Event, ts []int64, ok bool) {
	if c == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	if el == nil {
		return nil, nil, false
	}
	e := el.Value.(*cacheEntry)
	if !e.matches(h) {
		// A newer entry (the session was written after the caller's read
		// transaction began) stays; an older one is useless.
		if e.h.rev < h.rev {
			c.drop(el)
		}
		return nil, nil, false
	}
	c.lru.MoveToFront(el)
	n := len(e.events)
	return e.events[:n:n], e.ts[:n:n], true
}

// put caches the whole history of the session key, whose header is h,
// taking over events and ts. jsonBytes is the size of the events' stored
// JSON. An entry of a later revision is kept instead.
func (c *sessionCache) put(key string, h header, events []*session.Event, ts []int64, jsonBytes int) {
	if c == nil {
		return
	}
	size := int64(jsonBytes) + int64(len(events))*cacheEventOverhead + cacheSessionOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		if el.Value.(*cacheEntry).h.rev >= h.rev {
			return
		}
		c.drop(el)
	}
	if size > c.max {
		return
	}
	e := &cacheEntry{key: key, h: h, events: events, ts: ts, size: size}
	c.m[key] = c.lru.PushFront(e)
	c.used += size
	c.evict()
}

// holds reports whether the cache holds the session key at revision rev:
// whether an append to it is worth decoding for the cache.
func (c *sessionCache) holds(key string, rev uint64) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	return el != nil && el.Value.(*cacheEntry).h.rev == rev
}

// append records that an append moved the session key from revision
// prev to the header h by adding ev (stored with timestamp ts and
// jsonBytes of JSON). If the cache does not hold the session at prev it
// keeps nothing: the next full Get fills it.
func (c *sessionCache) append(key string, prev uint64, h header, ev *session.Event, ts int64, jsonBytes int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[key]
	if el == nil {
		return
	}
	e := el.Value.(*cacheEntry)
	if e.h.rev != prev || e.h.count+1 != h.count {
		if e.h.rev < h.rev {
			c.drop(el)
		}
		return
	}
	add := int64(jsonBytes) + cacheEventOverhead
	if e.size+add > c.max {
		c.drop(el)
		return
	}
	// In place: readers hold e.events[:n:n] at most, and append writes
	// only at n and beyond (or into a new array).
	e.events = append(e.events, ev)
	e.ts = append(e.ts, ts)
	e.h = h
	e.size += add
	c.used += add
	c.lru.MoveToFront(el)
	c.evict()
}

// remove drops the session key.
func (c *sessionCache) remove(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		c.drop(el)
	}
}

// evict drops least recently used entries until the cache is within its
// budget. c.mu is held.
func (c *sessionCache) evict() {
	for c.used > c.max {
		c.drop(c.lru.Back())
	}
}

// drop removes el. c.mu is held.
func (c *sessionCache) drop(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.m, e.key)
	c.used -= e.size
}

// stats returns the number of sessions cached and the bytes charged.
func (c *sessionCache) stats() (sessions int, used int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.used
}

// selectEvents returns a new slice of the events selected as readEvents
// selects them (session.FilterEvents' rules, on the stored timestamps ts),
// with room for a turn's appends so the session's Commit does not copy it
// again.
func selectEvents(events []*session.Event, ts []int64, numRecent int, after time.Time) []*session.Event {
	first := 0
	if numRecent > 0 && numRecent < len(events) {
		first = len(events) - numRecent
	}
	if !after.IsZero() {
		i := len(events)
		for i > first && !time.UnixMicro(ts[i-1]).Before(after) {
			i--
		}
		first = i
	}
	out := make([]*session.Event, len(events)-first, len(events)-first+8)
	copy(out, events[first:])
	return out
}
