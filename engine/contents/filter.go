package contents

import (
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// applyRewinds returns the events that survive every rewind (google-adk
// _apply_rewinds). Walking backwards, an event carrying
// rewindBeforeInvocationId X is dropped together with every event from the
// first event of invocation X up to it; the walk resumes before them.
func applyRewinds(events []*session.Event) []*session.Event {
	// Most histories hold no rewind: then every event survives, and the
	// result is events itself, clipped so a caller's append cannot write
	// into events' backing array.
	if !slices.ContainsFunc(events, func(e *session.Event) bool { return e.Actions.RewindBeforeInvocationID != "" }) {
		return events[:len(events):len(events)]
	}
	var firstIdx map[string]int
	kept := make([]*session.Event, 0, len(events))
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		target := e.Actions.RewindBeforeInvocationID
		if target == "" {
			kept = append(kept, e)
			continue
		}
		if firstIdx == nil {
			firstIdx = map[string]int{}
			for idx, ev := range events {
				if ev.InvocationID == "" {
					continue
				}
				if _, ok := firstIdx[ev.InvocationID]; !ok {
					firstIdx[ev.InvocationID] = idx
				}
			}
		}
		if idx, ok := firstIdx[target]; ok && idx < i {
			i = idx
		}
	}
	for l, r := 0, len(kept)-1; l < r; l, r = l+1, r-1 {
		kept[l], kept[r] = kept[r], kept[l]
	}
	return kept
}

// includeInScope is google-adk _should_include_event_in_context: the event
// is in the agent's isolation scope (an unscoped agent sees only unscoped
// events), is no user message stamped with another node's path, has
// visible content, belongs to the branch and is no framework, credential
// or confirmation event. includeThoughts makes thought text count as
// visible.
func includeInScope(branch string, e *session.Event, includeThoughts bool, scope, nodePath string) bool {
	if e.IsolationScope != scope {
		return false
	}
	if e.Author == "user" && e.NodeInfo != nil && e.NodeInfo.Path != "" && e.NodeInfo.Path != nodePath && !hasFunctionResponses(e) {
		return false
	}
	return !containsEmptyContent(e, includeThoughts) &&
		belongsToBranch(branch, e) &&
		!isFunctionCallEvent(e, frameworkName) &&
		!isFunctionCallEvent(e, requestCredentialName) &&
		!isFunctionCallEvent(e, requestConfirmationName)
}

// isPartInvisible reports whether the model should not see a part: calls,
// responses, thought signatures and server-side tool calls and responses
// are always visible; otherwise a thought (unless includeThoughts) or a
// part with no text, inline or file data, code or code result is not.
func isPartInvisible(p *genai.Part, includeThoughts bool) bool {
	if p == nil {
		return true
	}
	if p.FunctionCall != nil || p.FunctionResponse != nil {
		return false
	}
	if len(p.ThoughtSignature) > 0 {
		return false
	}
	if p.ToolCall != nil || p.ToolResponse != nil {
		return false
	}
	return (p.Thought && !includeThoughts) ||
		(p.Text == "" && p.InlineData == nil && p.FileData == nil &&
			p.ExecutableCode == nil && p.CodeExecutionResult == nil)
}

// containsEmptyContent reports whether an event has nothing for the model:
// no content, no role, no parts or only invisible parts, and no
// transcription. Compaction events are never empty.
func containsEmptyContent(e *session.Event, includeThoughts bool) bool {
	if e.Actions.Compaction != nil {
		return false
	}
	empty := e.Content == nil || e.Content.Role == "" || len(e.Content.Parts) == 0
	if !empty {
		empty = true
		for _, p := range e.Content.Parts {
			if !isPartInvisible(p, includeThoughts) {
				empty = false
				break
			}
		}
	}
	return empty && e.OutputTranscription == nil && e.InputTranscription == nil
}

// belongsToBranch reports whether an event is visible from the invocation
// branch: either is empty, or the event's branch equals the invocation's or
// is an ancestor of it, segment by segment.
func belongsToBranch(branch string, e *session.Event) bool {
	if branch == "" || e.Branch == "" {
		return true
	}
	if branch == e.Branch {
		return true
	}
	return isDescendant(branch, e.Branch)
}

// BelongsToBranch reports whether an event on its branch is visible from
// branch (google-adk _is_event_belongs_to_branch).
func BelongsToBranch(branch string, e *session.Event) bool { return belongsToBranch(branch, e) }

// LiveEvents returns the events no rewind annulled (google-adk
// _apply_rewinds), without modifying events.
func LiveEvents(events []*session.Event) []*session.Event { return applyRewinds(events) }

// splitBranch splits a dot-separated branch path; "" has no segments.
func splitBranch(b string) []string {
	if b == "" {
		return nil
	}
	return strings.Split(b, ".")
}

// isDescendant reports whether path has more segments than ancestor and
// starts with all of them.
func isDescendant(path, ancestor string) bool {
	p, a := splitBranch(path), splitBranch(ancestor)
	if len(p) <= len(a) {
		return false
	}
	for i := range a {
		if p[i] != a[i] {
			return false
		}
	}
	return true
}

// isToolSubBranchEvent reports whether an event was published by a tool on
// its own sub-branch below the agent's: some branch segment below the
// agent's branch has the form <name>@<function call id> with a known call
// id and a name other than the agent's.
func isToolSubBranchEvent(branch string, e *session.Event, agentName string, toolCallIDs map[string]struct{}) bool {
	if e.Branch == "" || len(toolCallIDs) == 0 {
		return false
	}
	segs, base := splitBranch(e.Branch), splitBranch(branch)
	if !isDescendant(e.Branch, branch) {
		return false
	}
	for depth := len(base) + 1; depth <= len(segs); depth++ {
		leaf := segs[depth-1]
		at := strings.LastIndexByte(leaf, '@')
		if at < 0 {
			continue
		}
		if _, ok := toolCallIDs[leaf[at+1:]]; !ok {
			continue
		}
		if leaf[:at] != agentName {
			return true
		}
	}
	return false
}

// isFunctionCallEvent reports whether any part calls or answers name.
func isFunctionCallEvent(e *session.Event, name string) bool {
	for _, p := range parts(e) {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil && p.FunctionCall.Name == name {
			return true
		}
		if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
			return true
		}
	}
	return false
}

// isSubmittedToolResult reports whether the event is a tool result the
// caller posted back: user-authored function responses.
func isSubmittedToolResult(e *session.Event) bool {
	return e.Author == "user" && hasFunctionResponses(e)
}

// isDirectTransfer reports whether the event transfers to another agent.
func isDirectTransfer(e *session.Event) bool {
	if e.Actions.TransferToAgent != "" {
		return true
	}
	for _, p := range parts(e) {
		if p != nil && p.FunctionCall != nil && p.FunctionCall.Name == "transfer_to_agent" {
			return true
		}
	}
	return false
}

// isOtherAgentReply reports whether the event was authored by an agent
// other than agentName. Live-session events (all non-user events count)
// are not modelled: Event has no live session id.
func isOtherAgentReply(agentName string, e *session.Event) bool {
	return agentName != "" && e.Author != agentName && e.Author != "user"
}
