package contents

import (
	"container/list"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// Cache builds the contents of model requests incrementally: for each
// session (key) and Options it keeps the contents built for a prefix of the
// history, and on the next call only builds the events appended since,
// provided nothing in them can change how the prefix is rendered. Its
// results are always those of Build on the same events.
//
// A Cache is safe for concurrent use. It holds at most maxKeys sessions,
// dropping the least recently used; each session keeps at most a few
// Options variants (one per agent and branch building requests), also least
// recently used first.
type Cache struct {
	mu   sync.Mutex
	max  int
	lru  *list.List // of *cacheKey, most recently used first
	keys map[string]*list.Element
	// Entries are told apart by key and by Options compared with ==, so
	// every Options field is part of the cache key (a field that is not
	// comparable would not compile).

	stats cacheStats
	// eager adds the new events to the cached prefix on every call, for
	// tests: it exercises the reuse conditions at every boundary.
	eager bool
}

// cacheStats counts how calls were served, for tests and diagnostics.
type cacheStats struct {
	// extended: the cached prefix was reused and the new events built.
	extended atomic.Int64
	// fresh: no usable prefix (first call, other events, options) and the
	// whole history was built.
	fresh atomic.Int64
	// conflicts: a prefix was usable but the new events could change its
	// rendering, so the whole history was built again.
	conflicts atomic.Int64
}

// maxVariantsPerKey bounds the Options variants kept for one session.
const maxVariantsPerKey = 8

// maxOpenSuffix is the number of new events past which they are added to
// the cached prefix even though they look unsettled (see isSettled).
const maxOpenSuffix = 32

type cacheKey struct {
	key      string
	variants []*cacheVariant // most recently used first; guarded by Cache.mu
}

type cacheVariant struct {
	opt Options
	mu  sync.Mutex
	// Guarded by mu:
	st      *prefixState // nil: nothing cached
	scratch eventScan    // reused by every call
}

// NewCache returns a cache holding the prefixes of at most maxKeys sessions
// (at least one).
func NewCache(maxKeys int) *Cache {
	return &Cache{max: max(maxKeys, 1), lru: list.New(), keys: map[string]*list.Element{}}
}

// Build returns Build(events, opt) (the same contents, reflect.DeepEqual
// and the same JSON), reusing the contents built by earlier calls with the
// same key and opt for the part of events they saw. key identifies the
// session the events are the history of; events must be that session's
// history: append-only, with unique non-empty event IDs, and no stored
// event ever modified. With CurrentTurnOnly, or on a nil Cache, it is just
// Build.
//
// The returned contents must not be modified in place: the ones rendering
// the reused prefix are shared with the cache and with the results of other
// calls for the key. To change a content, replace the slice element with an
// edited copy. The slice itself is the caller's and has cap == len, so
// replacing, inserting or appending never writes into memory another result
// shares. The contents built for the events that are new in this call are
// the caller's (the cache keeps copies of its own, so modifying them cannot
// affect later results), but a caller cannot tell where they start, so
// treat every returned content as read-only. The bytes of inline data are
// shared with the events, as with Build.
//
// How a prefix is reused: the cache remembers, per key and Options, the
// contents of a prefix P of the history together with a summary of P (the
// function call, response and long-running ids it mentions, the call ids in
// its tool sub-branch names, whether it has id-less calls or responses,
// its compaction events and latest timestamps) and of how its build ended
// (pending transcription text, whether the latest-response rearrangement
// applied to its last event). A call whose events start with P (at least
// as many events, the same IDs at P's first and last positions) builds only
// the new events S, with Build's own pipeline, and returns P's contents
// followed by S's, when Build(P ++ S) is known to be Build(P) ++ Build(S):
//
//   - S has no rewind event (a rewind could annul events of P) and no
//     compaction event (its range could cover events of P);
//   - no function call, response or long-running id in S is also a
//     function call, response or long-running id in P: a response or
//     long-running mark in S would keep, move or merge a call of P, and a
//     call in S reusing an id of P would take over its responses or its
//     author; this covers orphan dropping, the latest and async response
//     rearrangements, interim-reply dropping and "For context" relaying of
//     responses to another agent's call;
//   - S has no id-less response if P has an id-less call, and no id-less
//     call if P has an id-less response (they pair by name or position);
//   - no tool sub-branch name (name@id) in S names a call of P and none in
//     P names a call of S (such events are dropped only when the call is
//     known);
//   - if P has a compaction event, S's timestamps are non-decreasing, not
//     before any timestamp of P and after every compaction end of P (with
//     no NaN bounds), so that ordering by timestamp keeps S after P and no
//     compaction range covers an event of S;
//   - P's build did not rearrange its events around a trailing function
//     response unless S renders no event at all (the rearrangement only
//     applies to the last event);
//   - transcription aggregation does not cross the boundary: P did not end
//     with a transcription event of the kind S starts with, and did not
//     leave text pending of a kind S aggregates.
//
// Otherwise the whole history is built again and becomes the cached
// prefix. The new events are added to the prefix once they look settled
// (every call answered, long-running calls answered by the user, no
// pending transcription or trailing rearrangement) or number maxOpenSuffix;
// until then each call builds them again, which is what makes a long-running
// call answered a few turns later cost no full rebuild.
func (c *Cache) Build(key string, events []*session.Event, opt Options) []*genai.Content {
	if c == nil || opt.CurrentTurnOnly {
		return clip(Build(events, opt))
	}
	v := c.variant(key, opt)
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.build(events, c.eager, &c.stats)
}

// Forget drops what is cached for key.
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.keys[key]; ok {
		c.lru.Remove(el)
		delete(c.keys, key)
	}
}

// Len returns the number of sessions cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

// variant returns the entry for key and opt, marking both most recently
// used and evicting beyond the bounds.
func (c *Cache) variant(key string, opt Options) *cacheVariant {
	c.mu.Lock()
	defer c.mu.Unlock()
	var k *cacheKey
	if el, ok := c.keys[key]; ok {
		c.lru.MoveToFront(el)
		k = el.Value.(*cacheKey)
	} else {
		k = &cacheKey{key: key}
		c.keys[key] = c.lru.PushFront(k)
		for len(c.keys) > c.max {
			last := c.lru.Back()
			c.lru.Remove(last)
			delete(c.keys, last.Value.(*cacheKey).key)
		}
	}
	for i, v := range k.variants {
		if v.opt == opt {
			copy(k.variants[1:i+1], k.variants[:i])
			k.variants[0] = v
			return v
		}
	}
	v := &cacheVariant{opt: opt}
	if len(k.variants) < maxVariantsPerKey {
		k.variants = append(k.variants, nil)
	}
	copy(k.variants[1:], k.variants)
	k.variants[0] = v
	return v
}

// build is Cache.Build for the variant, with v.mu held. eager caches every
// suffix, settled or not.
func (v *cacheVariant) build(events []*session.Event, eager bool, stats *cacheStats) []*genai.Content {
	opt := v.opt
	st := v.st
	if st != nil && !st.isPrefixOf(events) {
		st = nil
	}
	if st == nil {
		st = &prefixState{}
	}
	suffix := events[st.n:]
	if len(suffix) == 0 {
		stats.extended.Add(1)
		v.st = st
		return append(make([]*genai.Content, 0, len(st.contents)), st.contents...)
	}
	sc := &v.scratch
	sc.scan(suffix)
	if st.n == 0 || st.canPrecede(sc) {
		var info buildInfo
		built := buildContentsInfo(suffix, opt, opt.IncludeThoughtsFromOtherAgents, &info)
		if st.n == 0 || st.canPrecedeBuild(&info) {
			if st.n == 0 {
				stats.fresh.Add(1)
			} else {
				stats.extended.Add(1)
			}
			out := make([]*genai.Content, len(st.contents)+len(built))
			copy(out, st.contents)
			copy(out[len(st.contents):], built)
			if eager || isSettled(sc, &info) || len(suffix) >= maxOpenSuffix {
				v.st = st.extend(events, sc, &info, built)
			} else {
				v.st = st
			}
			return out
		}
	}
	// The new events could change how the prefix renders: build everything
	// and cache it all.
	stats.conflicts.Add(1)
	var info buildInfo
	built := buildContentsInfo(events, opt, opt.IncludeThoughtsFromOtherAgents, &info)
	sc.scan(events)
	v.st = (&prefixState{}).extend(events, sc, &info, built)
	return clip(built)
}

// clip returns s with its capacity cut to its length.
func clip(s []*genai.Content) []*genai.Content { return s[:len(s):len(s)] }

// prefixState is the cached build of a prefix of a session's history.
// Its contents are never handed out as a slice, only copied into results,
// so extend can append to them.
type prefixState struct {
	n                int    // events in the prefix
	firstID, lastID  string // IDs of its first and last events
	contents         []*genai.Content
	ids              map[string]struct{} // function call, response and long-running ids
	branchIDs        map[string]struct{} // call ids named by tool sub-branches
	idlessCall       bool
	idlessResponse   bool
	hasCompaction    bool
	compactionNaN    bool
	maxTS            int64 // latest event timestamp, µs
	maxCompactionEnd int64 // latest non-NaN compaction end, µs

	// How the prefix's build ended (see buildInfo).
	trailingRearranged bool
	accIn, accOut      bool
	lastIn, lastOut    bool
}

// isPrefixOf reports whether the state's prefix starts events.
func (st *prefixState) isPrefixOf(events []*session.Event) bool {
	return st.n <= len(events) &&
		(st.n == 0 || events[0].ID == st.firstID && events[st.n-1].ID == st.lastID)
}

// canPrecede reports whether events with summary sc can follow the prefix
// without changing how it renders, as far as the events themselves tell
// (see Cache.Build).
func (st *prefixState) canPrecede(sc *eventScan) bool {
	if sc.rewind || sc.compaction {
		return false
	}
	for _, id := range sc.ids {
		if _, ok := st.ids[id]; ok {
			return false
		}
	}
	for _, id := range sc.branchIDs {
		if _, ok := st.ids[id]; ok {
			return false
		}
	}
	if len(st.branchIDs) > 0 {
		for _, id := range sc.callIDs {
			if _, ok := st.branchIDs[id]; ok {
				return false
			}
		}
	}
	if sc.idlessResponse && st.idlessCall || sc.idlessCall && st.idlessResponse {
		return false
	}
	if st.hasCompaction {
		if st.compactionNaN || !sc.ordered || sc.firstTS < st.maxTS || sc.firstTS <= st.maxCompactionEnd {
			return false
		}
	}
	return true
}

// canPrecedeBuild reports whether the new events' build, described by
// info, can follow the prefix's (see Cache.Build).
func (st *prefixState) canPrecedeBuild(info *buildInfo) bool {
	switch {
	case st.trailingRearranged && !info.droppedEmpty,
		st.accIn && info.inCase,
		st.accOut && info.outCase,
		st.lastIn && info.firstIn,
		st.lastOut && info.firstOut:
		return false
	}
	return true
}

// extend returns the state for the prefix events, which are st's prefix
// followed by events summarised by sc whose build, described by info, gave
// built. built is copied: the caller owns it. st is modified.
func (st *prefixState) extend(events []*session.Event, sc *eventScan, info *buildInfo, built []*genai.Content) *prefixState {
	n := len(events)
	if n == 0 || events[0].ID == "" || events[n-1].ID == "" {
		return nil
	}
	if st.n == 0 {
		st.firstID = events[0].ID
	}
	st.n, st.lastID = n, events[n-1].ID
	for _, c := range built {
		st.contents = append(st.contents, copyContent(c, false))
	}
	if st.ids == nil {
		st.ids = make(map[string]struct{}, len(sc.ids))
	}
	for _, id := range sc.ids {
		st.ids[id] = struct{}{}
	}
	for _, id := range sc.branchIDs {
		if st.branchIDs == nil {
			st.branchIDs = map[string]struct{}{}
		}
		st.branchIDs[id] = struct{}{}
	}
	st.idlessCall = st.idlessCall || sc.idlessCall
	st.idlessResponse = st.idlessResponse || sc.idlessResponse
	st.hasCompaction = st.hasCompaction || sc.compaction
	st.compactionNaN = st.compactionNaN || sc.compactionNaN
	st.maxTS = max(st.maxTS, sc.maxTS)
	st.maxCompactionEnd = max(st.maxCompactionEnd, sc.maxCompactionEnd)

	if !info.droppedEmpty {
		st.trailingRearranged = info.trailingRearranged
	}
	st.accIn = st.accIn || info.accIn
	st.accOut = st.accOut || info.accOut
	if !info.toProcessEmpty {
		st.lastIn, st.lastOut = info.lastIn, info.lastOut
	}
	return st
}

// isSettled guesses whether later events will leave the rendering of these
// ones alone: every call with an id is answered, long-running ones by the
// user, every id-less call has an id-less response of its name, and the
// build ended with no pending transcription or trailing rearrangement. It
// only decides when events join the cached prefix; correctness never
// depends on it.
func isSettled(sc *eventScan, info *buildInfo) bool {
	if info.trailingRearranged || info.accIn || info.accOut || info.lastIn || info.lastOut {
		return false
	}
	for _, id := range sc.callIDs {
		if !slicesContains(sc.responseIDs, id) {
			return false
		}
	}
	for _, id := range sc.longRunningIDs {
		if !slicesContains(sc.userResponseIDs, id) {
			return false
		}
	}
	for _, name := range sc.idlessCallNames {
		if !slicesContains(sc.idlessResponseNames, name) {
			return false
		}
	}
	return true
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// eventScan summarises events for the reuse conditions.
type eventScan struct {
	rewind, compaction bool
	// ids: every non-empty function call, response and long-running id,
	// including those in compacted contents.
	ids []string
	// callIDs, responseIDs, longRunningIDs: the non-empty ids of calls,
	// responses and long-running marks in the events' contents;
	// userResponseIDs those of responses authored by the user.
	callIDs, responseIDs, longRunningIDs, userResponseIDs []string
	// branchIDs: the ids after '@' in branch segments.
	branchIDs                            []string
	idlessCall, idlessResponse           bool
	idlessCallNames, idlessResponseNames []string
	// ordered: timestamps never decrease; firstTS is the first one.
	ordered        bool
	firstTS, maxTS int64
	compactionNaN  bool
	// maxCompactionEnd: the latest non-NaN compaction end, µs.
	maxCompactionEnd int64
}

// scan summarises events into sc, reusing its slices.
func (sc *eventScan) scan(events []*session.Event) {
	*sc = eventScan{
		ids:                 sc.ids[:0],
		callIDs:             sc.callIDs[:0],
		responseIDs:         sc.responseIDs[:0],
		longRunningIDs:      sc.longRunningIDs[:0],
		userResponseIDs:     sc.userResponseIDs[:0],
		branchIDs:           sc.branchIDs[:0],
		idlessCallNames:     sc.idlessCallNames[:0],
		idlessResponseNames: sc.idlessResponseNames[:0],
		ordered:             true,
		maxTS:               math.MinInt64,
		maxCompactionEnd:    math.MinInt64,
	}
	prev := int64(math.MinInt64)
	for i, e := range events {
		ts := timeMicros(e.Timestamp)
		if i == 0 {
			sc.firstTS = ts
		}
		if ts < prev {
			sc.ordered = false
		}
		prev = ts
		sc.maxTS = max(sc.maxTS, ts)
		if e.Actions.RewindBeforeInvocationID != "" {
			sc.rewind = true
		}
		if c := e.Actions.Compaction; c != nil {
			sc.compaction = true
			if math.IsNaN(c.StartTimestamp) || math.IsNaN(c.EndTimestamp) {
				sc.compactionNaN = true
			} else {
				sc.maxCompactionEnd = max(sc.maxCompactionEnd, micros(c.EndTimestamp))
			}
			if c.CompactedContent != nil {
				sc.scanParts(c.CompactedContent.Parts, false, false)
			}
		}
		sc.scanParts(parts(e), true, e.Author == "user")
		for _, id := range e.LongRunningToolIDs {
			if id != "" {
				sc.ids = append(sc.ids, id)
				sc.longRunningIDs = append(sc.longRunningIDs, id)
			}
		}
		if strings.IndexByte(e.Branch, '@') >= 0 {
			for seg := range strings.SplitSeq(e.Branch, ".") {
				if at := strings.LastIndexByte(seg, '@'); at >= 0 && at+1 < len(seg) {
					sc.branchIDs = append(sc.branchIDs, seg[at+1:])
				}
			}
		}
	}
}

// scanParts records the function calls and responses of ps; own tells
// whether they are the event's own (not compacted) parts, byUser whether
// the user authored them.
func (sc *eventScan) scanParts(ps []*genai.Part, own, byUser bool) {
	for _, p := range ps {
		if p == nil {
			continue
		}
		if fc := p.FunctionCall; fc != nil {
			if fc.ID == "" {
				sc.idlessCall = true
				if own {
					sc.idlessCallNames = append(sc.idlessCallNames, fc.Name)
				}
			} else {
				sc.ids = append(sc.ids, fc.ID)
				if own {
					sc.callIDs = append(sc.callIDs, fc.ID)
				}
			}
		}
		if fr := p.FunctionResponse; fr != nil {
			if fr.ID == "" {
				sc.idlessResponse = true
				if own {
					sc.idlessResponseNames = append(sc.idlessResponseNames, fr.Name)
				}
			} else {
				sc.ids = append(sc.ids, fr.ID)
				if own {
					sc.responseIDs = append(sc.responseIDs, fr.ID)
					if byUser {
						sc.userResponseIDs = append(sc.userResponseIDs, fr.ID)
					}
				}
			}
		}
	}
}
