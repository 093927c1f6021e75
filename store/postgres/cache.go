package postgres

import (
	"sync"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/sizedlru"
)

// DefaultSessionCacheBytes is the session cache's budget when
// Config.SessionCacheBytes is zero.
const DefaultSessionCacheBytes = 64 << 20

// What the cache charges beside each event's stored JSON, for an event and
// for a session, so that many small events or empty sessions are bounded too.
const (
	cacheEventOverhead   = 256
	cacheSessionOverhead = 512
)

// sessionCache keeps the decoded history of the sessions this replica read
// or wrote lately, least recently used dropped first, so that Get reads
// and decodes only the events stored since (by this replica, another one
// or google-adk), not the whole history every turn.
//
// An entry is only a hint, checked against the database in Get's own
// snapshot: Get reads the events after the entry's last one (timestamp
// and id, the order google-adk reads them in) and serves entry plus those
// only if their number is the session's event count and the session's
// create_time is the entry's. An event stored before the entry's last one
// (another writer's clock behind ours), a deleted event or a session
// deleted and created again all fail that check, and Get reads everything.
//
// Decoded events are shared by every session Get returns (sessions hand
// them out read-only, as session.InMemoryService does); entry slices are
// only appended to past what a reader took, or replaced.
type sessionCache struct {
	mu      sync.Mutex
	entries *sizedlru.Cache[*cacheEntry]
}

// cacheEntry is one session's history at revision rev: its events in
// stored order with their stored timestamps (what After compares), and
// the events appended through this replica since, encoded, not decoded
// yet (decoding at append time would cost every append a decode; the next
// Get decodes them from the bytes the stored event was made from).
type cacheEntry struct {
	created time.Time
	rev     uint64
	events  []*session.Event
	ts      []time.Time
	pending []storedEvent
	// jsonBytes is the stored size of the events and pending ones.
	jsonBytes int
}

// storedEvent is an events row: its event_data, or (camel) the event's
// own JSON that AppendEvent made event_data from, which decodes in one
// pass to the same event (keeping the order of dict keys, which jsonb
// does not).
type storedEvent struct {
	id, invocation string
	ts             time.Time
	data           []byte
	camel          bool
}

// cached is a consistent copy of an entry's slices, taken under the lock.
type cached struct {
	created   time.Time
	events    []*session.Event
	ts        []time.Time
	pending   []storedEvent
	jsonBytes int
}

// last is the stored timestamp and id of the entry's newest event.
func (c *cached) last() (time.Time, string, bool) {
	if n := len(c.pending); n > 0 {
		return c.pending[n-1].ts, c.pending[n-1].id, true
	}
	if n := len(c.events); n > 0 {
		return c.ts[n-1], c.events[n-1].ID, true
	}
	return time.Time{}, "", false
}

func (c *cached) count() int { return len(c.events) + len(c.pending) }

func newSessionCache(max int64) *sessionCache {
	if max <= 0 {
		return nil
	}
	return &sessionCache{entries: sizedlru.New[*cacheEntry](max)}
}

// get returns what the cache holds of the session key.
func (c *sessionCache) get(key string) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(key)
	if !ok {
		return cached{}, false
	}
	n, p := len(e.events), len(e.pending)
	return cached{created: e.created, events: e.events[:n:n], ts: e.ts[:n:n], pending: e.pending[:p:p], jsonBytes: e.jsonBytes}, true
}

// put caches the whole history of the session key at revision rev (all
// decoded), taking over events and ts; jsonBytes is their stored size.
// An entry of a later revision is kept instead.
func (c *sessionCache) put(key string, created time.Time, rev uint64, events []*session.Event, ts []time.Time, jsonBytes int) {
	if c == nil {
		return
	}
	size := int64(jsonBytes) + int64(len(events))*cacheEventOverhead + cacheSessionOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Peek(key); ok && e.rev > rev {
		return
	}
	c.entries.Add(key, &cacheEntry{created: created, rev: rev, events: events, ts: ts, jsonBytes: jsonBytes}, size)
}

// append records that an append moved the session key from revision prev
// to rev by storing ev. If the cache does not hold the session at prev, or
// ev does not sort after its newest event by timestamp (a tie would need
// PostgreSQL's collation to order the ids), the entry is dropped: the
// next Get reads the history.
func (c *sessionCache) append(key string, prev, rev uint64, ev storedEvent) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Peek(key)
	if !ok {
		return
	}
	snap := cached{events: e.events, ts: e.ts, pending: e.pending}
	lastTS, _, some := snap.last()
	if e.rev != prev || (some && !ev.ts.After(lastTS)) || !c.entries.Grow(key, int64(len(ev.data))+cacheEventOverhead) {
		c.entries.Remove(key)
		return
	}
	// In place: readers hold pending[:p:p] at most.
	e.pending = append(e.pending, ev)
	e.jsonBytes += len(ev.data)
	e.rev = rev
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

// selectEvents applies GetRequest's NumRecentEvents and After to a whole
// history in stored order, as Get's query does on the stored timestamps.
func selectEvents(events []*session.Event, ts []time.Time, numRecent int, after time.Time) []*session.Event {
	first := 0
	if numRecent > 0 && numRecent < len(events) {
		first = len(events) - numRecent
	}
	if !after.IsZero() {
		after = micros(after)
		i := len(events)
		for i > first && !ts[i-1].Before(after) {
			i--
		}
		first = i
	}
	return events[first:len(events):len(events)]
}
