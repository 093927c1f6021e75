package engine

// Tool confirmation (google-adk's flows/llm_flows/tools/_confirmation.py and
// generate_request_confirmation_event): a tool that calls
// ToolContext.RequestConfirmation gets an adk_request_confirmation
// function call (long-running) emitted for it; when the user answers that
// call with a function response, the request_confirmation processor runs
// the original call again, with the answer as its ToolConfirmation, before
// the next model request.

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// requestConfirmationName is the client-side function call that asks the
// user to confirm a tool call.
const requestConfirmationName = "adk_request_confirmation"

// ConfirmationError reports an answer to adk_request_confirmation that
// cannot be applied (a malformed answer, or one that does not match the
// call it confirms). It carries google-adk's exception name.
type ConfirmationError struct {
	Message string
	// code is the Python exception's name; "" is ValueError.
	code string
}

func (e *ConfirmationError) Error() string { return e.Message }
func (e *ConfirmationError) ErrorCode() string {
	if e.code != "" {
		return e.code
	}
	return "ValueError"
}

// confirmationGate is google-adk's apply_confirmation_gate: for a tool
// that requires confirmation of these arguments, a call without an answer
// records a request and is answered with an error result (not summarized:
// the pause is no result for the model), and a rejected call is answered
// with a rejection. gated reports that the tool must not run.
func confirmationGate(tc *toolContext, t tool.Tool, args map[string]any) (result any, gated bool, err error) {
	r, ok := t.(tool.ConfirmationRequirer)
	if !ok {
		return nil, false, nil
	}
	required, err := r.RequiresConfirmation(tc, args)
	if err != nil || !required {
		return nil, false, err
	}
	switch c := tc.ToolConfirmation(); {
	case c == nil:
		tc.RequestConfirmation(fmt.Sprintf("Please approve or reject the tool call %s() by responding with a FunctionResponse with an expected ToolConfirmation payload.", t.Name()), nil)
		tc.actions.SkipSummarization = true
		return map[string]any{"error": "This tool call requires confirmation, please approve or reject."}, true, nil
	case !c.Confirmed:
		return map[string]any{"error": "This tool call is rejected."}, true, nil
	}
	return nil, false, nil
}

// confirmationRequestEvent returns the event holding one long-running
// adk_request_confirmation call per confirmation resp requested, in the
// order of fcEvent's calls; nil when none was requested.
func confirmationRequestEvent(ctx *InvocationContext, fcEvent, resp *session.Event) *session.Event {
	requested := resp.Actions.RequestedToolConfirmations
	if len(requested) == 0 {
		return nil
	}
	var parts []*genai.Part
	var ids []string
	for _, fc := range fcEvent.FunctionCalls() {
		c, ok := requested[fc.ID]
		if !ok {
			continue
		}
		original := map[string]any{"id": fc.ID, "name": fc.Name}
		if fc.Args != nil {
			original["args"] = session.DeepCopy(fc.Args)
		}
		confirmation := map[string]any{"hint": c.Hint, "confirmed": c.Confirmed}
		if c.Payload != nil {
			confirmation["payload"] = session.DeepCopy(c.Payload)
		}
		id := clientCallIDPrefix + uuid.NewString()
		ids = append(ids, id)
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{
			ID: id, Name: requestConfirmationName,
			Args: map[string]any{"originalFunctionCall": original, "toolConfirmation": confirmation},
		}})
	}
	if len(parts) == 0 {
		return nil
	}
	ev := ctx.newEvent()
	ev.Content = &genai.Content{Role: "model", Parts: parts}
	ev.LongRunningToolIDs = sortedUnique(ids)
	return ev
}

// hasSettledResponses reports whether resp answers a call that is not
// waiting for a confirmation.
func hasSettledResponses(resp *session.Event) bool {
	for _, fr := range resp.FunctionResponses() {
		if _, waiting := resp.Actions.RequestedToolConfirmations[fr.ID]; !waiting {
			return true
		}
	}
	return false
}

// confirmationEvents returns the events of events (the session's) the
// confirmation processor looks at: see inConfirmationView.
func (c *InvocationContext) confirmationEvents(events []*session.Event) []*session.Event {
	var out []*session.Event
	for _, ev := range events {
		if c.inConfirmationView(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// inConfirmationView reports whether the confirmation processor looks at
// ev: events of ctx's branch, and user events on a sub-branch of it or on
// none (google-adk's _get_events(current_branch=True)).
func (c *InvocationContext) inConfirmationView(ev *session.Event) bool {
	return ev.Branch == c.branch ||
		ev.Author == "user" && (c.branch == "" || ev.Branch == "" || strings.HasPrefix(ev.Branch, c.branch+"."))
}

// parseToolConfirmation reads a user's answer to adk_request_confirmation:
// the ToolConfirmation fields, or google-adk's client wrapper
// {"response": "<JSON>"}, validated as google-adk's pydantic model does
// (model_validate): hint a string, confirmed a lax boolean ("yes", 1),
// unknown fields forbidden; a failure is pydantic's ValidationError with
// its message (unknown fields in sorted order: a Go map has none).
func parseToolConfirmation(resp map[string]any) (*session.ToolConfirmation, error) {
	if s, ok := resp["response"].(string); ok && len(resp) == 1 {
		var inner map[string]any
		if err := json.Unmarshal([]byte(s), &inner); err != nil {
			return nil, &ConfirmationError{Message: fmt.Sprintf("tool confirmation: the wrapped response is not a JSON object: %v", err)}
		}
		resp = inner
	}
	in, _ := wholeFloatsAsInts(resp).(map[string]any)
	v := &schemaValidator{pythonMode: true}
	c := &session.ToolConfirmation{}
	if h, ok := in["hint"]; ok {
		if r, ok := v.value(map[string]any{"type": "string"}, "", "hint", h, "hint", nil).(string); ok {
			c.Hint = r
		}
	}
	if b, ok := in["confirmed"]; ok {
		if r, ok := v.value(map[string]any{"type": "boolean"}, "", "confirmed", b, "confirmed", nil).(bool); ok {
			c.Confirmed = r
		}
	}
	c.Payload = in["payload"]
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if k != "hint" && k != "confirmed" && k != "payload" {
			v.fail(k, "extra_forbidden", "Extra inputs are not permitted", in[k], nil)
		}
	}
	if len(v.errs) > 0 {
		return nil, &ConfirmationError{Message: (&OutputValidationError{Model: "ToolConfirmation", Errors: v.errs}).Error(), code: "ValidationError"}
	}
	return c, nil
}

// originalCallArgs returns the originalFunctionCall payload of an
// adk_request_confirmation call, or nil when it is absent or malformed.
func originalCallArgs(fc *genai.FunctionCall) map[string]any {
	m, _ := fc.Args["originalFunctionCall"].(map[string]any)
	return m
}

// confirmationTools are the tools a confirmed call may name: the agent's
// own and its transfer tool (google-adk's canonical tools plus transfer).
func (a *LlmAgent) confirmationTools(ctx *InvocationContext) *llmCall {
	call := &llmCall{tools: map[string]tool.Tool{}}
	// In the order a step adds them (transfer before the agent's tools),
	// so a name resolves to the same tool as in the step that asked.
	if targets := a.transferTargets(ctx); len(targets) > 0 {
		names := make([]string, len(targets))
		for i, t := range targets {
			names[i] = t.Info().Name
		}
		call.addTool(newTransferTool(names))
	}
	for _, t := range a.offeredTools(ctx, call) {
		if t.Declaration() != nil {
			call.addTool(t)
		}
	}
	return call
}

// resumeConfirmedCalls is google-adk's request_confirmation processor: when
// the latest user event answers adk_request_confirmation calls of this
// agent, it runs the confirmed calls again with the answers and yields
// their response event. Answers already acted on are skipped; when every
// answer was, and the message carried nothing else, the invocation ends.
func (a *LlmAgent) resumeConfirmedCalls(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		// 1. The answers in the last user event. It is found scanning back
		// from the end, so a turn without answers (the usual one) does not
		// read the whole history.
		all := ctx.inv.session.Events()
		answers := map[string]*session.ToolConfirmation{}
		nonConfirmation := false
		for k := len(all) - 1; k >= 0; k-- {
			if all[k].Author != "user" || !ctx.inConfirmationView(all[k]) {
				continue
			}
			for _, fr := range all[k].FunctionResponses() {
				if fr.Name != requestConfirmationName {
					nonConfirmation = true
					continue
				}
				if fr.ID == "" || fr.Response == nil {
					continue
				}
				c, err := parseToolConfirmation(fr.Response)
				if err != nil {
					yield(nil, fmt.Errorf("agent %q: %w", a.Name, err))
					return
				}
				answers[fr.ID] = c
			}
			break
		}
		if len(answers) == 0 {
			return
		}
		events := ctx.confirmationEvents(all)
		lastUser := len(events) - 1
		for lastUser >= 0 && events[lastUser].Author != "user" {
			lastUser--
		}

		// 2. Drop answers whose call already ran again (the processor runs
		// before every model call of the invocation, and a client may send
		// the same answer twice).
		originalOf := map[string]string{}
		for _, ev := range events {
			for _, fc := range ev.FunctionCalls() {
				if _, ok := answers[fc.ID]; !ok || fc.ID == "" {
					continue
				}
				if orig := originalCallArgs(fc); orig != nil {
					if id, _ := orig["id"].(string); id != "" {
						originalOf[fc.ID] = id
					}
				}
			}
		}
		confirmationOf := map[string]string{}
		for conf, orig := range originalOf {
			confirmationOf[orig] = conf
		}
		answered, consumed := map[string]bool{}, map[string]bool{}
		consumedThisTurn := false
		for i, ev := range events {
			for _, fr := range ev.FunctionResponses() {
				if fr.ID == "" {
					continue
				}
				if ev.Author == "user" {
					if _, ok := answers[fr.ID]; ok {
						answered[fr.ID] = true
					}
				} else if conf, ok := confirmationOf[fr.ID]; ok && answered[conf] {
					consumed[conf] = true
					if i > lastUser {
						consumedThisTurn = true
					}
				}
			}
		}
		for id := range consumed {
			delete(answers, id)
		}
		if len(answers) == 0 {
			if !consumedThisTurn && !nonConfirmation {
				ctx.EndInvocation()
			}
			return
		}

		// 3. The calls to run again, checked against the history.
		call := a.confirmationTools(ctx)
		calls, confirmations, err := a.confirmationTargets(ctx, events, answers, call)
		if err != nil {
			yield(nil, fmt.Errorf("agent %q: %w", a.Name, err))
			return
		}
		if len(calls) == 0 {
			return
		}

		// 4. Run them with their confirmations.
		emit, stopped := lockedEmitter(yield)
		resp, err := a.runFunctionCalls(ctx, call, calls, confirmations, emit)
		if stopped() {
			return
		}
		if err != nil {
			if resp != nil && !yield(resp, nil) {
				return
			}
			yield(nil, err)
			return
		}
		if resp != nil {
			yield(resp, nil)
		}
	}
}

// confirmationTargets resolves each answered adk_request_confirmation call
// to the call it confirms and validates it (google-adk's
// _resolve_confirmation_targets): the call must be in the history, made by
// this agent, name one of its tools, have asked for confirmation, and carry
// the same name and arguments. Calls of other agents are left to them.
func (a *LlmAgent) confirmationTargets(ctx *InvocationContext, events []*session.Event, answers map[string]*session.ToolConfirmation, call *llmCall) ([]*genai.FunctionCall, map[string]*session.ToolConfirmation, error) {
	type histCall struct {
		fc     *genai.FunctionCall
		author string
	}
	history := map[string]histCall{}
	requested := map[string]bool{}
	for _, ev := range events {
		for _, fc := range ev.FunctionCalls() {
			if fc.ID != "" && fc.Name != requestConfirmationName {
				history[fc.ID] = histCall{fc, ev.Author}
			}
		}
		if len(ev.Actions.RequestedToolConfirmations) > 0 {
			for _, fr := range ev.FunctionResponses() {
				if _, ok := ev.Actions.RequestedToolConfirmations[fr.ID]; ok && fr.ID != "" {
					requested[fr.ID] = true
				}
			}
		}
	}
	var calls []*genai.FunctionCall
	confirmations := map[string]*session.ToolConfirmation{}
	for _, ev := range events {
		if ev.Author != "" && ev.Author != a.Name {
			continue
		}
		for _, fc := range ev.FunctionCalls() {
			answer, ok := answers[fc.ID]
			if !ok || fc.ID == "" || fc.Name != requestConfirmationName {
				continue
			}
			orig := originalCallArgs(fc)
			if orig == nil {
				continue
			}
			id, _ := orig["id"].(string)
			name, _ := orig["name"].(string)
			args, _ := orig["args"].(map[string]any)
			if id == "" {
				return nil, nil, &ConfirmationError{Message: "Original function call ID is missing."}
			}
			if name == "" {
				return nil, nil, &ConfirmationError{Message: "Original function call name is missing."}
			}
			hist, ok := history[id]
			if !ok {
				return nil, nil, &ConfirmationError{Message: fmt.Sprintf("Original function call for ID '%s' not found in session history.", id)}
			}
			if hist.author != a.Name {
				continue
			}
			t, ok := call.tools[name]
			if !ok {
				return nil, nil, &ConfirmationError{Message: fmt.Sprintf("Tool '%s' is not registered.", name)}
			}
			static := false
			if r, ok := t.(tool.ConfirmationRequirer); ok {
				tc := &toolContext{callbackContext: newCallbackContext(ctx, &session.EventActions{}), callID: id}
				var err error
				if static, err = r.RequiresConfirmation(tc, args); err != nil {
					return nil, nil, fmt.Errorf("tool %q: %w", name, err)
				}
			}
			if !static && !requested[id] {
				return nil, nil, &ConfirmationError{Message: fmt.Sprintf("Tool '%s' does not require confirmation.", name)}
			}
			if hist.fc.Name != name {
				return nil, nil, &ConfirmationError{Message: fmt.Sprintf("Function call name mismatch for ID '%s': history has '%s', confirmation has '%s'.", id, hist.fc.Name, name)}
			}
			if !sameArgs(hist.fc.Args, args) {
				return nil, nil, &ConfirmationError{Message: fmt.Sprintf("Function call arguments mismatch for ID '%s'.", id)}
			}
			if _, dup := confirmations[id]; !dup {
				calls = append(calls, &genai.FunctionCall{ID: id, Name: name, Args: args})
			}
			confirmations[id] = answer
		}
	}
	return calls, confirmations, nil
}

// sameArgs compares call arguments as JSON values (the confirmation's copy
// may hold numbers of another Go type than the history's).
func sameArgs(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
