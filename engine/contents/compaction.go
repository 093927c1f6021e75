package contents

import (
	"math"
	"sort"
	"time"

	"github.com/adkhost/adkhost/engine/session"
)

// compactionRange is a compaction event's index and timestamp bounds.
type compactionRange struct {
	index      int
	start, end float64
}

// compactionRanges returns the compaction ranges not contained in another
// one, in event order (google-adk _get_compaction_ranges): of identical
// ranges the latest event wins; NaN bounds are always kept.
func compactionRanges(events []*session.Event) []compactionRange {
	var ranges, comparable []compactionRange
	retained := map[int]bool{}
	for i, e := range events {
		c := e.Actions.Compaction
		if c == nil || c.CompactedContent == nil {
			continue
		}
		r := compactionRange{i, c.StartTimestamp, c.EndTimestamp}
		ranges = append(ranges, r)
		if math.IsNaN(r.start) || math.IsNaN(r.end) {
			retained[i] = true
		} else {
			comparable = append(comparable, r)
		}
	}
	sort.Slice(comparable, func(i, j int) bool {
		a, b := comparable[i], comparable[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.index > b.index
	})
	maxEnd, haveMax := 0.0, false
	for _, r := range comparable {
		if !haveMax || r.end > maxEnd {
			retained[r.index] = true
			maxEnd, haveMax = r.end, true
		}
	}
	out := ranges[:0]
	for _, r := range ranges {
		if retained[r.index] {
			out = append(out, r)
		}
	}
	return out
}

// micros is a float timestamp in whole microseconds, rounded as
// session.FloatToTime rounds it, so that compaction bounds and event
// timestamps (stored as time.Time) compare exactly as the floats they came
// from did.
func micros(f float64) int64 {
	return timeMicros(session.FloatToTime(f))
}

// timeMicros is an event time in microseconds; the zero time is 0, as
// session.TimeToFloat makes it.
func timeMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// processCompactionEvents replaces compacted events by their summaries
// (google-adk _process_compaction_events): each retained compaction becomes
// an event authored by agentName (or "model") carrying the summary at the
// compaction's end timestamp; events whose timestamp falls in any retained
// range are dropped; the rest is ordered by timestamp, ties by position.
func processCompactionEvents(events []*session.Event, agentName string) []*session.Event {
	ranges := compactionRanges(events)
	retained := make(map[int]bool, len(ranges))
	type span struct{ start, end int64 }
	var spans []span
	for _, r := range ranges {
		retained[r.index] = true
		if r.start <= r.end { // false for NaN
			spans = append(spans, span{micros(r.start), micros(r.end)})
		}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end < spans[j].end
	})
	var coverage []span
	for _, s := range spans {
		if n := len(coverage); n > 0 && s.start <= coverage[n-1].end {
			coverage[n-1].end = max(coverage[n-1].end, s.end)
		} else {
			coverage = append(coverage, s)
		}
	}
	compacted := func(ts int64) bool {
		i := sort.Search(len(coverage), func(i int) bool { return coverage[i].start > ts }) - 1
		return i >= 0 && ts <= coverage[i].end
	}

	type item struct {
		ts    int64
		index int
		event *session.Event
	}
	items := make([]item, 0, len(events))
	author := agentName
	if author == "" {
		author = "model"
	}
	for i, e := range events {
		c := e.Actions.Compaction
		if c == nil || !retained[i] || c.CompactedContent == nil {
			continue
		}
		ts := int64(math.MaxInt64) // NaN end: unordered in google-adk; placed last
		if !math.IsNaN(c.EndTimestamp) {
			ts = micros(c.EndTimestamp)
		}
		summary := &session.Event{
			InvocationID: e.InvocationID,
			Author:       author,
			Branch:       e.Branch,
			Actions:      e.Actions,
			Timestamp:    e.Timestamp,
		}
		if !math.IsNaN(c.EndTimestamp) {
			summary.Timestamp = session.FloatToTime(c.EndTimestamp)
		}
		summary.Content = c.CompactedContent
		items = append(items, item{ts, i, summary})
	}
	for i, e := range events {
		if e.Actions.Compaction != nil {
			continue
		}
		ts := timeMicros(e.Timestamp)
		if compacted(ts) {
			continue
		}
		items = append(items, item{ts, i, e})
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].ts != items[j].ts {
			return items[i].ts < items[j].ts
		}
		return items[i].index < items[j].index
	})
	out := make([]*session.Event, len(items))
	for i, it := range items {
		out[i] = it.event
	}
	return out
}

// recoverCompactedFunctionCalls restores function-call events that
// compaction removed while a response to them survived (google-adk
// _recover_compacted_function_calls). A response belongs to the latest
// earlier call with its id in source order; the whole call event is put
// back before the first surviving response to it, followed by the latest
// compacted-away responses to its other calls. events and source must hold
// the same event pointers; ownership is matched by identity.
func recoverCompactedFunctionCalls(events, source []*session.Event) []*session.Event {
	anyResponse := false
	for _, e := range events {
		if hasFunctionResponses(e) {
			anyResponse = true
			break
		}
	}
	if !anyResponse {
		return events
	}

	type callKey struct {
		event *session.Event
		id    string
	}
	present := make(map[*session.Event]bool, len(events))
	for _, e := range events {
		present[e] = true
	}
	latestCall := map[string]*session.Event{}
	callByResponse := map[callKey]*session.Event{} // (response event, id) -> call event
	responseByCall := map[callKey]*session.Event{} // (call event, id) -> latest response event
	surviving := map[callKey]bool{}
	for _, e := range source {
		for fc := range functionCalls(e) {
			if fc.ID != "" {
				latestCall[fc.ID] = e
			}
		}
		for fr := range functionResponses(e) {
			if fr.ID == "" {
				continue
			}
			call := latestCall[fr.ID]
			if call == nil {
				continue
			}
			callByResponse[callKey{e, fr.ID}] = call
			k := callKey{call, fr.ID}
			if present[e] {
				surviving[k] = true
			}
			if prev := responseByCall[k]; prev == nil || !e.Timestamp.Before(prev.Timestamp) {
				responseByCall[k] = e
			}
		}
	}

	var out []*session.Event
	reinjectedCalls := map[*session.Event]bool{}
	reinjectedResponses := map[*session.Event]bool{}
	for _, e := range events {
		for fr := range functionResponses(e) {
			if fr.ID == "" {
				continue
			}
			call := callByResponse[callKey{e, fr.ID}]
			if call == nil || present[call] || reinjectedCalls[call] {
				continue
			}
			out = append(out, call)
			reinjectedCalls[call] = true
			for sib := range functionCalls(call) {
				if sib.ID == "" {
					continue
				}
				k := callKey{call, sib.ID}
				if surviving[k] {
					continue
				}
				if resp := responseByCall[k]; resp != nil && !reinjectedResponses[resp] {
					out = append(out, resp)
					reinjectedResponses[resp] = true
				}
			}
		}
		out = append(out, e)
	}
	if len(reinjectedCalls) == 0 {
		return events
	}
	return out
}

// ApplyRewinds returns the events that survive every rewind in events
// (google-adk _apply_rewinds), for callers outside the package that must
// see the history as request building does. events is not modified.
func ApplyRewinds(events []*session.Event) []*session.Event {
	return applyRewinds(events)
}

// ProcessCompactionEvents returns events with compaction applied as request
// building applies it (google-adk _process_compaction_events): every
// retained compaction becomes a summary event authored by agentName ("model"
// when empty) at its end timestamp, and the events its range covers are
// dropped. events is not modified.
func ProcessCompactionEvents(events []*session.Event, agentName string) []*session.Event {
	return processCompactionEvents(events, agentName)
}

// LatestCompaction returns the latest compaction event, in stream order,
// that no other compaction's range contains (google-adk
// _latest_compaction_event), or nil when there is none.
func LatestCompaction(events []*session.Event) *session.Event {
	r := compactionRanges(events)
	if len(r) == 0 {
		return nil
	}
	return events[r[len(r)-1].index]
}
