package engine

// Tool dispatch (google-adk functions.py and tools/_caller.py): every call
// of a model response runs concurrently through the plugin → agent callback
// pipeline; the results merge, in call order, into one response event.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// handleFunctionCalls runs the calls of fcEvent and yields the merged
// response event, the structured answer of set_model_response if it was
// called, and then the events of the agent transferred to, if any.
func (a *LlmAgent) handleFunctionCalls(ctx *InvocationContext, call *llmCall, fcEvent *session.Event) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		// Tools that run agents (single_turn) pass the agents' events up
		// before the merged response.
		emit, stopped := lockedEmitter(yield)
		resp, err := a.runFunctionCalls(ctx, call, fcEvent.FunctionCalls(), nil, emit)
		if stopped() {
			return
		}
		if err != nil {
			// The siblings' kept results are stored before the error.
			if resp != nil && !yield(resp, nil) {
				return
			}
			yield(nil, err)
			return
		}
		if resp == nil {
			return
		}
		// A call that asked for confirmation gets an adk_request_confirmation
		// call. Settled responses of other calls go first, so that a caller
		// stopping at the (long-running, hence final) request still stores
		// them; they are then for the model, not skipped from summarization.
		if confirm := confirmationRequestEvent(ctx, fcEvent, resp); confirm != nil {
			first, second := confirm, resp
			if hasSettledResponses(resp) {
				resp.Actions.SkipSummarization, resp.Actions.SkipSummarizationSet = false, false
				first, second = resp, confirm
			}
			if !yield(first, nil) || !yield(second, nil) {
				return
			}
		} else if !yield(resp, nil) {
			return
		}
		if answer, ok := structuredResponse(resp); ok {
			final := ctx.newEvent()
			final.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: answer}}}
			if !yield(final, nil) {
				return
			}
		}
		target := resp.Actions.TransferToAgent
		if target == "" {
			return
		}
		if ctx.isNodeAgent(a) {
			// The node runtime transfers when the event leaves the agent's
			// run (runAgentOnce).
			return
		}
		// The legacy way (google-adk's function-call postprocessor): the
		// target runs within this agent's run.
		next, err := a.transferTarget(ctx, target)
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range runAgent(ctx.transferTo(a, next), next) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// transferTarget resolves a transfer_to_agent name the way google-adk
// 2.13's node runtime routes it: a sub-agent, the parent or a peer (unless
// the agent's flags forbid it), never the agent itself.
func (a *LlmAgent) transferTarget(ctx *InvocationContext, name string) (Agent, error) {
	if name == a.Name {
		return nil, &TransferError{Code: "WorkflowDataError", Message: fmt.Sprintf("Agent '%s' cannot transfer to itself.", name)}
	}
	for _, sub := range a.SubAgents {
		if sub.Info().Name == name {
			return sub, nil
		}
	}
	if parent := ctx.Parent(a); parent != nil {
		if parent.Info().Name == name {
			if a.cfg.DisallowTransferToParent {
				return nil, &TransferError{Code: "WorkflowDataError", Message: fmt.Sprintf("Cannot transfer from '%s' to parent agent '%s': disallow_transfer_to_parent is set.", a.Name, name)}
			}
			return parent, nil
		}
		for _, peer := range parent.Info().SubAgents {
			if peer.Info().Name == name {
				if a.cfg.DisallowTransferToPeers {
					return nil, &TransferError{Code: "WorkflowDataError", Message: fmt.Sprintf("Cannot transfer from '%s' to peer agent '%s': disallow_transfer_to_peers is set.", a.Name, name)}
				}
				return peer, nil
			}
		}
	}
	if ctx.FindAgent(name) == nil {
		return nil, &TransferError{Code: "ValueError", Message: fmt.Sprintf("Transfer target agent '%s' not found.", name)}
	}
	return nil, &TransferError{Code: "ValueError", Message: fmt.Sprintf("Cannot transfer from '%s' to unrelated agent '%s'.", a.Name, name)}
}

// transferTo returns the context a transfer target runs in. In the node
// runtime, from an agent that is a node's, its run starts under the
// caller's run (a sub-agent), under the run the caller started from (a
// peer), or under the run the parent started from (the parent, found up
// the caller's runs); a run started from the top of the invocation takes
// its path from the agent tree.
func (c *InvocationContext) transferTo(from *LlmAgent, to Agent) *InvocationContext {
	if c.node == nil || c.node.name != from.Name {
		// No node runtime, or an agent inside a workflow agent's run: the
		// target runs within the caller's run, in its node.
		return c
	}
	child := c.fork()
	name := to.Info().Name
	under := c.node
	switch {
	case slices.Contains(from.SubAgents, to):
	case c.Parent(from) == to:
		for under.parent != nil && under.name != name {
			under = under.parent
		}
		if under.parent != nil {
			under = under.parent
		}
	default:
		under = c.node.parent
	}
	if under.isTop() {
		child.nodePath = c.inv.topNodePath(to)
	} else {
		child.nodePath = c.inv.nextNodePath(under.path, name)
	}
	child.node = newNodeRun(under, name, child.nodePath)
	if c.node.subBranches {
		// Within a task delegation: "<under's branch>.<name>@<run>".
		child.branch = subBranch(under.branch, name, child.nodePath[strings.LastIndexByte(child.nodePath, '@')+1:])
		child.node.subBranches = true
	}
	child.node.branch = child.branch
	return child
}

// runFunctionCalls runs calls concurrently and merges their response
// events in call order. A call that returns no event (a long-running tool
// that answers later) is left out; nil means no call produced an event.
// confirmations holds, by call id, the user's answers for calls that are
// run again after asking for confirmation (nil otherwise).
func (a *LlmAgent) runFunctionCalls(ctx *InvocationContext, call *llmCall, calls []*genai.FunctionCall, confirmations map[string]*session.ToolConfirmation, emit emitter) (*session.Event, error) {
	events := make([]*session.Event, len(calls))
	errs := make([]error, len(calls))
	// Each result counts against RunConfig.MaxBytes as it arrives: the
	// response's results are held until its last call ends.
	runOne := func(i int) {
		fc := calls[i]
		events[i], errs[i] = a.runFunctionCall(ctx, call, fc, confirmations[fc.ID], emit)
		if errs[i] == nil && events[i] != nil {
			if err := ctx.countResult(events[i], truncateUTF8(fc.Name, maxLoggedNameBytes)); err != nil {
				events[i], errs[i] = nil, err
			}
		}
	}
	if len(calls) == 1 {
		runOne(0)
	} else {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { runOne(i) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			// A call failed. Its siblings that finished may have had side
			// effects (state writes): as google-adk 2.13 keeps completed
			// responses (_keep_completed_responses), their plain results
			// are merged and come back with the error, to be stored before
			// it. Calls that failed, and results carrying control-flow
			// actions that the failed step will never carry out, are not
			// kept.
			var kept []*session.Event
			for i, e := range events {
				if errs[i] == nil && e != nil && isPlainResult(e) {
					kept = append(kept, e)
				}
			}
			if ctx.Err() != nil { // aborted: google-adk keeps nothing
				kept = nil
			}
			return mergeResponseEvents(kept), err
		}
	}
	return mergeResponseEvents(slices.DeleteFunc(events, func(e *session.Event) bool { return e == nil })), nil
}

// isPlainResult reports whether a function response event is a tool's
// result with no action beyond its state and artifact writes (google-adk
// _is_plain_result): no transfer, escalation, confirmation or credential
// request, and not finish_task.
func isPlainResult(e *session.Event) bool {
	a := e.Actions
	a.StateDelta, a.ArtifactDelta, a.SkipSummarization, a.SkipSummarizationSet = nil, nil, false, false
	if !a.IsZero() {
		return false
	}
	for _, fr := range e.FunctionResponses() {
		if fr.Name == finishTaskName {
			return false
		}
	}
	return true
}

// notFoundTool stands in for a tool the model named but the agent lacks,
// so the callbacks can see its name.
type notFoundTool struct{ name string }

func (t notFoundTool) Name() string        { return t.name }
func (t notFoundTool) Description() string { return "Tool not found" }
func (t notFoundTool) IsLongRunning() bool { return false }

// runFunctionCall is the pipeline of one call: before-tool chain, the tool
// (or the on-tool-error chain when it fails), after-tool chain.
func (a *LlmAgent) runFunctionCall(ctx *InvocationContext, call *llmCall, fc *genai.FunctionCall, confirmation *session.ToolConfirmation, emit emitter) (*session.Event, error) {
	args, _ := session.DeepCopy(fc.Args).(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	tc := &toolContext{callbackContext: newCallbackContext(ctx, &session.EventActions{}), callID: fc.ID, confirmation: confirmation, emit: emit}
	plugins := ctx.inv.plugins
	t, found := call.tools[fc.Name]
	var cbTool callbacks.Tool = t
	if !found {
		cbTool = notFoundTool{name: cmp.Or(fc.Name, "<unnamed>")}
	}

	result, err := callbacks.BeforeToolChain(tc, plugins, a.cfg.BeforeTool, cbTool, args)
	if err != nil {
		return nil, err
	}
	if result == nil && !found {
		lookupErr := &ToolNotFoundError{Name: fc.Name, Available: call.toolOrder}
		result, err = callbacks.OnToolErrorChain(tc, plugins, a.cfg.OnToolError, cbTool, args, lookupErr)
		if err != nil {
			return nil, err
		}
		if result == nil {
			// The name is the model's: once an invocation, and cut short.
			name := truncateUTF8(fc.Name, maxLoggedNameBytes)
			if ctx.inv.firstWarning("unknown tool\x00" + a.Name + "\x00" + name) {
				ctx.Logger().Warn("model called an unknown tool", "agent", a.Name, "tool", name, "tool_name_bytes", len(fc.Name))
			}
			result = toolNotFoundResponse(cbTool.Name(), call.toolOrder)
		}
		return buildResponseEvent(ctx, cbTool, result, nil, tc), nil
	}

	var out any
	// order is the key-order hint of out, for a result given as JSON.
	var order json.RawMessage
	if result != nil {
		out = result
	} else {
		// The confirmation gate answers a call that still needs the user's
		// confirmation (or was rejected) instead of running the tool.
		v, gated, runErr := confirmationGate(tc, t, args)
		if !gated && runErr == nil {
			v, runErr = t.Run(tc, args)
			if _, paused := v.(singleTurnPaused); paused && runErr == nil {
				// No response: the call waits with its sub-agent, and the
				// agent's run stops after this step (the other calls'
				// responses are still stored).
				ctx.EndInvocation()
				return nil, nil
			}
			if runErr == nil {
				v, order, runErr = unwrapResult(v)
			}
		}
		if runErr != nil {
			r, err := callbacks.OnToolErrorChain(tc, plugins, a.cfg.OnToolError, t, args, runErr)
			if err != nil {
				return nil, err
			}
			if r == nil {
				return nil, &ToolError{Agent: a.Name, Tool: t.Name(), Err: runErr}
			}
			v = r
		}
		out = v
	}

	altered, err := callbacks.AfterToolChain(tc, plugins, a.cfg.AfterTool, cbTool, args, asResultMap(out))
	if err != nil {
		return nil, err
	}
	if altered != nil {
		out, order = altered, nil
	}
	// A long-running tool's response, or a deferring tool's (a task
	// agent's), comes later.
	if d, ok := cbTool.(responseDeferrer); (cbTool.IsLongRunning() || ok && d.defersResponse()) && isEmptyResult(out) {
		return nil, nil
	}
	return buildResponseEvent(ctx, cbTool, out, order, tc), nil
}

// unwrapResult takes a tool result given as JSON text or as a
// tool.OrderedResult apart into the value and its key-order hint.
func unwrapResult(v any) (any, json.RawMessage, error) {
	switch r := v.(type) {
	case json.RawMessage:
		v, order, err := keyorder.Decode(r)
		if err != nil {
			return nil, nil, fmt.Errorf("tool result is not valid JSON: %w", err)
		}
		return v, order, nil
	case tool.OrderedResult:
		return r.Value, keyorder.Of(r.KeyOrder), nil
	}
	return v, nil, nil
}

// maxLoggedNameBytes bounds a name a model or guest chose where it is
// logged.
const maxLoggedNameBytes = 128

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ToolNotFoundError is what on_tool_error callbacks see when the model
// calls a tool the agent does not have (google-adk's message).
type ToolNotFoundError struct {
	Name      string
	Available []string
}

func (e *ToolNotFoundError) Error() string {
	return fmt.Sprintf("Tool '%s' not found.\nAvailable tools: %s\n\nPossible causes:\n  1. LLM hallucinated the function name - review agent instruction clarity\n  2. Tool not registered - verify agent.tools list\n  3. Name mismatch - check for typos\n\nSuggested fixes:\n  - Review agent instruction to ensure tool usage is clear\n  - Verify tool is included in agent.tools list\n  - Check for typos in function name", e.Name, strings.Join(e.Available, ", "))
}

// toolNotFoundResponse is the error result the model gets for a tool name
// it made up, so it can correct itself.
func toolNotFoundResponse(name string, available []string) map[string]any {
	list := strings.Join(available, ", ")
	if list == "" {
		list = "none"
	}
	return map[string]any{"error": fmt.Sprintf("Invoking `%s()` failed as no tool with that name is available. The tools you can call are: %s. You could retry, but it is IMPORTANT that you only call a tool from that list.", name, list)}
}

// asResultMap is a tool result as a function response: maps as they are,
// anything else under "result".
func asResultMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok && m != nil {
		return m
	}
	return map[string]any{"result": v}
}

func isEmptyResult(v any) bool {
	if v == nil {
		return true
	}
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case string:
		return t == ""
	}
	return false
}

// buildResponseEvent builds the function response event of a result;
// order is the result's key-order hint (package keyorder), or nil.
func buildResponseEvent(ctx *InvocationContext, t callbacks.Tool, result any, order json.RawMessage, tc *toolContext) *session.Event {
	tc.state.RecordNestedWrites()
	ev := ctx.newEvent()
	resp := asResultMap(result)
	respOrder := order
	if m, isMap := result.(map[string]any); !isMap || m == nil {
		respOrder = keyorder.Wrap("result", order)
	}
	ev.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{
		FunctionResponse: &genai.FunctionResponse{ID: tc.callID, Name: t.Name(), Response: resp},
	}}}
	ev.SetPartKeyOrder(0, respOrder)
	ev.Actions = *tc.actions
	// An agent tool whose answer ends the turn (skip_summarization) also
	// gets the answer as a text part, for UIs that do not show function
	// responses (google-adk's _caller.py, scoped to AgentTool).
	if _, isAgentTool := t.(*AgentTool); isAgentTool && tc.actions.SkipSummarization && resp["error"] == nil && displayable(result) {
		text, ok := result.(string)
		if !ok {
			text, _ = pyfmt.JSONDumpsOrdered(result, order)
		}
		ev.Content.Parts = append(ev.Content.Parts, &genai.Part{Text: text})
	}
	return ev
}

// displayable reports whether a tool's result is worth showing as text
// (google-adk's has_displayable_result: not None, {"result": None} or "").
func displayable(result any) bool {
	switch r := result.(type) {
	case nil:
		return false
	case string:
		return r != ""
	case map[string]any:
		v, ok := r["result"]
		return !(len(r) == 1 && ok && v == nil)
	}
	return true
}

// mergeResponseEvents merges parallel response events: parts in call
// order, actions deep-merged, the first event's identity and time.
func mergeResponseEvents(events []*session.Event) *session.Event {
	switch len(events) {
	case 0:
		return nil
	case 1:
		return events[0]
	}
	base := events[0]
	merged := session.NewEvent(base.InvocationID, base.Author, base.Branch)
	merged.Timestamp = base.Timestamp
	merged.Content = &genai.Content{Role: "user"}
	for _, e := range events {
		if e.Content != nil {
			for i := range e.Content.Parts {
				merged.SetPartKeyOrder(len(merged.Content.Parts)+i, e.PartKeyOrder(i))
			}
			merged.Content.Parts = append(merged.Content.Parts, e.Content.Parts...)
		}
		mergeActions(&merged.Actions, &e.Actions)
	}
	return merged
}

func mergeActions(dst, src *session.EventActions) {
	// google-adk deep-merges the calls' actions dumped without None: the
	// last call that set skip_summarization, even to False, decides.
	if src.SkipSummarization || src.SkipSummarizationSet {
		dst.SkipSummarization, dst.SkipSummarizationSet = src.SkipSummarization, src.SkipSummarizationSet
	}
	dst.Escalate = dst.Escalate || src.Escalate
	dst.EndOfAgent = dst.EndOfAgent || src.EndOfAgent
	if src.StateDelta != nil {
		dst.StateDelta = deepMerge(dst.StateDelta, src.StateDelta)
	}
	for k, h := range src.StateKeyOrder {
		if dst.StateKeyOrder == nil {
			dst.StateKeyOrder = map[string]json.RawMessage{}
		}
		dst.StateKeyOrder[k] = h
	}
	if src.AgentState != nil {
		dst.AgentState = deepMerge(dst.AgentState, src.AgentState)
	}
	if src.RequestedAuthConfigs != nil {
		dst.RequestedAuthConfigs = deepMerge(dst.RequestedAuthConfigs, src.RequestedAuthConfigs)
	}
	if src.ArtifactDelta != nil {
		if dst.ArtifactDelta == nil {
			dst.ArtifactDelta = map[string]int{}
		}
		maps.Copy(dst.ArtifactDelta, src.ArtifactDelta)
	}
	if src.RequestedToolConfirmations != nil {
		if dst.RequestedToolConfirmations == nil {
			dst.RequestedToolConfirmations = map[string]session.ToolConfirmation{}
		}
		maps.Copy(dst.RequestedToolConfirmations, src.RequestedToolConfirmations)
	}
	dst.TransferToAgent = cmp.Or(src.TransferToAgent, dst.TransferToAgent)
	dst.TransferReason = cmp.Or(src.TransferReason, dst.TransferReason)
	dst.RewindBeforeInvocationID = cmp.Or(src.RewindBeforeInvocationID, dst.RewindBeforeInvocationID)
	if src.Compaction != nil {
		dst.Compaction = src.Compaction
	}
	if src.SetModelResponse != nil {
		dst.SetModelResponse = src.SetModelResponse
	}
}

// deepMerge merges src into dst, recursing into nested maps.
func deepMerge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if dm, ok := dst[k].(map[string]any); ok {
			if sm, ok := v.(map[string]any); ok {
				dst[k] = deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// structuredResponse returns the answer set_model_response recorded, as
// google-adk's json.dumps renders it.
func structuredResponse(ev *session.Event) (string, bool) {
	if ev.Content == nil {
		return "", false
	}
	for i, p := range ev.Content.Parts {
		if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Name != setModelResponseName {
			continue
		}
		if ev.Actions.SetModelResponse == nil {
			return "", false
		}
		// The answer is the schema model's dump: its fields in declared
		// order, which the response part's key order holds.
		text, err := pyfmt.JSONDumpsOrdered(ev.Actions.SetModelResponse, ev.PartKeyOrder(i))
		if err != nil {
			return "", false
		}
		return text, true
	}
	return "", false
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
