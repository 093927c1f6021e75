// Package contents turns a session's history into the contents sent to the
// model, as google-adk 2.13's contents request processor does
// (flows/llm_flows/context/_contents.py with its compaction, fencing and
// tool-rearrangement helpers).
//
// Build is a pure function: it never modifies the events it is given, and
// the contents it returns share no mutable state with them (see Build).
// Cache gives the same results for a live session, reusing what it built
// for the earlier part of the history, so that a model call's cost does not
// grow with the length of the conversation.
package contents

import (
	"iter"
	"slices"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Options selects whose view of the history Build assembles.
type Options struct {
	// AgentName is the agent the request is for. Events authored by any
	// other agent are relayed as fenced "For context:" user messages; with
	// an empty name nothing counts as another agent's.
	AgentName string
	// Branch is the invocation's dot-separated branch. An event is visible
	// when it has no branch, or its branch equals Branch or is an ancestor
	// of it (segment-wise prefix). Empty means every branch is visible.
	Branch string
	// CurrentTurnOnly is include_contents='none' (or a stateful
	// Interactions API request): only the current turn, starting at the
	// latest user message or other agent's reply, is included.
	CurrentTurnOnly bool
	// PreserveFunctionCallIDs keeps client-generated "adk-" function call
	// and response ids, for models that pair calls with results by id
	// (google-adk sets it for Anthropic, LiteLLM, OpenAI Responses and
	// Gemini with the Interactions API).
	PreserveFunctionCallIDs bool
	// IncludeThoughtsFromOtherAgents is RunConfig.include_thoughts_from_other_agents:
	// other agents' thought text is relayed too. It is ignored when
	// CurrentTurnOnly is set, as in google-adk.
	IncludeThoughtsFromOtherAgents bool
	// IsolationScope is the agent's isolation scope (google-adk
	// isolation_scope, a task agent's delegating call id): only events of
	// the same scope are visible, so an unscoped agent sees no task's.
	IsolationScope string
	// NodePath is the agent run's node path: a user message stamped with
	// another node's path (a single_turn agent's request) is not visible.
	NodePath string
}

// Client-generated function call ids start with this prefix (google-adk
// AF_FUNCTION_CALL_ID_PREFIX).
const clientFunctionCallIDPrefix = "adk-"

// Names of framework function calls whose events are never shown to the
// model. adk_request_input is deliberately absent: google-adk 2.13 keeps it.
const (
	requestCredentialName   = "adk_request_credential"
	requestConfirmationName = "adk_request_confirmation"
	frameworkName           = "adk_framework"
)

// Build returns the contents of a model request for the given session
// events, reproducing google-adk 2.13's _get_contents (or, with
// CurrentTurnOnly, _get_current_turn_contents):
//
//  1. events annulled by a rewind (actions.rewindBeforeInvocationId) are
//     dropped, together with the rewinding event;
//  2. events with no visible content, on another branch, on a tool's
//     sub-branch below the agent's, or carrying adk_framework,
//     adk_request_credential or adk_request_confirmation calls or
//     responses are dropped;
//  3. compaction events replace the events in their timestamp range with
//     their summary, attributed to the agent; a function call compacted
//     away while its response survives is restored;
//  4. consecutive content-less transcription events are aggregated into
//     one user (input) or model (output) text content;
//  5. other agents' events, and responses to calls another agent made, are
//     relayed as fenced "For context:" user contents;
//  6. orphaned function responses are dropped, function responses are moved
//     next to their calls (merging several response events for one call),
//     stale interim replies between updates of one call are dropped, and
//     unanswered calls that are not long-running are dropped;
//  7. "adk-" ids are cleared unless PreserveFunctionCallIDs is set.
//
// The result is never nil. Contents, parts, function calls and responses
// (their args and response maps deeply), thought signatures and the other
// small part structs are copied; strings and the bytes of inline data
// (InlineData.Data, FunctionResponse.Parts[].InlineData.Data) are shared,
// so callers may change the result freely except for those bytes.
//
// Events are also filtered by Options.IsolationScope and Options.NodePath;
// the synthesized first turn of a task agent and a single_turn agent's
// node filtering are the engine's (engine/task.go). live_session_id, which
// Event does not carry, is treated as absent (no live-mode authorship rule).
func Build(events []*session.Event, opt Options) []*genai.Content {
	if opt.CurrentTurnOnly {
		return currentTurnContents(events, opt)
	}
	return buildContents(events, opt, opt.IncludeThoughtsFromOtherAgents)
}

// currentTurnContents finds the latest event that starts the current turn,
// scanning back over posted-back tool results until their calls are
// reached, and builds the contents from there.
func currentTurnContents(events []*session.Event, opt Options) []*genai.Content {
	toolCallIDs := collectFunctionCallIDs(events)
	var unmatched map[string]struct{}
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		for fc := range functionCalls(e) {
			if fc.ID != "" {
				delete(unmatched, fc.ID)
			}
		}
		submitted := isSubmittedToolResult(e)
		if submitted {
			for fr := range functionResponses(e) {
				if _, ok := toolCallIDs[fr.ID]; fr.ID != "" && ok {
					if unmatched == nil {
						unmatched = map[string]struct{}{}
					}
					unmatched[fr.ID] = struct{}{}
				}
			}
		}
		if len(unmatched) == 0 &&
			includeInScope(opt.Branch, e, false, opt.IsolationScope, opt.NodePath) &&
			(e.Author == "user" || isOtherAgentReply(opt.AgentName, e)) &&
			!isDirectTransfer(e) &&
			!submitted &&
			!isToolSubBranchEvent(opt.Branch, e, opt.AgentName, toolCallIDs) {
			return buildContents(events[i:], opt, false)
		}
	}
	return []*genai.Content{}
}

// buildContents is google-adk's _get_contents.
func buildContents(events []*session.Event, opt Options, includeThoughts bool) []*genai.Content {
	return buildContentsInfo(events, opt, includeThoughts, nil)
}

// buildInfo describes how buildContentsInfo's pipeline ended, as much as
// Cache needs to tell whether a build of these events can be followed by a
// build of later events (see Cache.Build).
type buildInfo struct {
	// toProcessEmpty: no event reached the transcription loop.
	toProcessEmpty bool
	// firstIn, firstOut: the first event of the loop carries input
	// (output) transcription text, whatever its content.
	firstIn, firstOut bool
	// inCase, outCase: some event was aggregated as input (output)
	// transcription.
	inCase, outCase bool
	// lastIn, lastOut: the last event of the loop was aggregated as input
	// (output) transcription, so what it yields depends on what follows.
	lastIn, lastOut bool
	// accIn, accOut: text was left in the accumulators at the end.
	accIn, accOut bool
	// droppedEmpty: nothing was left after the orphaned responses were
	// dropped, so no event here can be the trailing one.
	droppedEmpty bool
	// trailingRearranged: rearrangeForLatestFunctionResponse changed the
	// events, which it would not have done had any event followed.
	trailingRearranged bool
}

// buildContentsInfo is buildContents, describing its pipeline in info when
// info is not nil.
func buildContentsInfo(events []*session.Event, opt Options, includeThoughts bool, info *buildInfo) []*genai.Content {
	live := applyRewinds(events)
	toolCallIDs := collectFunctionCallIDs(live)

	raw := make([]*session.Event, 0, len(live))
	hasCompaction := false
	for _, e := range live {
		thoughts := includeThoughts && isOtherAgentReply(opt.AgentName, e)
		if !includeInScope(opt.Branch, e, thoughts, opt.IsolationScope, opt.NodePath) ||
			isToolSubBranchEvent(opt.Branch, e, opt.AgentName, toolCallIDs) {
			continue
		}
		if e.Actions.Compaction != nil {
			hasCompaction = true
		}
		raw = append(raw, e)
	}

	toProcess := raw
	if hasCompaction {
		toProcess = processCompactionEvents(raw, opt.AgentName)
		toProcess = recoverCompactedFunctionCalls(toProcess, raw)
	}

	// Who made each function call, to spot responses to another agent's.
	callAuthor := map[string]string{}
	for _, e := range toProcess {
		for fc := range functionCalls(e) {
			if fc.ID != "" {
				callAuthor[fc.ID] = e.Author
			}
		}
	}

	filtered := make([]*session.Event, 0, len(toProcess))
	var accIn, accOut string
	if info != nil {
		info.toProcessEmpty = len(toProcess) == 0
		if len(toProcess) > 0 {
			info.firstIn = hasInputTranscription(toProcess[0])
			info.firstOut = hasOutputTranscription(toProcess[0])
		}
	}
	for i, e := range toProcess {
		if info != nil && e.Content == nil {
			in := hasInputTranscription(e)
			out := !in && hasOutputTranscription(e)
			info.inCase = info.inCase || in
			info.outCase = info.outCase || out
			if i == len(toProcess)-1 {
				info.lastIn, info.lastOut = in, out
			}
		}
		if e.Content == nil {
			var next *session.Event
			if i != len(toProcess)-1 {
				next = toProcess[i+1]
			}
			switch {
			case e.InputTranscription != nil && e.InputTranscription.Text != "":
				accIn += e.InputTranscription.Text
				if next != nil && next.InputTranscription != nil && next.InputTranscription.Text != "" {
					continue
				}
				cp := *e
				cp.InputTranscription = nil
				cp.Content = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: accIn}}}
				e = &cp
				accIn = ""
			case e.OutputTranscription != nil && e.OutputTranscription.Text != "":
				accOut += e.OutputTranscription.Text
				if next != nil && next.OutputTranscription != nil && next.OutputTranscription.Text != "" {
					continue
				}
				cp := *e
				cp.OutputTranscription = nil
				cp.Content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: accOut}}}
				e = &cp
				accOut = ""
			}
		}

		other := isOtherAgentReply(opt.AgentName, e)
		if !other && e.Content != nil {
			for _, p := range e.Content.Parts {
				if p == nil || p.FunctionResponse == nil {
					continue
				}
				if id := p.FunctionResponse.ID; id != "" {
					if a := callAuthor[id]; a != "" && a != opt.AgentName && a != "user" {
						other = true
						break
					}
				}
			}
		}
		if other {
			if ce := presentOtherAgentMessage(e, includeThoughts); ce != nil {
				filtered = append(filtered, ce)
			}
			continue
		}
		filtered = append(filtered, e)
	}

	filtered = dropOrphanedFunctionResponses(filtered)
	result := rearrangeForLatestFunctionResponse(filtered)
	if info != nil {
		info.accIn, info.accOut = accIn != "", accOut != ""
		info.droppedEmpty = len(filtered) == 0
		info.trailingRearranged = !slices.Equal(result, filtered)
	}
	result = rearrangeAsyncFunctionResponsesInHistory(result)
	result = dropOrphanedFunctionCalls(result)

	out := make([]*genai.Content, 0, len(result))
	for _, e := range result {
		if e.Content != nil {
			out = append(out, copyContent(e.Content, !opt.PreserveFunctionCallIDs))
		}
	}
	return out
}

// withParts returns a copy of e whose content has the given parts (and
// e's role). e is not modified.
func withParts(e *session.Event, parts []*genai.Part) *session.Event {
	cp := *e
	role := ""
	if e.Content != nil {
		role = e.Content.Role
	}
	cp.Content = &genai.Content{Role: role, Parts: parts}
	return &cp
}

// newEvent returns a fresh event: no id, invocation or actions.
func newEvent(author, branch string, content *genai.Content, ts time.Time) *session.Event {
	return &session.Event{
		Response:  model.Response{Content: content},
		Author:    author,
		Branch:    branch,
		Timestamp: ts,
	}
}

func parts(e *session.Event) []*genai.Part {
	if e == nil || e.Content == nil {
		return nil
	}
	return e.Content.Parts
}

// functionCalls yields the function calls of the event's parts in order,
// as Event.FunctionCalls lists them, without allocating.
func functionCalls(e *session.Event) iter.Seq[*genai.FunctionCall] {
	return func(yield func(*genai.FunctionCall) bool) {
		for _, p := range parts(e) {
			if p != nil && p.FunctionCall != nil && !yield(p.FunctionCall) {
				return
			}
		}
	}
}

// functionResponses yields the function responses of the event's parts in
// order, as Event.FunctionResponses lists them, without allocating.
func functionResponses(e *session.Event) iter.Seq[*genai.FunctionResponse] {
	return func(yield func(*genai.FunctionResponse) bool) {
		for _, p := range parts(e) {
			if p != nil && p.FunctionResponse != nil && !yield(p.FunctionResponse) {
				return
			}
		}
	}
}

func hasFunctionCalls(e *session.Event) bool {
	for _, p := range parts(e) {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

func hasFunctionResponses(e *session.Event) bool {
	for _, p := range parts(e) {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// collectFunctionCallIDs returns the ids of every function call in events.
func collectFunctionCallIDs(events []*session.Event) map[string]struct{} {
	ids := map[string]struct{}{}
	for _, e := range events {
		for fc := range functionCalls(e) {
			if fc.ID != "" {
				ids[fc.ID] = struct{}{}
			}
		}
	}
	return ids
}

// hasInputTranscription reports whether the event carries input
// transcription text, the test the transcription loop makes.
func hasInputTranscription(e *session.Event) bool {
	return e.InputTranscription != nil && e.InputTranscription.Text != ""
}

// hasOutputTranscription reports whether the event carries output
// transcription text.
func hasOutputTranscription(e *session.Event) bool {
	return e.OutputTranscription != nil && e.OutputTranscription.Text != ""
}
