package bolt

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/sizedlru"
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
// of such a session decodes none of its history but the events appended
// since the last Get.
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
// in place, or replaced: what a reader took ([:n]) is never written again.
type sessionCache struct {
	max int64

	mu      sync.Mutex
	entries *sizedlru.Cache[*cacheEntry]
}

// cacheEntry is one session's history: its events, their stored
// timestamps (unix µs, what After compares) and the header they match.
//
// An append adds its event's stored JSON to raw, not a decoded event:
// decoding it there would cost every append a JSON decode (most of the
// CPU an append costs besides encoding), while a session is read far less
// often than written in a burst. The next get decodes raw into events, so
// what it serves is decoded from the very bytes the file holds, as an
// uncached Get's events are.
type cacheEntry struct {
	h header
	// events are the decoded events, oldest first; raw the stored JSON of
	// those appended after them, not decoded yet. len(events)+len(raw) is
	// len(ts).
	events []*session.Event
	raw    [][]byte
	ts     []int64
	// state is the session's own state (its stored JSON object) at
	// revision h.rev, if stateOK: the base an append merges its delta
	// into, so that it need not read it in a transaction of its own. The
	// append's transaction still compares it with the stored state.
	state   []byte
	stateOK bool
	// members is state decoded (nil: not decoded yet), so that the next
	// append merges into it without decoding state again. Never modified.
	members map[string]json.RawMessage
}

// newSessionCache returns a cache of about max bytes, or nil (no cache)
// if max is not positive.
func newSessionCache(max int64) *sessionCache {
	if max <= 0 {
		return nil
	}
	return &sessionCache{max: max, entries: sizedlru.New[*cacheEntry](max)}
}

// matches reports whether e holds the history of the session whose
// stored header is h.
func (e *cacheEntry) matches(h header) bool {
	return e.h.rev == h.rev && e.h.lastUpdate == h.lastUpdate && e.h.count == h.count
}

// get returns the cached events of the session key, with their
// timestamps, if they are the history h describes. The slices must not be
// modified. An entry older than h is dropped. Events appended since the
// last get are decoded here, outside c.mu.
func (c *sessionCache) get(key string, h header) (events []*session.Event, ts []int64, ok bool) {
	if c == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	e, ok := c.entries.Peek(key)
	if !ok {
		c.mu.Unlock()
		return nil, nil, false
	}
	if !e.matches(h) {
		// A newer entry (the session was written after the caller's read
		// transaction began) stays; an older one is useless.
		if e.h.rev < h.rev {
			c.entries.Remove(key)
		}
		c.mu.Unlock()
		return nil, nil, false
	}
	c.entries.Get(key) // marks it used
	d, n := len(e.events), len(e.ts)
	events, ts = e.events[:d:d], e.ts[:n:n]
	raw := e.raw[: n-d : n-d]
	c.mu.Unlock()
	if len(raw) == 0 {
		return events, ts, true
	}
	dec, err := decodeEvents(raw)
	if err != nil {
		// Bytes this process stored and could not decode: let the caller
		// read the file, which reports what is wrong.
		c.mu.Lock()
		if cur, _ := c.entries.Peek(key); cur == e {
			c.entries.Remove(key)
		}
		c.mu.Unlock()
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Keep the decoded events unless another get kept its own first (or
	// the entry was replaced): events only ever grow here.
	if cur, _ := c.entries.Peek(key); cur == e && len(e.events) == d {
		e.events = append(e.events, dec...)
		// A new array: concurrent gets may still read the old one.
		e.raw = slices.Clone(e.raw[len(raw):])
		return e.events[:n:n], ts, true
	}
	return slices.Concat(events, dec), ts, true
}

// put caches the whole history of the session key, whose header is h,
// taking over events and ts. jsonBytes is the size of the events' stored
// JSON; state is the session's own stored state (not shared with a
// transaction). An entry of a later revision is kept instead.
func (c *sessionCache) put(key string, h header, events []*session.Event, ts []int64, jsonBytes int, state []byte) {
	if c == nil {
		return
	}
	size := int64(jsonBytes) + int64(len(state)) + int64(len(events))*cacheEventOverhead + cacheSessionOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Peek(key); ok && e.h.rev >= h.rev {
		return
	}
	c.entries.Add(key, &cacheEntry{h: h, events: events, ts: ts, state: state, stateOK: true}, size)
}

// ownState returns the own state stored for the session key at revision
// rev, if the cache knows it, and its members if decoded (else nil).
// Neither must be modified.
func (c *sessionCache) ownState(key string, rev uint64) ([]byte, map[string]json.RawMessage, bool) {
	if c == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Peek(key)
	if !ok {
		return nil, nil, false
	}
	if e.h.rev != rev || !e.stateOK {
		return nil, nil, false
	}
	return e.state, e.members, true
}

// append records that an append moved the session key from revision
// prev to the header h by adding the event stored as data (with
// timestamp ts), and, if state is not nil, setting its own state to state
// (nil: the state did not change), whose members are members if not nil.
// data, state and members are kept: the caller must not modify them. If
// the cache does not hold the session at prev it keeps nothing: the next
// full Get fills it.
func (c *sessionCache) append(key string, prev uint64, h header, data []byte, ts int64, state []byte, members map[string]json.RawMessage) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Peek(key)
	if !ok {
		return
	}
	if e.h.rev != prev || e.h.count+1 != h.count {
		if e.h.rev < h.rev {
			c.entries.Remove(key)
		}
		return
	}
	add := int64(len(data)) + cacheEventOverhead
	if state != nil {
		// Members, when decoded, are charged as much again as the state.
		add += stateCharge(state, members) - stateCharge(e.state, e.members)
	}
	if !c.entries.Grow(key, add) {
		return // it alone would outgrow the budget: dropped
	}
	// In place: readers hold e.raw[:n:n] and e.ts[:n:n] at most, and
	// append writes only at n and beyond (or into a new array).
	e.raw = append(e.raw, data)
	e.ts = append(e.ts, ts)
	if state != nil {
		e.state, e.members = state, members
	}
	e.h = h
}

// stateCharge is what an entry's own state is charged: its JSON, twice if
// its members are decoded too.
func stateCharge(state []byte, members map[string]json.RawMessage) int64 {
	if members != nil {
		return 2 * int64(len(state))
	}
	return int64(len(state))
}

// remove drops the session key.
func (c *sessionCache) remove(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(key)
}

// stats returns the number of sessions cached and the bytes charged.
func (c *sessionCache) stats() (sessions int, used int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len(), c.entries.Used()
}

// selectEvents returns the events selected as readEvents selects them
// (session.FilterEvents' rules, on the stored timestamps ts), sharing the
// cache's array: session.New never writes into a slice it is handed, and
// the cache only appends past the lengths it has handed out.
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
	return events[first:len(events):len(events)]
}
