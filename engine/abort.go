package engine

import (
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// Aborting an invocation (google-adk 2.13 run_async's abort_signal,
// events/_abort_events.py). The caller aborts a run by cancelling the
// context it passed to Runner.Run, e.g. when an HTTP client disconnects.
// The run stops after the event it is yielding, and the invocation is
// sealed in the session: every function call it issued that has no
// response gets a synthetic error response from the agent that issued it,
// so the next turn's request shows the model what happened instead of a
// dangling call, a resumption does not re-run a tool the user cancelled,
// and routing and task scopes see a finished invocation. With nothing
// dangling, one content-less event from the root agent marks the abort.

// Both google-adk's, so that histories are interchangeable.
const (
	// AbortErrorCode is the errorCode of the events that seal an aborted
	// invocation. The engine reads it back from the session (routing,
	// what a later user message answers), so only the engine may set it.
	AbortErrorCode = "INVOCATION_ABORTED"
	abortMessage   = "Invocation was aborted by client."
)

// isAbortEvent reports whether e seals an aborted invocation.
func isAbortEvent(e *session.Event) bool { return e.ErrorCode == AbortErrorCode }

// abortEvents returns the events that seal invocation id, whose events are
// among events: one per (author, branch, isolation scope) of the calls it
// left unanswered, in the order those first appear, or, if none, one from
// root on branch. A task agent that already paused for the user is left
// as it is: its invocation ended waiting, not aborted.
func abortEvents(events []*session.Event, id, root, branch string) []*session.Event {
	var own []*session.Event
	answered := map[string]bool{}
	for _, e := range events {
		if e.InvocationID != id {
			continue
		}
		own = append(own, e)
		for _, fr := range e.FunctionResponses() {
			if fr.ID != "" {
				answered[fr.ID] = true
			}
		}
	}
	if n := len(own); n > 0 {
		if last := own[n-1]; last.IsolationScope != "" && last.Author != "user" && last.IsFinalResponse() {
			return nil
		}
	}
	type key struct{ author, branch, scope string }
	var order []key
	calls := map[key][]*genai.FunctionCall{}
	for _, e := range own {
		for _, fc := range e.FunctionCalls() {
			if fc.ID == "" || answered[fc.ID] {
				continue
			}
			k := key{e.Author, e.Branch, e.IsolationScope}
			if k.branch == "" {
				k.branch = branch
			}
			if _, seen := calls[k]; !seen {
				order = append(order, k)
			}
			calls[k] = append(calls[k], fc)
		}
	}
	if len(order) == 0 {
		ev := session.NewEvent(id, root, branch)
		ev.ErrorCode, ev.ErrorMessage = AbortErrorCode, abortMessage
		return []*session.Event{ev}
	}
	out := make([]*session.Event, 0, len(order))
	for _, k := range order {
		ev := session.NewEvent(id, k.author, k.branch)
		ev.IsolationScope = k.scope
		ev.ErrorCode, ev.ErrorMessage = AbortErrorCode, abortMessage
		ev.Content = &genai.Content{Role: "user"}
		for _, fc := range calls[k] {
			ev.Content.Parts = append(ev.Content.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: fc.ID, Name: fc.Name, Response: map[string]any{"error": abortMessage},
			}})
		}
		out = append(out, ev)
	}
	return out
}
