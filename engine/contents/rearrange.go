package contents

import (
	"sort"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// mergeFunctionResponseEvents merges response events into a copy of the
// first: a later response replaces the part answering the same id (an
// empty id is a key too), other later parts are appended.
func mergeFunctionResponseEvents(events []*session.Event) *session.Event {
	first := events[0]
	merged := append([]*genai.Part(nil), parts(first)...)
	index := map[string]int{}
	for i, p := range merged {
		if p != nil && p.FunctionResponse != nil {
			index[p.FunctionResponse.ID] = i
		}
	}
	for _, e := range events[1:] {
		for _, p := range parts(e) {
			if p != nil && p.FunctionResponse != nil {
				id := p.FunctionResponse.ID
				if i, ok := index[id]; ok {
					merged[i] = p
				} else {
					merged = append(merged, p)
					index[id] = len(merged) - 1
				}
			} else {
				merged = append(merged, p)
			}
		}
	}
	return withParts(first, merged)
}

// isStaleTextReply reports whether e is an interim model text reply of the
// given invocation, as emitted between updates of a long-running tool.
func isStaleTextReply(e *session.Event, invocationID string) bool {
	if e.InvocationID != invocationID || e.Author == "user" || e.Content == nil ||
		e.Content.Role != genai.RoleModel || hasFunctionCalls(e) || e.Actions.Compaction != nil {
		return false
	}
	for _, p := range e.Content.Parts {
		if p != nil && p.Text != "" {
			return true
		}
	}
	return false
}

// rearrangeAsyncFunctionResponsesInHistory puts each call's latest
// response right after the call event (merging the latest responses of a
// call event's several calls into one event) and drops interim model text
// replies between two updates of one call from the same author and
// invocation (google-adk
// rearrange_events_for_async_function_responses_in_history). A response
// belongs to the latest earlier event calling its id, or to the first such
// event when none precedes it.
func rearrangeAsyncFunctionResponsesInHistory(events []*session.Event) []*session.Event {
	callEvents := map[string][]int{}
	for i, e := range events {
		if hasFunctionResponses(e) {
			continue
		}
		for fc := range functionCalls(e) {
			callEvents[fc.ID] = append(callEvents[fc.ID], i)
		}
	}

	type callKey struct {
		id    string
		index int
	}
	responsesByCall := map[callKey][]int{}
	anyResponse := false
	for i, e := range events {
		for fr := range functionResponses(e) {
			anyResponse = true
			idx := callEvents[fr.ID]
			if len(idx) == 0 {
				continue
			}
			preceding := sort.SearchInts(idx, i)
			owner := idx[max(preceding-1, 0)]
			k := callKey{fr.ID, owner}
			responsesByCall[k] = append(responsesByCall[k], i)
		}
	}
	if !anyResponse {
		return events
	}

	stale := map[int]bool{}
	for _, resp := range responsesByCall {
		for k := 0; k+1 < len(resp); k++ {
			cur, next := events[resp[k]], events[resp[k+1]]
			if cur.InvocationID != next.InvocationID || cur.Author != next.Author {
				continue
			}
			if len(cur.Actions.RequestedToolConfirmations) > 0 || len(cur.Actions.RequestedAuthConfigs) > 0 {
				continue
			}
			if resp[k]+1 >= resp[k+1] {
				continue
			}
			all := true
			for j := resp[k] + 1; j < resp[k+1]; j++ {
				if !isStaleTextReply(events[j], cur.InvocationID) {
					all = false
					break
				}
			}
			if all {
				for j := resp[k] + 1; j < resp[k+1]; j++ {
					stale[j] = true
				}
			}
		}
	}

	out := make([]*session.Event, 0, len(events))
	for i, e := range events {
		if stale[i] || hasFunctionResponses(e) {
			continue
		}
		if !hasFunctionCalls(e) {
			out = append(out, e)
			continue
		}
		var latest []int
		for fc := range functionCalls(e) {
			if r := responsesByCall[callKey{fc.ID, i}]; len(r) > 0 {
				last := r[len(r)-1]
				dup := false
				for _, x := range latest {
					if x == last {
						dup = true
						break
					}
				}
				if !dup {
					latest = append(latest, last)
				}
			}
		}
		out = append(out, e)
		switch len(latest) {
		case 0:
		case 1:
			out = append(out, events[latest[0]])
		default:
			sort.Ints(latest)
			group := make([]*session.Event, len(latest))
			for j, x := range latest {
				group[j] = events[x]
			}
			out = append(out, mergeFunctionResponseEvents(group))
		}
	}
	return out
}

// dropOrphanedFunctionResponses removes function responses with no earlier
// call (by id, or by name for id-less calls); an event left with no parts
// is dropped.
func dropOrphanedFunctionResponses(events []*session.Event) []*session.Event {
	seenIDs := map[string]bool{}
	seenNames := map[string]bool{}
	out := make([]*session.Event, 0, len(events))
	for _, e := range events {
		ps := parts(e)
		if len(ps) > 0 && hasFunctionResponses(e) {
			kept := make([]*genai.Part, 0, len(ps))
			for _, p := range ps {
				if p != nil && p.FunctionResponse != nil {
					fr := p.FunctionResponse
					matched := seenIDs[fr.ID]
					if fr.ID == "" {
						matched = fr.Name != "" && seenNames[fr.Name]
					}
					if !matched {
						continue
					}
				}
				kept = append(kept, p)
			}
			if len(kept) > 0 {
				if len(kept) != len(ps) {
					e = withParts(e, kept)
				}
				out = append(out, e)
			}
		} else {
			out = append(out, e)
		}
		for fc := range functionCalls(e) {
			if fc.ID != "" {
				seenIDs[fc.ID] = true
			} else if fc.Name != "" {
				seenNames[fc.Name] = true
			}
		}
	}
	return out
}

// dropOrphanedFunctionCalls removes function calls with an id that no
// response answers and that no event marks long-running; an event left
// with no parts is dropped.
func dropOrphanedFunctionCalls(events []*session.Event) []*session.Event {
	responded := map[string]bool{}
	longRunning := map[string]bool{}
	for _, e := range events {
		for fr := range functionResponses(e) {
			if fr.ID != "" {
				responded[fr.ID] = true
			}
		}
		for _, id := range e.LongRunningToolIDs {
			longRunning[id] = true
		}
	}
	out := make([]*session.Event, 0, len(events))
	for _, e := range events {
		ps := parts(e)
		if len(ps) == 0 || !hasFunctionCalls(e) {
			out = append(out, e)
			continue
		}
		kept := make([]*genai.Part, 0, len(ps))
		for _, p := range ps {
			if p != nil && p.FunctionCall != nil {
				if id := p.FunctionCall.ID; id != "" && !responded[id] && !longRunning[id] {
					continue
				}
			}
			kept = append(kept, p)
		}
		if len(kept) == 0 {
			continue
		}
		if len(kept) != len(ps) {
			e = withParts(e, kept)
		}
		out = append(out, e)
	}
	return out
}

// owningCallIndex returns the index of the latest event in history calling
// the response's id (or, for an id-less response, an id-less call of the
// same name), or -1.
func owningCallIndex(history []*session.Event, fr *genai.FunctionResponse) int {
	for i := len(history) - 1; i >= 0; i-- {
		for fc := range functionCalls(history[i]) {
			if fr.ID != "" {
				if fc.ID == fr.ID {
					return i
				}
			} else if fc.ID == "" && fr.Name != "" && fc.Name == fr.Name {
				return i
			}
		}
	}
	return -1
}

// rearrangeForLatestFunctionResponse moves the responses in the last event
// next to the calls they answer (google-adk
// rearrange_events_for_latest_function_response). Each answered call event
// is followed by one event merging every intermediate response to it with
// the final one; the last event's other parts go with the latest call;
// everything after the latest answered call is dropped.
func rearrangeForLatestFunctionResponse(events []*session.Event) []*session.Event {
	events = dropOrphanedFunctionResponses(events)
	n := len(events)
	if n < 2 || !hasFunctionResponses(events[n-1]) {
		return events
	}
	trailing := events[n-1]
	history := events[:n-1]
	byCall := map[int][]*genai.Part{}
	var nonResponse []*genai.Part
	for _, p := range parts(trailing) {
		if p != nil && p.FunctionResponse != nil {
			if idx := owningCallIndex(history, p.FunctionResponse); idx != -1 {
				byCall[idx] = append(byCall[idx], p)
			}
		} else {
			nonResponse = append(nonResponse, p)
		}
	}
	if len(byCall) == 0 {
		return events
	}
	latest := -1
	for idx := range byCall {
		latest = max(latest, idx)
	}
	byCall[latest] = append(byCall[latest], nonResponse...)
	if latest == n-2 && len(byCall) == 1 {
		return events
	}

	mergedFor := func(callIdx int) *session.Event {
		split := withParts(trailing, byCall[callIdx])
		var group []*session.Event
		for evIdx := callIdx + 1; evIdx < n-1; evIdx++ {
			ev := events[evIdx]
			ps := parts(ev)
			if len(ps) == 0 || !hasFunctionResponses(ev) {
				continue
			}
			isCall := hasFunctionCalls(ev)
			var matched []*genai.Part
			anyResponse := false
			for _, p := range ps {
				if p != nil && p.FunctionResponse != nil {
					if owningCallIndex(events[:evIdx], p.FunctionResponse) == callIdx {
						matched = append(matched, p)
						anyResponse = true
					}
				} else if !isCall {
					matched = append(matched, p)
				}
			}
			if anyResponse {
				if len(matched) != len(ps) {
					ev = withParts(ev, matched)
				}
				group = append(group, ev)
			}
		}
		if len(group) == 0 {
			return split
		}
		return mergeFunctionResponseEvents(append(group, split))
	}

	out := make([]*session.Event, 0, latest+1+len(byCall))
	for idx := 0; idx <= latest; idx++ {
		ev := events[idx]
		if ps := parts(ev); len(ps) > 0 && hasFunctionResponses(ev) {
			kept := make([]*genai.Part, 0, len(ps))
			keep := false
			for _, p := range ps {
				if p != nil && p.FunctionResponse != nil {
					if _, answered := byCall[owningCallIndex(events[:idx], p.FunctionResponse)]; answered {
						continue
					}
				}
				kept = append(kept, p)
				if p != nil && (p.FunctionResponse != nil || p.FunctionCall != nil) {
					keep = true
				}
			}
			if !keep {
				continue
			}
			if len(kept) != len(ps) {
				ev = withParts(ev, kept)
			}
		}
		out = append(out, ev)
		if _, ok := byCall[idx]; ok {
			out = append(out, mergedFor(idx))
		}
	}
	return out
}
