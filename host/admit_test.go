package host

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := baseEvent()
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
// changes nothing but the content, and never makes a stored event partial
// (which would drop its deltas).
func FuzzAdmitEvent(f *testing.F) {
	f.Add([]byte(`{"stateDelta":{"app:x":1}}`), []byte(`{"transferToAgent":"a"}`), false, false)
	f.Add([]byte(`{}`), []byte(`{"rewindBeforeInvocationId":"i"}`), false, true)
	f.Fuzz(func(t *testing.T, beforeActions, afterActions []byte, beforePartial, afterPartial bool) {
		before, after := baseEvent(), baseEvent()
		before.Partial, after.Partial = beforePartial, afterPartial
		if json.Unmarshal(beforeActions, &before.Actions) != nil || json.Unmarshal(afterActions, &after.Actions) != nil {
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
