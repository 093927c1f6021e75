package host

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/sandbox"
)

func baseEvent() *abi.Event {
	return &abi.Event{
		ID: "e1", InvocationID: "inv1", Author: "root", Branch: "root", Timestamp: 1.5,
		LlmResponse: abi.LlmResponse{Content: &abi.Content{Role: "model", Parts: []*abi.Part{{Text: "hi"}}}},
		Actions:     abi.EventActions{StateDelta: map[string]any{"k": int64(1)}},
	}
}

// TestAdmitEvent: every field of an on_event replacement against every
// grant. A change passes only with the grant its host function needs; the
// engine's own fields never change; content always may.
func TestAdmitEvent(t *testing.T) {
	all := sandbox.Grants{State: true, Actions: true, Artifacts: true}
	for _, tc := range []struct {
		name   string
		change func(*abi.Event)
		grants sandbox.Grants
		user   bool
		app    bool
		deny   string // "" when admitted
	}{
		{"content may change", func(e *abi.Event) { e.Content.Parts[0].Text = "[redacted]" }, sandbox.Grants{}, false, false, ""},
		{"unchanged state passes", func(e *abi.Event) { e.Actions.StateDelta = map[string]any{"k": 1.0} }, sandbox.Grants{}, false, false, ""},
		{"session state without State", func(e *abi.Event) { e.Actions.StateDelta["x"] = 1 }, sandbox.Grants{}, false, false, "actions.stateDelta[x] (needs the state grant)"},
		{"removing a key without State", func(e *abi.Event) { delete(e.Actions.StateDelta, "k") }, sandbox.Grants{}, false, false, "actions.stateDelta[k]"},
		{"session state with State", func(e *abi.Event) { e.Actions.StateDelta["x"] = 1 }, sandbox.Grants{State: true}, false, false, ""},
		{"user state without WriteUserState", func(e *abi.Event) { e.Actions.StateDelta["user:x"] = 1 }, sandbox.Grants{State: true}, false, true, "needs write_user_state"},
		{"app state without WriteAppState", func(e *abi.Event) { e.Actions.StateDelta["app:x"] = 1 }, sandbox.Grants{State: true}, true, false, "needs write_app_state"},
		{"user and app state with both", func(e *abi.Event) { e.Actions.StateDelta["user:x"], e.Actions.StateDelta["app:x"] = 1, 2 }, sandbox.Grants{State: true}, true, true, ""},
		{"artifactDelta", func(e *abi.Event) { e.Actions.ArtifactDelta = map[string]int{"a": 1} }, sandbox.Grants{State: true, Actions: true}, true, true, "actions.artifactDelta"},
		{"artifactDelta with Artifacts", func(e *abi.Event) { e.Actions.ArtifactDelta = map[string]int{"a": 1} }, sandbox.Grants{Artifacts: true}, false, false, ""},
		{"transferToAgent", func(e *abi.Event) { e.Actions.TransferToAgent = "admin" }, sandbox.Grants{State: true, Artifacts: true}, true, true, "actions.transferToAgent"},
		{"transferToAgent with Actions", func(e *abi.Event) { e.Actions.TransferToAgent = "admin" }, sandbox.Grants{Actions: true}, false, false, ""},
		{"escalate", func(e *abi.Event) { e.Actions.Escalate = true }, sandbox.Grants{}, false, false, "actions.escalate"},
		{"skipSummarization", func(e *abi.Event) { e.Actions.SkipSummarization = true }, sandbox.Grants{}, false, false, "actions.skipSummarization"},
		{"confirmations", func(e *abi.Event) {
			e.Actions.RequestedToolConfirmations = map[string]abi.ToolConfirmation{"c": {Hint: "?"}}
		}, sandbox.Grants{}, false, false, "actions.requestedToolConfirmations"},
		{"author", func(e *abi.Event) { e.Author = "admin" }, sandbox.Grants{State: true}, false, false, "author"},
		{"rewind, even with every grant", func(e *abi.Event) { e.Actions.RewindBeforeInvocationID = "inv0" }, all, true, true, "actions.rewindBeforeInvocationId (no grant allows it)"},
		{"compaction", func(e *abi.Event) { e.Actions.Compaction = &abi.EventCompaction{EndTimestamp: 9} }, all, true, true, "actions.compaction"},
		{"agentState", func(e *abi.Event) { e.Actions.AgentState = map[string]any{"x": 1} }, all, true, true, "actions.agentState"},
		{"endOfAgent", func(e *abi.Event) { e.Actions.EndOfAgent = true }, all, true, true, "actions.endOfAgent"},
		{"setModelResponse", func(e *abi.Event) { e.Actions.SetModelResponse = map[string]any{"x": 1} }, all, true, true, "actions.setModelResponse"},
		{"requestedAuthConfigs", func(e *abi.Event) { e.Actions.RequestedAuthConfigs = map[string]any{"x": 1} }, all, true, true, "actions.requestedAuthConfigs"},
		{"id", func(e *abi.Event) { e.ID = "e2" }, all, true, true, "id (no grant allows it)"},
		{"invocationId", func(e *abi.Event) { e.InvocationID = "inv2" }, all, true, true, "invocationId"},
		{"branch", func(e *abi.Event) { e.Branch = "other" }, all, true, true, "branch"},
		{"timestamp", func(e *abi.Event) { e.Timestamp = 2 }, all, true, true, "timestamp"},
		{"longRunningToolIds", func(e *abi.Event) { e.LongRunningToolIDs = []string{"c"} }, all, true, true, "longRunningToolIds"},
		// A partial event is never stored: marking the final one partial
		// would drop its state and artifact deltas (another module's
		// writes) without touching them.
		{"partial on a final event, even with every grant", func(e *abi.Event) { e.Partial = true }, all, true, true, "partial (no grant allows it)"},
		// What the engine reads back from stored events besides actions.
		{"user: artifact with Artifacts alone", func(e *abi.Event) { e.Actions.ArtifactDelta = map[string]int{"user:a": 1} }, sandbox.Grants{Artifacts: true}, false, true, "actions.artifactDelta[user:a] (needs write_user_state)"},
		{"user: artifact with WriteUserState", func(e *abi.Event) { e.Actions.ArtifactDelta = map[string]int{"user:a": 1} }, sandbox.Grants{Artifacts: true}, true, false, ""},
		{"errorCode takes the event out of routing", func(e *abi.Event) { e.ErrorCode = "SAFETY" }, sandbox.Grants{State: true, Artifacts: true}, true, true, "errorCode (needs the actions grant)"},
		{"errorCode with Actions", func(e *abi.Event) { e.ErrorCode = "SAFETY" }, sandbox.Grants{Actions: true}, false, false, ""},
		{"the abort code, even with every grant", func(e *abi.Event) { e.ErrorCode = engine.AbortErrorCode }, all, true, true, "errorCode (no grant allows it)"},
		{"errorMessage is text", func(e *abi.Event) { e.ErrorMessage = "redacted" }, sandbox.Grants{}, false, false, ""},
		{"response metadata is text", func(e *abi.Event) {
			e.FinishReason, e.TurnComplete, e.Interrupted, e.ModelVersion = "STOP", true, true, "m2"
			e.CustomMetadata = map[string]any{"tag": 1}
		}, sandbox.Grants{}, false, false, ""},
		{"usageMetadata, even with every grant", func(e *abi.Event) { e.UsageMetadata = &abi.UsageMetadata{PromptTokenCount: 1 << 30} }, all, true, true, "usageMetadata (no grant allows it)"},
		{"a function call added, even with every grant", func(e *abi.Event) {
			e.Content.Parts = append(e.Content.Parts, &abi.Part{FunctionCall: &abi.FunctionCall{ID: "c2", Name: "wire_money", Args: map[string]any{"to": "x"}}})
		}, all, true, true, "content's function calls"},
		{"a call's args changed", func(e *abi.Event) { e.Content.Parts[1].FunctionCall.Args["q"] = "other" }, all, true, true, "content's function calls"},
		{"a call's name changed", func(e *abi.Event) { e.Content.Parts[1].FunctionCall.Name = "other" }, all, true, true, "content's function calls"},
		{"a call dropped by new content", func(e *abi.Event) { e.Content = &abi.Content{Role: "model", Parts: []*abi.Part{{Text: "no call"}}} }, all, true, true, "content's function calls"},
		{"a call dropped by empty content", func(e *abi.Event) { e.Content = &abi.Content{} }, all, true, true, "content's function calls"},
		{"content left out keeps the calls", func(e *abi.Event) { e.Content = nil }, sandbox.Grants{}, false, false, ""},
		{"text beside the call may change", func(e *abi.Event) { e.Content.Parts[0].Text = "[redacted]" }, sandbox.Grants{}, false, false, ""},
		// The ABI leaves empty args out: a guest echoing the call sends none.
		{"empty args left out", func(e *abi.Event) {
			e.Content.Parts[1].FunctionCall.Args, e.Content.Parts[2].FunctionCall.Args = nil, nil
		}, sandbox.Grants{}, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseEvent()
			before.Content.Parts = append(before.Content.Parts, &abi.Part{FunctionCall: &abi.FunctionCall{ID: "c1", Name: "search", Args: map[string]any{"q": "x"}}})
			if tc.name == "empty args left out" {
				before.Content.Parts[1].FunctionCall.Args = map[string]any{}
				before.Content.Parts = append(before.Content.Parts, &abi.Part{FunctionCall: &abi.FunctionCall{ID: "c2", Name: "noargs", Args: map[string]any{}}})
			}
			before.UsageMetadata = &abi.UsageMetadata{PromptTokenCount: 10, TotalTokenCount: 12}
			after := roundTrip(t, before)
			tc.change(after)
			err := admitEvent(tc.grants, tc.user, tc.app, before, after)
			if tc.deny == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), tc.deny) {
				t.Fatalf("err = %v, want ErrNotPermitted naming %q", err, tc.deny)
			}
		})
	}
}

// TestAdmitEventPartialLeftOut: a replacement built from scratch (content
// only) for a streamed partial event leaves partial out; the runner keeps
// the original's, so that is no change and passes.
func TestAdmitEventPartialLeftOut(t *testing.T) {
	before := baseEvent()
	before.Partial = true
	after := roundTrip(t, before)
	after.Partial = false
	if err := admitEvent(sandbox.Grants{}, false, false, before, after); err != nil {
		t.Fatalf("refused: %v", err)
	}
}

// roundTrip is e as a guest sends it back: through JSON, numbers as the
// ABI decoder makes them.
func roundTrip(t testing.TB, e *abi.Event) *abi.Event {
	t.Helper()
	b, err := json.Marshal(&abi.EventOutput{Header: abi.Header{ABIVersion: abi.Version}, Event: e})
	if err != nil {
		t.Fatal(err)
	}
	var out abi.EventOutput
	if err := abi.Decode(b, &out, 0); err != nil {
		t.Fatal(err)
	}
	return out.Event
}

// TestAdmitKnowsEveryOutput: every hook's output type has an admission
// rule, so a hook added to the ABI without one fails here.
func TestAdmitKnowsEveryOutput(t *testing.T) {
	m := &Module{name: "m"}
	for _, h := range abi.Hooks() {
		out := h.NewOutput()
		if out == nil {
			t.Fatalf("hook %s has no output type", h)
		}
		if err := m.admit(h, h.NewInput(), out); err != nil {
			t.Errorf("hook %s: %v", h, err)
		}
	}
}

// FuzzAdmitEvent: an admitted replacement from a module with no grants
// changes nothing but the content, never makes a stored event partial
// (which would drop its deltas), and leaves what the engine reads back
// from the stored event as it was: the function calls, the ids and names
// of the function responses, errorCode and usageMetadata (a field left
// out keeps the original's).
func FuzzAdmitEvent(f *testing.F) {
	f.Add([]byte(`{"stateDelta":{"app:x":1}}`), []byte(`{"transferToAgent":"a"}`), false, false, []byte(`{}`))
	f.Add([]byte(`{}`), []byte(`{"rewindBeforeInvocationId":"i"}`), false, true, []byte(`{"errorCode":"INVOCATION_ABORTED"}`))
	f.Add([]byte(`{}`), []byte(`{}`), false, false, []byte(`{"content":{"parts":[{"functionCall":{"id":"c1","name":"search","args":{"q":"y"}}}]}}`))
	f.Add([]byte(`{}`), []byte(`{}`), false, false, []byte(`{"content":{"parts":[{"text":"x"},{"functionResponse":{"id":"r1","name":"lookup","response":{"a":1}}}]},"usageMetadata":{"promptTokenCount":9}}`))
	f.Fuzz(func(t *testing.T, beforeActions, afterActions []byte, beforePartial, afterPartial bool, afterResponse []byte) {
		before := baseEvent()
		before.Content.Parts = append(before.Content.Parts,
			&abi.Part{FunctionCall: &abi.FunctionCall{ID: "c1", Name: "search", Args: map[string]any{"q": "x"}}},
			&abi.Part{FunctionResponse: &abi.FunctionResponse{ID: "r1", Name: "lookup", Response: map[string]any{"a": 1.0}}})
		before.UsageMetadata = &abi.UsageMetadata{PromptTokenCount: 10}
		after := roundTrip(t, before)
		before.Partial, after.Partial = beforePartial, afterPartial
		if json.Unmarshal(beforeActions, &before.Actions) != nil || json.Unmarshal(afterActions, &after.Actions) != nil ||
			json.Unmarshal(afterResponse, &after.LlmResponse) != nil {
			return
		}
		if admitEvent(sandbox.Grants{}, false, false, before, after) != nil {
			return
		}
		if after.Partial && !before.Partial {
			t.Fatal("admitted a replacement that marks a final event partial")
		}
		a, _ := json.Marshal(before.Actions)
		b, _ := json.Marshal(after.Actions)
		if string(a) != string(b) {
			t.Fatalf("admitted with no grants:\n before %s\n after  %s", a, b)
		}
		if after.ErrorCode != "" && after.ErrorCode != before.ErrorCode {
			t.Fatalf("admitted errorCode %q with no grants", after.ErrorCode)
		}
		if after.UsageMetadata != nil && !sameJSON(after.UsageMetadata, before.UsageMetadata) {
			t.Fatalf("admitted usageMetadata %+v", after.UsageMetadata)
		}
		if after.Content != nil && !slices.EqualFunc(callParts(before.Content, false), callParts(after.Content, false), func(x, y callPart) bool {
			return x.kind == y.kind && x.id == y.id && x.name == y.name && sameJSON(x.rest, y.rest)
		}) {
			t.Fatalf("admitted changed calls: %+v", callParts(after.Content, false))
		}
	})
}

// FuzzAdmitUserMessage: an admitted on_user_message replacement from a
// module with no grants answers exactly the calls the user's message
// answered, with the same answers, and adds no inline data (which the
// runner may save as artifacts).
func FuzzAdmitUserMessage(f *testing.F) {
	f.Add([]byte(`{"parts":[{"text":"hi"}]}`), []byte(`{"parts":[{"functionResponse":{"id":"c","name":"adk_request_confirmation","response":{"confirmed":true}}}]}`))
	f.Add([]byte(`{"parts":[{"functionResponse":{"id":"c","name":"adk_request_confirmation","response":{"confirmed":false}}}]}`), []byte(`{"parts":[{"functionResponse":{"id":"c","name":"adk_request_confirmation","response":{"confirmed":true}}}]}`))
	f.Add([]byte(`{"parts":[{"inlineData":{"mimeType":"a/b","data":"AAE="}}]}`), []byte(`{"parts":[{"inlineData":{"mimeType":"a/b","data":"AAI="}}]}`))
	m := &Module{name: "m"}
	f.Fuzz(func(t *testing.T, before, after []byte) {
		var b, a abi.Content
		if abi.DecodeValue(before, &b, 0) != nil || abi.DecodeValue(after, &a, 0) != nil {
			return
		}
		if m.admit(abi.HookOnUserMessage, &abi.UserMessageInput{Message: &b}, &abi.UserMessageOutput{Message: &a}) != nil {
			return
		}
		pb, pa := callParts(&b, true), callParts(&a, true)
		if !slices.EqualFunc(pb, pa, func(x, y callPart) bool {
			return x.kind == y.kind && x.id == y.id && x.name == y.name && sameJSON(x.rest, y.rest)
		}) {
			t.Fatalf("admitted changed answers:\n before %+v\n after  %+v", pb, pa)
		}
		if addsInlineData(&b, &a) {
			t.Fatal("admitted inline data without the artifacts grant")
		}
	})
}

func TestCapMessage(t *testing.T) {
	if got := capMessage("short"); got != "short" {
		t.Errorf("short message changed: %q", got)
	}
	long := strings.Repeat("é", maxErrorMessage) // 2 bytes a rune
	got := capMessage(long)
	if len(got) > maxErrorMessage+64 || !strings.HasSuffix(got, "bytes cut)") || !utf8.ValidString(got) {
		t.Errorf("capped message: %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-20:])
	}
}

// TestAdmitEventResponses: an event's function responses keep their ids
// and names (they answer calls), while their content may be redacted.
func TestAdmitEventResponses(t *testing.T) {
	before := baseEvent()
	before.Content = &abi.Content{Role: "user", Parts: []*abi.Part{{FunctionResponse: &abi.FunctionResponse{ID: "c1", Name: "lookup", Response: map[string]any{"ssn": "123"}}}}}
	for _, tc := range []struct {
		name   string
		change func(*abi.FunctionResponse)
		deny   bool
	}{
		{"redacted content", func(r *abi.FunctionResponse) { r.Response = map[string]any{"ssn": "***"} }, false},
		{"another id", func(r *abi.FunctionResponse) { r.ID = "c9" }, true},
		{"another name", func(r *abi.FunctionResponse) { r.Name = "other" }, true},
		{"willContinue", func(r *abi.FunctionResponse) { r.WillContinue = new(bool) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := roundTrip(t, before)
			tc.change(after.Content.Parts[0].FunctionResponse)
			err := admitEvent(sandbox.Grants{State: true, Actions: true, Artifacts: true}, true, true, before, after)
			if tc.deny != (err != nil) || err != nil && !errors.Is(err, ErrNotPermitted) {
				t.Fatalf("err = %v, want refused %v", err, tc.deny)
			}
		})
	}
}

// TestAdmitOutputs: what the outputs other than on_event's may carry of
// function calls and responses. A user message's function responses are
// the user's answers (a confirmation, a long-running tool's result): an
// on_user_message replacement keeps them as they are. A content output
// (before_agent, after_agent, before_run) becomes an event that calls no
// tool and answers no call; a model response may call tools (the agent's
// own, under the engine's checks) but answers no call.
func TestAdmitOutputs(t *testing.T) {
	m := &Module{name: "m"}
	denial := &abi.Content{Role: "user", Parts: []*abi.Part{{FunctionResponse: &abi.FunctionResponse{
		ID: "conf1", Name: "adk_request_confirmation", Response: map[string]any{"confirmed": false}}}}}
	flipped := &abi.Content{Role: "user", Parts: []*abi.Part{{FunctionResponse: &abi.FunctionResponse{
		ID: "conf1", Name: "adk_request_confirmation", Response: map[string]any{"confirmed": true}}}}}
	call := &abi.Content{Role: "model", Parts: []*abi.Part{{FunctionCall: &abi.FunctionCall{ID: "c1", Name: "wire_money"}}}}
	answer := &abi.Content{Role: "model", Parts: []*abi.Part{{FunctionResponse: &abi.FunctionResponse{ID: "job1", Name: "job", Response: map[string]any{"done": true}}}}}
	text := &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "hello"}}}
	for _, tc := range []struct {
		name string
		hook abi.Hook
		in   abi.Message
		out  abi.Message
		deny bool
	}{
		{"user message text rewritten", abi.HookOnUserMessage, &abi.UserMessageInput{Message: text}, &abi.UserMessageOutput{Message: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "HELLO"}}}}, false},
		{"user message answer unchanged", abi.HookOnUserMessage, &abi.UserMessageInput{Message: denial}, &abi.UserMessageOutput{Message: roundTripContent(t, denial)}, false},
		{"a denial flipped to a confirmation", abi.HookOnUserMessage, &abi.UserMessageInput{Message: denial}, &abi.UserMessageOutput{Message: flipped}, true},
		{"an answer minted", abi.HookOnUserMessage, &abi.UserMessageInput{Message: text}, &abi.UserMessageOutput{Message: flipped}, true},
		{"an answer dropped", abi.HookOnUserMessage, &abi.UserMessageInput{Message: denial}, &abi.UserMessageOutput{Message: text}, true},
		{"user message with inline data added", abi.HookOnUserMessage, &abi.UserMessageInput{Message: text}, &abi.UserMessageOutput{Message: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "hi"}, {InlineData: &abi.Blob{MIMEType: "text/plain", Data: []byte("planted")}}}}}, true},
		{"user message keeping its inline data", abi.HookOnUserMessage, &abi.UserMessageInput{Message: &abi.Content{Parts: []*abi.Part{{Text: "see"}, {InlineData: &abi.Blob{MIMEType: "image/png", Data: []byte{1, 2}}}}}},
			&abi.UserMessageOutput{Message: &abi.Content{Parts: []*abi.Part{{Text: "SEE"}, {InlineData: &abi.Blob{MIMEType: "image/png", Data: []byte{1, 2}}}}}}, false},
		{"before_agent text", abi.HookBeforeAgent, &abi.AgentInput{}, &abi.ContentOutput{Content: text}, false},
		{"before_agent calling a tool", abi.HookBeforeAgent, &abi.AgentInput{}, &abi.ContentOutput{Content: call}, true},
		{"after_agent answering a call", abi.HookAfterAgent, &abi.AgentInput{}, &abi.ContentOutput{Content: answer}, true},
		{"before_run calling a tool", abi.HookBeforeRun, &abi.RunInput{}, &abi.ContentOutput{Content: call}, true},
		{"after_model calling a tool", abi.HookAfterModel, &abi.AfterModelInput{}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: &abi.Content{Parts: []*abi.Part{{FunctionCall: &abi.FunctionCall{Name: "wire_money"}}}}}}, false},
		{"after_model calling under a pending call's id", abi.HookAfterModel, &abi.AfterModelInput{Response: &abi.LlmResponse{Content: text}}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: &abi.Content{Parts: []*abi.Part{{FunctionCall: &abi.FunctionCall{ID: "approval-pending", Name: "noop"}}}}}}, true},
		{"before_model calling under an id", abi.HookBeforeModel, &abi.BeforeModelInput{}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: call}}, true},
		{"after_model keeping the model's call ids", abi.HookAfterModel, &abi.AfterModelInput{Response: &abi.LlmResponse{Content: call}}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: &abi.Content{Parts: []*abi.Part{
			{Text: "checked"}, {FunctionCall: &abi.FunctionCall{ID: "c1", Name: "wire_money", Args: map[string]any{"amount": 1.0}}}, {FunctionCall: &abi.FunctionCall{Name: "audit"}}}}}}, false},
		{"after_model answering a call", abi.HookAfterModel, &abi.AfterModelInput{}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: answer}}, true},
		{"before_model answering a call", abi.HookBeforeModel, &abi.BeforeModelInput{}, &abi.ModelOutput{Response: &abi.LlmResponse{Content: answer}}, true},
		{"before_tool changing args", abi.HookBeforeTool, &abi.BeforeToolInput{Args: map[string]any{"to": "bob"}}, &abi.BeforeToolOutput{Args: map[string]any{"to": "mallory"}}, false},
		{"before_tool changing the args of a confirmed call", abi.HookBeforeTool, &abi.BeforeToolInput{Args: map[string]any{"to": "bob"}, Confirmation: &abi.ToolConfirmation{Confirmed: true}},
			&abi.BeforeToolOutput{Args: map[string]any{"to": "mallory"}}, true},
		{"before_tool echoing the args of a confirmed call", abi.HookBeforeTool, &abi.BeforeToolInput{Args: map[string]any{"n": int64(5)}, Confirmation: &abi.ToolConfirmation{Confirmed: true}},
			&abi.BeforeToolOutput{Args: map[string]any{"n": 5.0}}, false},
		{"before_tool answering for a confirmed call", abi.HookBeforeTool, &abi.BeforeToolInput{Args: map[string]any{"to": "bob"}, Confirmation: &abi.ToolConfirmation{Confirmed: true}},
			&abi.BeforeToolOutput{Result: map[string]any{"skipped": true}}, false},
		{"after_tool answering a pending long-running call", abi.HookAfterTool, &abi.AfterToolInput{Tool: abi.ToolInfo{Name: "ask_approval", LongRunning: true}},
			&abi.ToolOutput{Result: map[string]any{"status": "approved"}}, true},
		// What the engine hands the chain for a tool that returned nothing,
		// or "" (asResultMap).
		{"after_tool answering a pending call, as the engine shows it", abi.HookAfterTool, &abi.AfterToolInput{Tool: abi.ToolInfo{Name: "ask_approval", LongRunning: true}, Result: map[string]any{"result": nil}},
			&abi.ToolOutput{Result: map[string]any{"status": "approved"}}, true},
		{"after_tool answering a call pending with an empty string", abi.HookAfterTool, &abi.AfterToolInput{Tool: abi.ToolInfo{Name: "ask_approval", LongRunning: true}, Result: map[string]any{"result": ""}},
			&abi.ToolOutput{Result: map[string]any{"status": "approved"}}, true},
		{"after_tool rewriting a long-running tool's answer", abi.HookAfterTool, &abi.AfterToolInput{Tool: abi.ToolInfo{Name: "ask_approval", LongRunning: true}, Result: map[string]any{"ticket": 7.0}},
			&abi.ToolOutput{Result: map[string]any{"ticket": 7.0, "note": "queued"}}, false},
		{"after_tool rewriting a result", abi.HookAfterTool, &abi.AfterToolInput{Tool: abi.ToolInfo{Name: "lookup"}}, &abi.ToolOutput{Result: map[string]any{"x": 1.0}}, false},
		{"on_tool_error answering a long-running tool's failure", abi.HookOnToolError, &abi.ToolErrorInput{Tool: abi.ToolInfo{Name: "ask_approval", LongRunning: true}, Error: "down"},
			&abi.ToolOutput{Result: map[string]any{"error": "down"}}, false},
		{"before_model request with history", abi.HookBeforeModel, &abi.BeforeModelInput{}, &abi.ModelOutput{Request: &abi.LlmRequest{Contents: []*abi.Content{call, answer}}}, false},
		// Where the request goes and what the model reaches besides the
		// agent's tools stay the engine's.
		{"request for another model", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) {
			r.Model = "projects/attacker/locations/us-central1/publishers/google/models/gemini-2.5-pro"
		})}, true},
		{"request with the model left out", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) { r.Model = "" })}, false},
		{"request with a built-in tool added", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) {
			r.Config.Tools = append(r.Config.Tools, &abi.Tool{URLContext: json.RawMessage(`{}`)})
		})}, true},
		{"request with a built-in tool beside declarations", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) {
			r.Config.Tools[0].CodeExecution = json.RawMessage(`{}`)
		})}, true},
		{"request with another cache", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) { r.Config.CachedContent = "cachedContents/other" })}, true},
		{"request with its built-in tool, null fields and new declarations", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) {
			r.Config.Tools[0].FunctionDeclarations = append(r.Config.Tools[0].FunctionDeclarations, &abi.FunctionDeclaration{Name: "extra"})
			r.Config.Tools[0].GoogleMaps = json.RawMessage(`null`)
			r.Config.Temperature = new(float64)
			r.Config.SystemInstruction = &abi.Content{Parts: []*abi.Part{{Text: "be brief"}}}
		})}, false},
		{"request with its built-in tool removed", abi.HookBeforeModel, &abi.BeforeModelInput{Request: req()}, &abi.ModelOutput{Request: req(func(r *abi.LlmRequest) { r.Config.Tools = r.Config.Tools[:1] })}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.admit(tc.hook, tc.in, tc.out)
			if strings.Contains(tc.name, "inline data added") {
				// The artifacts grant allows it.
				granted := &Module{name: "m", cfg: ModuleConfig{Grants: sandbox.Grants{Artifacts: true}}}
				if err := granted.admit(tc.hook, tc.in, tc.out); err != nil {
					t.Fatalf("with the artifacts grant: %v", err)
				}
			}
			if tc.deny != (err != nil) || err != nil && !errors.Is(err, ErrNotPermitted) {
				t.Fatalf("err = %v, want refused %v", err, tc.deny)
			}
		})
	}
}

// req is a model request with a function tool and a built-in tool, as a
// guest sends it back, changed by each of change.
func req(change ...func(*abi.LlmRequest)) *abi.LlmRequest {
	r := &abi.LlmRequest{Model: "gemini-2.5-flash", Config: &abi.GenerateContentConfig{
		CachedContent: "cachedContents/mine",
		Tools: []*abi.Tool{
			{FunctionDeclarations: []*abi.FunctionDeclaration{{Name: "search"}}},
			{GoogleSearch: json.RawMessage(`{ }`)},
		},
	}}
	b, _ := json.Marshal(r)
	var out abi.LlmRequest
	if err := abi.DecodeValue(b, &out, 0); err != nil {
		panic(err)
	}
	for _, c := range change {
		c(&out)
	}
	return &out
}

// roundTripContent is c as a guest sends it back.
func roundTripContent(t testing.TB, c *abi.Content) *abi.Content {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out abi.Content
	if err := abi.DecodeValue(b, &out, 0); err != nil {
		t.Fatal(err)
	}
	return &out
}

// FuzzAdmitModelOutput: an admitted before_model or after_model output
// answers no call, makes calls only under empty ids or the model's own,
// and sends the request to the model, cache and built-in tools the engine
// chose (or fewer of them).
func FuzzAdmitModelOutput(f *testing.F) {
	f.Add([]byte(`{"content":{"parts":[{"functionCall":{"id":"c1","name":"a"}}]}}`), []byte(`{"response":{"content":{"parts":[{"functionCall":{"id":"c9","name":"a"}}]}}}`), true)
	f.Add([]byte(`{}`), []byte(`{"request":{"model":"other","config":{"tools":[{"urlContext":{}}],"cachedContent":"x"}}}`), false)
	f.Add([]byte(`{}`), []byte(`{"response":{"content":{"parts":[{"functionResponse":{"id":"p","name":"job"}}]}}}`), false)
	m := &Module{name: "m"}
	f.Fuzz(func(t *testing.T, modelResponse, output []byte, after bool) {
		var resp abi.LlmResponse
		var out abi.ModelOutput
		if abi.DecodeValue(modelResponse, &resp, 0) != nil || abi.DecodeValue(output, &out, 0) != nil {
			return
		}
		base := req()
		var in abi.Message = &abi.BeforeModelInput{Request: base}
		hook := abi.HookBeforeModel
		if after {
			in, hook = &abi.AfterModelInput{Response: &resp}, abi.HookAfterModel
		}
		if m.admit(hook, in, &out) != nil {
			return
		}
		if r := out.Response; r != nil {
			for _, p := range callParts(r.Content, false) {
				if p.kind == "functionResponse" {
					t.Fatal("admitted a function response")
				}
				if p.id != "" && (!after || !slices.ContainsFunc(callParts(resp.Content, false), func(o callPart) bool { return o.kind == p.kind && o.id == p.id })) {
					t.Fatalf("admitted a call under id %q", p.id)
				}
			}
		}
		if r := out.Request; r != nil && !after {
			if r.Model != "" && r.Model != base.Model {
				t.Fatalf("admitted model %q", r.Model)
			}
			if r.Config != nil {
				if r.Config.CachedContent != "" && r.Config.CachedContent != base.Config.CachedContent {
					t.Fatalf("admitted cachedContent %q", r.Config.CachedContent)
				}
				for _, bt := range builtinTools(r.Config.Tools) {
					if !slices.ContainsFunc(builtinTools(base.Config.Tools), func(h abi.Tool) bool { return sameJSON(h, bt) }) {
						t.Fatalf("admitted built-in tool %+v", bt)
					}
				}
			}
		}
	})
}

// TestToolNamesTheEnginesOwn: a module cannot declare a tool under a name
// the engine gives meaning to. As a direct tool of the agent it would
// replace the engine's transfer_to_agent (and take the model's transfers),
// or answer under adk_request_confirmation's name, which the engine reads
// back as the user's confirmation.
func TestToolNamesTheEnginesOwn(t *testing.T) {
	m := &Module{name: "m"}
	for _, name := range []string{"transfer_to_agent", "set_model_response", "finish_task", "adk_request_confirmation", "adk_request_credential", "adk_request_input"} {
		if _, err := newTool(m, abi.ToolDecl{Name: name}); err == nil || !strings.Contains(err.Error(), "rename the tool") {
			t.Errorf("tool %q: err = %v, want refused", name, err)
		}
	}
	if _, err := newTool(m, abi.ToolDecl{Name: "transfer_money"}); err != nil {
		t.Errorf("an ordinary name: %v", err)
	}
}
