package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// ErrNotPermitted: a hook's output changes something the module's grants
// do not let it change (e.g. an on_event plugin without State writing
// state through the replacement event's stateDelta).
var ErrNotPermitted = errors.New("output changes what the module's grants do not permit")

// admit is the one gate every hook output passes through, in invoke,
// before anything converts it: what a guest returns is checked against
// what its grants allow, the same rules as its host functions.
//
// Only on_event's output carries side effects (an event with actions); the
// other outputs are content, requests, responses and tool results, whose
// effects the engine applies by google-adk's rules, as for any callback.
// admit refuses an output type it does not know, so a new hook cannot
// slip past it.
func (m *Module) admit(hook abi.Hook, in, out abi.Message) error {
	switch o := out.(type) {
	case *abi.EventOutput:
		ei, _ := in.(*abi.EventInput)
		if ei == nil || o.Event == nil {
			return nil
		}
		return admitEvent(m.cfg.Grants, m.cfg.WriteUserState, m.cfg.WriteAppState, ei.Event, o.Event)
	case *abi.ToolCallOutput, *abi.ContentOutput, *abi.ModelOutput, *abi.BeforeToolOutput,
		*abi.ToolOutput, *abi.UserMessageOutput, *abi.AfterRunOutput, *abi.NotifyOutput:
		return nil
	}
	return fmt.Errorf("%w: no admission rule for hook %s's output %T", ErrNotPermitted, hook, out)
}

// admitEvent checks an on_event replacement against the event it
// replaces. The content may change freely (redaction is what such plugins
// are for). Changes to the actions follow the grants of the matching host
// functions:
//
//   - stateDelta: State; "user:" keys also WriteUserState, "app:" keys
//     WriteAppState (a key set, changed or removed is a change);
//   - artifactDelta: Artifacts;
//   - transferToAgent, transferReason, escalate, skipSummarization,
//     requestedToolConfirmations, and the author (which routes the next
//     turn as a transfer does): Actions;
//   - the event's identity (id, invocationId, branch, timestamp,
//     longRunningToolIds), partial set on a final event (never stored) and the engine's own actions (compaction,
//     rewindBeforeInvocationId, agentState, endOfAgent, setModelResponse,
//     requestedAuthConfigs): never.
func admitEvent(g sandbox.Grants, writeUser, writeApp bool, before, after *abi.Event) error {
	if before == nil {
		before = &abi.Event{}
	}
	var bad []string
	deny := func(field, why string) { bad = append(bad, field+" ("+why+")") }
	never := "no grant allows it"
	if after.ID != before.ID {
		deny("id", never)
	}
	if after.InvocationID != before.InvocationID {
		deny("invocationId", never)
	}
	if after.Branch != before.Branch {
		deny("branch", never)
	}
	if after.Timestamp != before.Timestamp {
		deny("timestamp", never)
	}
	if !slices.Equal(after.LongRunningToolIDs, before.LongRunningToolIDs) {
		deny("longRunningToolIds", never)
	}
	// The runner never stores a partial event, so marking a final one
	// partial would drop its deltas (other modules' writes) unchecked.
	// Leaving partial out of a partial event's replacement changes
	// nothing: the runner keeps the original's.
	if after.Partial && !before.Partial {
		deny("partial", never)
	}
	a, b := &after.Actions, &before.Actions
	if !sameJSON(a.Compaction, b.Compaction) {
		deny("actions.compaction", never)
	}
	if a.RewindBeforeInvocationID != b.RewindBeforeInvocationID {
		deny("actions.rewindBeforeInvocationId", never)
	}
	if !equalish(a.AgentState, b.AgentState) {
		deny("actions.agentState", never)
	}
	if a.EndOfAgent != b.EndOfAgent {
		deny("actions.endOfAgent", never)
	}
	if !sameJSON(a.SetModelResponse, b.SetModelResponse) {
		deny("actions.setModelResponse", never)
	}
	if !equalish(a.RequestedAuthConfigs, b.RequestedAuthConfigs) {
		deny("actions.requestedAuthConfigs", never)
	}
	if !g.Actions {
		why := "needs the actions grant"
		if after.Author != before.Author {
			deny("author", why)
		}
		if a.TransferToAgent != b.TransferToAgent {
			deny("actions.transferToAgent", why)
		}
		if a.TransferReason != b.TransferReason {
			deny("actions.transferReason", why)
		}
		if a.Escalate != b.Escalate {
			deny("actions.escalate", why)
		}
		if a.SkipSummarization != b.SkipSummarization {
			deny("actions.skipSummarization", why)
		}
		if !sameJSON(a.RequestedToolConfirmations, b.RequestedToolConfirmations) {
			deny("actions.requestedToolConfirmations", why)
		}
	}
	if !g.Artifacts && !equalish(a.ArtifactDelta, b.ArtifactDelta) {
		deny("actions.artifactDelta", "needs the artifacts grant")
	}
	for _, key := range changedKeys(a.StateDelta, b.StateDelta) {
		switch {
		case !g.State:
			deny("actions.stateDelta["+key+"]", "needs the state grant")
		case strings.HasPrefix(key, abi.StatePrefixUser) && !writeUser:
			deny("actions.stateDelta["+key+"]", "needs write_user_state")
		case strings.HasPrefix(key, abi.StatePrefixApp) && !writeApp:
			deny("actions.stateDelta["+key+"]", "needs write_app_state")
		case !abi.ValidStateKey(key):
			deny("actions.stateDelta["+key+"]", "not a valid state key")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	const most = 8
	if len(bad) > most {
		bad = append(bad[:most], fmt.Sprintf("and %d more", len(bad)-most))
	}
	return fmt.Errorf("%w: the replacement event changes %s", ErrNotPermitted, strings.Join(bad, ", "))
}

// changedKeys returns the keys set, changed or removed from before to
// after, sorted.
func changedKeys(after, before map[string]any) []string {
	var keys []string
	for k, v := range after {
		if old, ok := before[k]; !ok || !sameJSON(old, v) {
			keys = append(keys, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// sameJSON compares two values as JSON: what the guest sent back was
// decoded from JSON, what the host sent may hold other Go types for the
// same value (int and int64, a struct and a map).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// equalish compares two maps, an empty map equal to a nil one (JSON cannot
// tell them apart after omitzero).
func equalish[M ~map[K]V, K comparable, V any](a, b M) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return sameJSON(a, b)
}
