// Package session holds conversations: events and their actions, the state a
// session carries in its app:, user:, session and temp: scopes, and the
// Service interface that stores them, with an in-memory implementation.
package session

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// Event is one entry in a session's history: a user message, a model
// response, a tool result or an agent's action. It embeds the model response
// fields as google-adk's Event extends LlmResponse; its JSON is google-adk's
// camelCase wire format with the timestamp in float seconds.
type Event struct {
	model.Response

	ID           string `json:"id"`
	InvocationID string `json:"invocationId"`
	// Author is "user" or the name of the agent that produced the event.
	Author string `json:"author"`
	// Branch is the dot-separated agent path (e.g. "root.child") that keeps
	// sibling agents from seeing each other's history.
	Branch  string       `json:"branch,omitempty"`
	Actions EventActions `json:"actions"`
	// LongRunningToolIDs lists the function call ids of long-running tools,
	// sorted (google-adk keeps a set and serializes it sorted).
	LongRunningToolIDs []string `json:"longRunningToolIds,omitempty"`
	// NodeInfo places the event in google-adk 2.x's node runtime (set when
	// an LlmAgent is the root of the tree).
	NodeInfo *NodeInfo `json:"nodeInfo,omitempty"`
	// IsolationScope confines an event to the task-mode agent run it
	// belongs to (google-adk isolation_scope: the id of the function call
	// that delegated the task): only agents running in the same scope see it.
	IsolationScope string `json:"isolationScope,omitempty"`
	// Output is the value an agent run produced as its result (google-adk
	// Event.output), e.g. the arguments of a task agent's finish_task call.
	Output    any       `json:"output,omitempty"`
	Timestamp time.Time `json:"-"`
}

// NodeInfo is the node-runtime position of the agent run that produced an
// event: a path like "root@1/billing@1", each step an agent and its run
// number within the invocation.
type NodeInfo struct {
	Path string `json:"path"`
	// OutputFor lists the node paths this event is the output of.
	OutputFor []string `json:"outputFor,omitempty"`
	// MessageAsOutput says the event's message itself is its run's output
	// (a single_turn agent's final text).
	MessageAsOutput bool `json:"messageAsOutput,omitempty"`
}

// NewEvent returns an event with a fresh id and the current time.
func NewEvent(invocationID, author, branch string) *Event {
	return &Event{ID: NewEventID(), InvocationID: invocationID, Author: author, Branch: branch, Timestamp: time.Now()}
}

// NewEventID returns a new random event id.
func NewEventID() string { return uuid.NewString() }

// EventActions are the side effects an event carries. Maps keep the
// difference between nil (absent) and empty on the wire.
type EventActions struct {
	// SkipSummarization ends the agent's turn after a tool response instead
	// of sending it back to the model.
	SkipSummarization bool `json:"skipSummarization,omitempty"`
	// SkipSummarizationSet records that SkipSummarization was set although
	// false: google-adk's field is an Optional[bool] whose explicit False
	// shows in the event (an AgentTool whose agent paused sets it) and, in
	// a merged response, overrides an earlier call's True. The event's JSON
	// then holds "skipSummarization": false.
	SkipSummarizationSet bool `json:"-"`
	// StateDelta holds state changes; keys carry their scope prefix.
	StateDelta map[string]any `json:"stateDelta,omitzero"`
	// StateKeyOrder holds, by StateDelta key, the key-order hint of the
	// value (see model.Response.KeyOrder): the order its dicts were written
	// in, for the text google-adk formats from state. Stores keep it with
	// the state they store, not in the event's JSON.
	StateKeyOrder map[string]json.RawMessage `json:"-"`
	// ArtifactDelta maps artifact names to the version saved.
	ArtifactDelta   map[string]int `json:"artifactDelta,omitzero"`
	TransferToAgent string         `json:"transferToAgent,omitempty"`
	TransferReason  string         `json:"transferReason,omitempty"`
	// Escalate tells the enclosing workflow agent to stop.
	Escalate                   bool                        `json:"escalate,omitempty"`
	RequestedAuthConfigs       map[string]any              `json:"requestedAuthConfigs,omitzero"`
	RequestedToolConfirmations map[string]ToolConfirmation `json:"requestedToolConfirmations,omitzero"`
	Compaction                 *EventCompaction            `json:"compaction,omitempty"`
	// EndOfAgent and AgentState are checkpoints written by resumable agents.
	EndOfAgent               bool           `json:"endOfAgent,omitempty"`
	AgentState               map[string]any `json:"agentState,omitzero"`
	RewindBeforeInvocationID string         `json:"rewindBeforeInvocationId,omitempty"`
	// SetModelResponse is the structured answer recorded by set_model_response.
	SetModelResponse any `json:"setModelResponse,omitempty"`
}

// IsZero reports whether no action is set, for trace output.
func (a *EventActions) IsZero() bool {
	return !a.SkipSummarization && !a.SkipSummarizationSet && len(a.StateDelta) == 0 && len(a.ArtifactDelta) == 0 &&
		a.TransferToAgent == "" && a.TransferReason == "" && !a.Escalate &&
		len(a.RequestedAuthConfigs) == 0 && len(a.RequestedToolConfirmations) == 0 &&
		a.Compaction == nil && !a.EndOfAgent && a.AgentState == nil && a.RewindBeforeInvocationID == "" && a.SetModelResponse == nil
}

// ToolConfirmation is a tool's request for, or a user's answer to, a
// confirmation prompt.
type ToolConfirmation struct {
	// Hint is always encoded, as google-adk does (its default is "").
	Hint      string `json:"hint"`
	Confirmed bool   `json:"confirmed"`
	Payload   any    `json:"payload,omitempty"`
}

// EventCompaction replaces the events between two timestamps with a summary.
type EventCompaction struct {
	StartTimestamp   float64        `json:"startTimestamp"`
	EndTimestamp     float64        `json:"endTimestamp"`
	CompactedContent *genai.Content `json:"compactedContent"`
}

// FunctionCalls returns the function calls in the event's content.
func (e *Event) FunctionCalls() []*genai.FunctionCall {
	if e == nil || e.Content == nil {
		return nil
	}
	var out []*genai.FunctionCall
	for _, p := range e.Content.Parts {
		if p != nil && p.FunctionCall != nil {
			out = append(out, p.FunctionCall)
		}
	}
	return out
}

// FunctionResponses returns the function responses in the event's content.
func (e *Event) FunctionResponses() []*genai.FunctionResponse {
	if e == nil || e.Content == nil {
		return nil
	}
	var out []*genai.FunctionResponse
	for _, p := range e.Content.Parts {
		if p != nil && p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// HasTrailingCodeExecutionResult reports whether the last part is a code
// execution result.
func (e *Event) HasTrailingCodeExecutionResult() bool {
	if e.Content == nil || len(e.Content.Parts) == 0 {
		return false
	}
	last := e.Content.Parts[len(e.Content.Parts)-1]
	return last != nil && last.CodeExecutionResult != nil
}

// IsFinalResponse reports whether the event ends its agent's turn
// (google-adk Event.is_final_response): a skipped summarization, a
// long-running call, an error that is not a partial or a call, or content
// with no calls, no responses, no partial flag and no trailing code result.
func (e *Event) IsFinalResponse() bool {
	if e.Actions.SkipSummarization || len(e.LongRunningToolIDs) > 0 {
		return true
	}
	calls := e.FunctionCalls()
	if e.ErrorCode != "" && !e.Partial && len(calls) == 0 {
		return true
	}
	return len(calls) == 0 && len(e.FunctionResponses()) == 0 && !e.Partial && !e.HasTrailingCodeExecutionResult()
}

// IsEmptyText reports whether p is an empty text part: a part with
// nothing set, since genai.Part's text is omitempty ({"text": ""} decodes
// to it, and google-adk keeps such parts).
func IsEmptyText(p *genai.Part) bool {
	return p != nil && reflect.ValueOf(*p).IsZero()
}

// MarshalJSON encodes the event with the timestamp as float seconds, an
// empty text part of its content as {"text": ""}, as google-adk writes it
// (genai.Part alone would write {}), and function call args and responses
// with their dict keys in the order KeyOrder keeps (as google-adk's dicts
// are written), so that UnmarshalJSON finds the order again. The encoder
// is eventjson.go's.
func (e Event) MarshalJSON() ([]byte, error) {
	return appendEvent(make([]byte, 0, 512), &e)
}

// readKeyOrder sets e.KeyOrder from the order of the args and responses in
// data, the event's JSON. Only an event with such parts is read twice.
func (e *Event) readKeyOrder(data []byte) error {
	e.KeyOrder = nil
	if e.Content == nil || !slices.ContainsFunc(e.Content.Parts, func(p *genai.Part) bool {
		return p != nil && (p.FunctionCall != nil && len(p.FunctionCall.Args) > 0 ||
			p.FunctionResponse != nil && len(p.FunctionResponse.Response) > 0)
	}) {
		return nil
	}
	// The text of each part's args or response, found by scanning (the
	// event was just decoded, so it is valid JSON); only those are parsed.
	parts := keyorder.Elements(keyorder.Member(keyorder.Member(data, "content"), "parts"))
	for i, p := range parts {
		if i >= len(e.Content.Parts) {
			break
		}
		var h json.RawMessage
		if fc := keyorder.Member(p, "functionCall"); fc != nil {
			h = keyorder.Of(keyorder.Member(fc, "args"))
		} else if fr := keyorder.Member(p, "functionResponse"); fr != nil {
			h = keyorder.Of(keyorder.Member(fr, "response"))
		}
		e.SetPartKeyOrder(i, h)
	}
	return nil
}

// eventJSON is Event without its methods, for the default decoding.
type eventJSON Event

// UnmarshalJSON decodes google-adk's wire format, with the key order of
// function call args and responses (see MarshalJSON). The decoder is
// eventdecode.go's; what it does not handle is decoded reflectively, with
// the same result.
func (e *Event) UnmarshalJSON(data []byte) error {
	saved := *e
	if decodeEvent(data, e) {
		return nil
	}
	*e = saved
	return e.unmarshalReflect(data)
}

// unmarshalReflect decodes data with encoding/json, then reads the key
// order of args and responses from it: the decoding eventdecode.go leaves
// the inputs it does not handle to.
func (e *Event) unmarshalReflect(data []byte) error {
	var w struct {
		*eventJSON
		Timestamp float64 `json:"timestamp"`
		// Partial shadows Response.Partial: an explicit false is Aggregated.
		Partial *bool `json:"partial"`
	}
	w.eventJSON = (*eventJSON)(e)
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	e.Timestamp = FloatToTime(w.Timestamp)
	e.Partial, e.Aggregated = w.Partial != nil && *w.Partial, w.Partial != nil && !*w.Partial
	e.readSkipSummarizationSet(data)
	return e.readKeyOrder(data)
}

// readSkipSummarizationSet sets Actions.SkipSummarizationSet, after a
// reflective decoding of data, as the decoder of eventdecode.go does: an
// actions.skipSummarization member that decoded to false was set
// explicitly.
func (e *Event) readSkipSummarizationSet(data []byte) {
	if keyorder.Member(keyorder.Member(data, "actions"), "skipSummarization") != nil {
		e.Actions.SkipSummarizationSet = !e.Actions.SkipSummarization
	}
}

// TimeToFloat converts t to google-adk's float seconds (zero for zero time).
func TimeToFloat(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1e6
}

// FloatToTime converts float seconds to a time, rounded to microseconds.
func FloatToTime(f float64) time.Time {
	if f == 0 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
}
