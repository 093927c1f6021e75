package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
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
// What the engine reads back from the session to decide what runs is not
// content, wherever it sits: the function calls of an event (run again on
// resumption and after a confirmation) and the function responses that
// answer them (a confirmation, a long-running tool's result). So no output
// may mint or alter those; see admitCalls. admit refuses an output type it
// does not know, so a new hook cannot slip past it.
func (m *Module) admit(hook abi.Hook, in, out abi.Message) error {
	switch o := out.(type) {
	case *abi.EventOutput:
		ei, _ := in.(*abi.EventInput)
		if ei == nil || o.Event == nil {
			return nil
		}
		return admitEvent(m.cfg.Grants, m.cfg.WriteUserState, m.cfg.WriteAppState, ei.Event, o.Event)
	case *abi.UserMessageOutput:
		ui, _ := in.(*abi.UserMessageInput)
		if ui == nil || o.Message == nil {
			return nil
		}
		bad := admitCalls("message", ui.Message, o.Message, true)
		if !m.cfg.Grants.Artifacts && addsInlineData(ui.Message, o.Message) {
			// With save_input_blobs_as_artifacts the runner saves a user
			// message's inline data as artifacts of the session.
			bad = append(bad, "message's inline data (needs the artifacts grant: the runner may save it as an artifact)")
		}
		return refuse(bad)
	case *abi.ContentOutput:
		// before_agent, after_agent, before_run: the content becomes an
		// event of the agent (or "model"), which calls no tool and
		// answers no call.
		return refuse(admitCalls("content", nil, o.Content, true))
	case *abi.ModelOutput:
		// A response stands in for the model's, whose function calls run
		// through the agent's own tools under the engine's checks; but a
		// model never answers a call.
		var bad []string
		if o.Response != nil {
			var model *abi.LlmResponse
			if ai, _ := in.(*abi.AfterModelInput); ai != nil {
				model = ai.Response
			}
			bad = admitResponses("response.content", o.Response.Content)
			bad = append(bad, admitCallIDs(model, o.Response)...)
		}
		if bi, _ := in.(*abi.BeforeModelInput); bi != nil && o.Request != nil {
			bad = append(bad, admitRequest(bi.Request, o.Request)...)
		}
		return refuse(bad)
	case *abi.BeforeToolOutput:
		// A confirmed call runs with the arguments the user confirmed
		// (the engine checks them against the history); new ones would
		// run what nobody confirmed.
		bi, _ := in.(*abi.BeforeToolInput)
		if bi == nil || bi.Confirmation == nil || !bi.Confirmation.Confirmed || o.Args == nil || sameJSON(orNil(o.Args), orNil(bi.Args)) {
			return nil
		}
		return refuse([]string{"args of a call the user confirmed (no grant allows it: the user confirmed the call with its arguments)"})
	case *abi.ToolOutput:
		// A long-running tool that returned nothing has left its call
		// pending: the answer comes later from outside (often a person),
		// and the engine stores none now. after_tool may rewrite results,
		// not answer in that answer's place.
		ai, _ := in.(*abi.AfterToolInput)
		if ai == nil || !ai.Tool.LongRunning || !pending(ai.Result) || len(o.Result) == 0 {
			return nil
		}
		return refuse([]string{"result of a long-running call its tool left pending (no grant allows it: the answer comes later, from outside)"})
	case *abi.ToolCallOutput, *abi.AfterRunOutput, *abi.NotifyOutput:
		return nil
	}
	return fmt.Errorf("%w: no admission rule for hook %s's output %T", ErrNotPermitted, hook, out)
}

// pending reports whether an after_tool input's result is a long-running
// tool's "no answer yet": the engine hands the chain a result that is not
// an object as {"result": v}, so nothing (nil) and "" (both empty to the
// engine) arrive as {"result": null} and {"result": ""}.
func pending(result map[string]any) bool {
	if len(result) == 0 {
		return true
	}
	v, ok := result["result"]
	return ok && len(result) == 1 && (v == nil || v == "")
}

// refuse is the error of an output changing the fields named in bad.
func refuse(bad []string) error {
	if len(bad) == 0 {
		return nil
	}
	const most = 8
	if len(bad) > most {
		bad = append(bad[:most], fmt.Sprintf("and %d more", len(bad)-most))
	}
	return fmt.Errorf("%w: the output changes %s", ErrNotPermitted, strings.Join(bad, ", "))
}

// callPart is what of a function call or response part the engine acts
// on: the call's id, name and arguments; the response's id, name and
// willContinue, and, when bodies count, its response.
type callPart struct {
	kind, id, name string
	rest           any
}

// callParts lists c's function call and response parts in order.
func callParts(c *abi.Content, bodies bool) []callPart {
	if c == nil {
		return nil
	}
	var out []callPart
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			out = append(out, callPart{"functionCall", p.FunctionCall.ID, p.FunctionCall.Name, orNil(p.FunctionCall.Args)})
		case p.FunctionResponse != nil:
			r := p.FunctionResponse
			rest := any(r.WillContinue)
			if bodies {
				rest = []any{r.WillContinue, orNil(r.Response)}
			}
			out = append(out, callPart{"functionResponse", r.ID, r.Name, rest})
		}
	}
	return out
}

// orNil is m, or nil when empty: the ABI leaves an empty map out
// (omitempty), so a guest echoing {} sends nothing.
func orNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// admitCalls checks that after carries the same function calls and
// responses as before, in the same order: the engine runs stored calls
// again on resumption and after a confirmation, and reads the responses
// as the answers to them. bodies also freezes the responses' content (a
// user message's are the user's answers: a confirmation, a long-running
// tool's result); without it a response's content may change (an event's
// tool results, which redaction edits).
func admitCalls(field string, before, after *abi.Content, bodies bool) []string {
	b, a := callParts(before, bodies), callParts(after, bodies)
	if len(a) == len(b) {
		same := true
		for i := range a {
			if a[i].kind != b[i].kind || a[i].id != b[i].id || a[i].name != b[i].name || !sameJSON(a[i].rest, b[i].rest) {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	what := "function calls and responses"
	if !bodies {
		what = "function calls, or the ids and names of function responses"
	}
	return []string{field + "'s " + what + " (no grant allows it: the engine runs and answers calls from them)"}
}

// admitRequest checks a before_model request replacement: its contents,
// instructions, function declarations and generation settings may change
// (google-adk's callbacks edit them), but not where the request goes or
// what the model may reach besides the agent's tools. The model name
// picks the backend's model or endpoint (a Vertex resource path may name
// another project's), cachedContent a stored resource, and a built-in
// tool (google search, URL context, code execution, ...) lets the model
// itself fetch or run things outside every grant, the conversation in
// hand: each stays as the engine set it. Built-in tools may be removed,
// and a model or cachedContent left out keeps the backend's own.
func admitRequest(before, after *abi.LlmRequest) []string {
	if before == nil {
		before = &abi.LlmRequest{}
	}
	never := " (no grant allows it: it decides where the request goes)"
	var bad []string
	if after.Model != "" && after.Model != before.Model {
		bad = append(bad, "request.model"+never)
	}
	bc, ac := before.Config, after.Config
	if bc == nil {
		bc = &abi.GenerateContentConfig{}
	}
	if ac == nil {
		return bad
	}
	if ac.CachedContent != "" && ac.CachedContent != bc.CachedContent {
		bad = append(bad, "request.config.cachedContent"+never)
	}
	have := builtinTools(bc.Tools)
	for _, t := range builtinTools(ac.Tools) {
		if !slices.ContainsFunc(have, func(h abi.Tool) bool { return sameJSON(h, t) }) {
			b, _ := json.Marshal(t)
			bad = append(bad, "request.config.tools: built-in tool "+string(b)+" (no grant allows it: the model would reach beyond the agent's tools)")
		}
	}
	return bad
}

// builtinTools returns the entries of tools with their function
// declarations left out, dropping those that had only declarations.
func builtinTools(tools []*abi.Tool) []abi.Tool {
	var out []abi.Tool
	for _, t := range tools {
		if t == nil {
			continue
		}
		b := *t
		b.FunctionDeclarations = nil
		// The other fields are raw JSON: a null one is no tool.
		v := reflect.ValueOf(&b).Elem()
		for i := range v.NumField() {
			if raw, ok := v.Field(i).Interface().(json.RawMessage); ok && string(bytes.TrimSpace(raw)) == "null" {
				v.Field(i).SetZero()
			}
		}
		if !v.IsZero() {
			out = append(out, b)
		}
	}
	return out
}

// admitCallIDs checks the ids of a response's function calls: each is
// empty (the engine gives it a fresh "adk-" id) or the id of a call the
// model's own response made (model, after_model's input). A call under
// another id would take over a call the history already holds: its
// response would answer another tool's pending long-running call, or a
// paused task's, without the user.
func admitCallIDs(model, after *abi.LlmResponse) []string {
	var own []callPart
	if model != nil {
		own = callParts(model.Content, false)
	}
	for _, p := range callParts(after.Content, false) {
		if p.kind != "functionCall" || p.id == "" {
			continue
		}
		if !slices.ContainsFunc(own, func(o callPart) bool { return o.kind == p.kind && o.id == p.id }) {
			return []string{"response.content's function call id " + strconv.Quote(p.id) + " (no grant allows it: leave a new call's id empty, the engine gives it one)"}
		}
	}
	return nil
}

// addsInlineData reports whether after holds an inlineData part before
// does not.
func addsInlineData(before, after *abi.Content) bool {
	var have []*abi.Blob
	if before != nil {
		for _, p := range before.Parts {
			if p != nil && p.InlineData != nil {
				have = append(have, p.InlineData)
			}
		}
	}
	for _, p := range after.Parts {
		if p != nil && p.InlineData != nil && !slices.ContainsFunc(have, func(b *abi.Blob) bool { return sameJSON(b, p.InlineData) }) {
			return true
		}
	}
	return false
}

// admitResponses refuses function responses in c.
func admitResponses(field string, c *abi.Content) []string {
	for _, p := range callParts(c, false) {
		if p.kind == "functionResponse" {
			return []string{field + "'s function responses (no grant allows it: a model answers no call)"}
		}
	}
	return nil
}

// admitEvent checks an on_event replacement against the event it
// replaces. The content may change (redaction is what such plugins are
// for), except its function calls and the ids and names of its function
// responses, which the engine acts on (admitCalls). A field the
// replacement leaves out keeps the original's (the runner merges only what
// it sets). Other changes follow the grants of the matching host
// functions:
//
//   - stateDelta: State; "user:" keys also WriteUserState, "app:" keys
//     WriteAppState (a key set, changed or removed is a change);
//   - artifactDelta: Artifacts; "user:" names (the user's, across
//     sessions) also WriteUserState;
//   - transferToAgent, transferReason, escalate, skipSummarization,
//     requestedToolConfirmations, the author (which routes the next turn
//     as a transfer does) and errorCode (an error event without content
//     takes no part in routing): Actions;
//   - the event's identity (id, invocationId, branch, timestamp,
//     longRunningToolIds), partial set on a final event (never stored),
//     the abort errorCode (engine.AbortErrorCode), usageMetadata (the
//     model's count, which compaction reads) and the engine's own actions
//     (compaction, rewindBeforeInvocationId, agentState, endOfAgent,
//     setModelResponse, requestedAuthConfigs): never.
//
// errorMessage, finishReason, turnComplete, interrupted, customMetadata
// and the other response metadata are content: the engine reads them from
// a model's response before its event exists, never from a stored event.
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
	// What the engine reads back from stored events besides the actions.
	// A field the replacement leaves out (zero) keeps the original's: the
	// runner merges only what the replacement sets.
	if after.Content != nil {
		bad = append(bad, admitCalls("content", before.Content, after.Content, false)...)
	}
	if after.ErrorCode != "" && after.ErrorCode != before.ErrorCode {
		// The abort code seals an invocation; any other errorCode on an
		// event without content takes it out of routing, as an author
		// change would route elsewhere.
		switch {
		case after.ErrorCode == engine.AbortErrorCode || before.ErrorCode == engine.AbortErrorCode:
			deny("errorCode", never)
		case !g.Actions:
			deny("errorCode", "needs the actions grant")
		}
	}
	if after.UsageMetadata != nil && !sameJSON(after.UsageMetadata, before.UsageMetadata) {
		// The model's own count: token-threshold compaction reads it.
		deny("usageMetadata", never)
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
	for _, name := range changedKeys(anyMap(a.ArtifactDelta), anyMap(b.ArtifactDelta)) {
		switch {
		case !g.Artifacts:
			deny("actions.artifactDelta["+name+"]", "needs the artifacts grant")
		case artifact.IsUserScoped(name) && !writeUser:
			deny("actions.artifactDelta["+name+"]", "needs write_user_state")
		}
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
	return refuse(bad)
}

// anyMap is m with values of type any, for changedKeys.
func anyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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
// same value (int and int64, a struct and a map), and raw JSON it passes
// through may come back with its keys in another order.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	if bytes.Equal(ja, jb) {
		return true
	}
	var va, vb any
	return json.Unmarshal(ja, &va) == nil && json.Unmarshal(jb, &vb) == nil && reflect.DeepEqual(va, vb)
}

// equalish compares two maps, an empty map equal to a nil one (JSON cannot
// tell them apart after omitzero).
func equalish[M ~map[K]V, K comparable, V any](a, b M) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return sameJSON(a, b)
}
