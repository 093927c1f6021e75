package engine

// Running delegated agents (google-adk 2.13 workflow/_llm_agent_wrapper.py,
// tools/agent_tool.py and runners._find_active_task_scope):
//
//   - a single_turn sub-agent runs inline when its tool is called, on the
//     branch <name>@<call id>, seeing only its request and its own events;
//     its final text (or parsed output) is the tool's result;
//   - a call to a task sub-agent ends the delegating agent's pass; the task
//     agent then runs in the isolation scope <call id>, where it may talk
//     with the user over several turns (the next user message joins the
//     paused task's invocation and scope). Its finish_task arguments become
//     the output of its run and the delegating agent's function response,
//     after which the delegating agent runs again.

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/contents"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// singleTurnInput is the request a single_turn agent runs on: a user event
// google-adk appends to the session only for the agent's run; adkhost
// never stores it and shows it only in the agent's own requests.
type singleTurnInput struct {
	agent Agent
	event *session.Event
	// at is the number of session events when the run started: the input
	// comes after them.
	at int
}

// subBranch is google-adk _BranchPath.create_sub_branch.
func subBranch(base, name, runID string) string {
	seg := name
	if runID != "" {
		seg += "@" + runID
	}
	if base == "" {
		return seg
	}
	return base + "." + seg
}

// emitter passes events produced while a tool runs (a single_turn agent's)
// up the event stream before the tool's response.
type emitter func(*session.Event) error

// lockedEmitter returns an emitter over yield that is safe to call from
// concurrently running tools, and a function telling whether the caller
// stopped; after that the emitter fails with errStopped.
func lockedEmitter(yield func(*session.Event, error) bool) (emitter, func() bool) {
	var mu sync.Mutex
	stopped := false
	emit := func(ev *session.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return errStopped
		}
		if !yield(ev, nil) {
			stopped = true
			return errStopped
		}
		return nil
	}
	return emit, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return stopped
	}
}

// runSingleTurn runs a single_turn agent for one tool call and returns its
// output. Its events are emitted as they come. A failure of the agent is
// the tool's result text, as google-adk's tool returns it; cancellation and
// a caller that stopped are errors.
func runSingleTurn(tc *toolContext, agent Agent, args map[string]any) (any, error) {
	events := tc.InvocationContext.Session().Events()
	return runSingleTurnAt(tc, agent, singleTurnRequest(args, requestKeyOrder(events, tc.callID)), len(events))
}

// requestKeyOrder is the key-order hint of the request argument of the
// call with id callID, from the model's event: a dict request is dumped in
// the order the model wrote it, as google-adk's json.dumps does.
func requestKeyOrder(events []*session.Event, callID string) json.RawMessage {
	if callID == "" {
		return nil
	}
	for _, ev := range slices.Backward(events) {
		if ev.Content == nil {
			continue
		}
		for i, p := range ev.Content.Parts {
			if p != nil && p.FunctionCall != nil && p.FunctionCall.ID == callID {
				return keyorder.Sub(ev.PartKeyOrder(i), "request")
			}
		}
	}
	return nil
}

// errOutputAlreadySet is google-adk's ValueError for a node run that
// produces a second output.
var errOutputAlreadySet error = &outputAlreadySetError{}

type outputAlreadySetError struct{}

func (*outputAlreadySetError) Error() string {
	return "Output already set. A node can produce at most one output."
}

// ErrorCode makes the error's event carry google-adk's exception name.
func (*outputAlreadySetError) ErrorCode() string { return "ValueError" }

// singleTurnPaused is the result of a single_turn run that made a
// long-running call of its own: google-adk's run_node raises
// NodeInterruptedError, so the call gets no response and the delegating
// agent's run pauses with it; the user's response resumes the sub-agent
// (resumeSingleTurnCalls).
type singleTurnPaused struct{}

// runSingleTurnAt is runSingleTurn with the sub-agent's request in (nil:
// none) placed at index at of the session's events: where its run started.
func runSingleTurnAt(tc *toolContext, agent Agent, in *genai.Content, at int) (any, error) {
	ctx := tc.InvocationContext
	name := agent.Info().Name
	run := ctx.fork()
	run.branch = subBranch(ctx.branch, name, tc.callID)
	if ctx.nodePath != "" {
		// google-adk runs it from the tool's context, a fresh parent for
		// every call: each run is the sub-agent's first under it (@1), and
		// as that context has no event author, events the runtime makes
		// for a run that yielded nothing are the sub-agent's own.
		run.nodePath = ctx.nodePath + "/" + name + "@1"
		run.node = &nodeRun{name: name, path: run.nodePath, parent: ctx.node, branch: run.branch}
	}
	if in != nil {
		ev := session.NewEvent(ctx.inv.id, "user", run.branch)
		ev.Content = in
		if run.nodePath != "" {
			ev.NodeInfo = &session.NodeInfo{Path: run.nodePath}
		}
		ev.IsolationScope = run.isolationScope
		run.singleTurn = &singleTurnInput{agent: agent, event: ev, at: at}
	}
	la, _ := agent.(*LlmAgent)
	var output any
	hasOutput := false
	pending := map[string]bool{}
	for ev, err := range runAgent(run, agent) {
		if err == nil && la != nil && hasOutput {
			// A second output (an after_agent callback's content after the
			// answer) fails the node, as google-adk's Context does.
			if _, again := la.nodeOutput(ev); again {
				author := name
				if run.node != nil {
					author = run.node.eventAuthor()
				}
				err = &agentRunError{agent: name, author: author, branch: run.branch, nodePath: run.nodePath, scope: run.isolationScope, err: errOutputAlreadySet}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// google-adk's node runner records the failure as an error
			// event of the sub-agent's run, and run_node raises
			// DynamicNodeFailError, whose text names the node, not the
			// cause, which the tool returns.
			var failed *agentRunError
			if errors.As(err, &failed) && run.nodePath != "" && tc.emit != nil {
				ev := failureEvent(ctx.inv.id, failed, err)
				if err := tc.emit(ev); err != nil {
					return nil, err
				}
			}
			ctx.inv.log.Info("single_turn sub-agent failed", "agent", name, "err", err)
			return fmt.Sprintf("Error running sub-agent: Dynamic node %s failed", name), nil
		}
		if la != nil {
			if out, ok := la.nodeOutput(ev); ok {
				output, hasOutput = out, true
				markOutput(ev, run.nodePath, la.cfg.OutputSchema == nil)
			}
		}
		// A long-running call interrupts the run even when its tool
		// answered with a status: google-adk's node runner keeps its id
		// until the user's own response comes.
		if !ev.Partial {
			for _, id := range ev.LongRunningToolIDs {
				pending[id] = true
			}
		}
		if tc.emit == nil {
			continue
		}
		if err := tc.emit(ev); err != nil {
			return nil, err
		}
	}
	if len(pending) > 0 {
		return singleTurnPaused{}, nil
	}
	return output, nil
}

// resumeSingleTurnCalls runs again the single_turn calls a made in this
// invocation that no response answers (they paused on a long-running call
// the user has answered since, google-adk's node rerun), each from where
// its call was made, and yields the responses of those that finish. It
// returns false when the run must end: the caller stopped, a call failed,
// or a sub-agent is still waiting.
func (a *LlmAgent) resumeSingleTurnCalls(ctx *InvocationContext, yield func(*session.Event, error) bool) bool {
	events := ctx.Session().Events()
	answered := map[string]bool{}
	for _, ev := range contents.LiveEvents(events) {
		for _, fr := range ev.FunctionResponses() {
			if fr.ID != "" {
				answered[fr.ID] = true
			}
		}
	}
	for i, ev := range events {
		if ev.InvocationID != ctx.inv.id || ev.Author != a.Name || ev.Branch != ctx.branch || ev.Partial {
			continue
		}
		for _, fc := range ev.FunctionCalls() {
			st := a.singleTurnTool(fc.Name)
			if st == nil || fc.ID == "" || answered[fc.ID] {
				continue
			}
			answered[fc.ID] = true
			emit, stopped := lockedEmitter(yield)
			tc := &toolContext{callbackContext: newCallbackContext(ctx, &session.EventActions{}), callID: fc.ID, emit: emit}
			// A node run again has no input of its own: google-adk's
			// agent then reads the invocation's message.
			out, err := runSingleTurnAt(tc, st.agent, firstUserMessage(events, ctx.inv.id), i+1)
			if stopped() {
				return false
			}
			if err != nil {
				yield(nil, err)
				return false
			}
			if _, paused := out.(singleTurnPaused); paused {
				return false
			}
			resp := buildResponseEvent(ctx, st, out, nil, tc)
			ctx.stampNode(resp)
			if !yield(resp, nil) {
				return false
			}
		}
	}
	return true
}

func (a *LlmAgent) singleTurnTool(name string) *singleTurnAgentTool {
	for _, t := range a.modeTools {
		if st, ok := t.(*singleTurnAgentTool); ok && st.Name() == name {
			return st
		}
	}
	return nil
}

// singleTurnRequest is the user content a single_turn call's request
// argument becomes; nil without one.
func singleTurnRequest(args map[string]any, order json.RawMessage) *genai.Content {
	v, ok := args["request"]
	if !ok || v == nil {
		return nil
	}
	text, isStr := v.(string)
	if !isStr {
		s, err := pyfmt.JSONDumpsOrdered(v, order)
		if err != nil {
			s = fmt.Sprint(v)
		}
		text = s
	}
	return &genai.Content{Role: "user", Parts: []*genai.Part{{Text: text}}}
}

// nodeOutput is the output a model message of the agent carries when it
// runs as a node (google-adk process_llm_agent_output): its text, or the
// text parsed under an output schema.
func (a *LlmAgent) nodeOutput(ev *session.Event) (any, bool) {
	if ev.Author != a.Name || ev.Partial || ev.Content == nil || ev.Content.Role != "model" || len(ev.FunctionCalls()) > 0 {
		return nil, false
	}
	text := visibleText(ev.Content)
	if a.cfg.OutputSchema == nil {
		return text, true
	}
	if strings.TrimSpace(text) == "" {
		return nil, true
	}
	parsed, err := parseJSONOutput(text)
	if err != nil {
		return nil, false
	}
	ev.Output = parsed
	return parsed, true
}

// markOutput records on ev that it holds the output of the run at path.
func markOutput(ev *session.Event, path string, messageIsOutput bool) {
	if ev.NodeInfo == nil {
		ev.NodeInfo = &session.NodeInfo{Path: path}
	}
	if path != "" {
		ev.NodeInfo.OutputFor = []string{path}
	}
	ev.NodeInfo.MessageAsOutput = messageIsOutput
}

// delegatesTasks reports whether a's model can delegate to task agents, so
// its runs go through runDelegating.
func (a *LlmAgent) delegatesTasks() bool {
	for _, t := range a.modeTools {
		switch t.(type) {
		case *taskAgentTool, *singleTurnAgentTool:
			return true
		}
	}
	return false
}

// taskCalls returns the calls of ev that delegate to a task agent.
func (a *LlmAgent) taskCalls(ev *session.Event) []*genai.FunctionCall {
	if ev.Partial || ev.Author != a.Name {
		return nil
	}
	var out []*genai.FunctionCall
	for _, fc := range ev.FunctionCalls() {
		if fc.ID != "" && a.taskTool(fc.Name) != nil {
			out = append(out, fc)
		}
	}
	return out
}

// hasEagerCalls reports whether ev calls tools that answer in this step:
// any known tool other than a task agent's.
func (a *LlmAgent) hasEagerCalls(ev *session.Event) bool {
	for _, fc := range ev.FunctionCalls() {
		if fc.Name == "" || a.taskTool(fc.Name) != nil {
			continue
		}
		if a.hasTool(fc.Name) {
			return true
		}
	}
	return false
}

func (a *LlmAgent) taskTool(name string) *taskAgentTool {
	for _, t := range a.modeTools {
		if tt, ok := t.(*taskAgentTool); ok && tt.Name() == name {
			return tt
		}
	}
	return nil
}

func (a *LlmAgent) hasTool(name string) bool {
	for _, t := range a.cfg.Tools {
		if t.Name() == name {
			return true
		}
	}
	for _, t := range a.modeTools {
		if t.Name() == name {
			return true
		}
	}
	return false
}

// runDelegating runs an agent that delegates tasks: first the task calls
// of earlier turns still unanswered, then passes of the agent; a pass that
// calls task agents ends after the call (and the responses of the other
// calls it made), the tasks run, and a new pass follows with their
// responses in the history. A task that waits for the user ends the run.
func runDelegating(parent *InvocationContext, a *LlmAgent) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		ctx := parent.forAgent(a)
		scope := ""
		if a.cfg.Mode == ModeTask {
			scope = ctx.isolationScope
		}
		for _, fc := range a.unresolvedTaskCalls(ctx.Session().Events(), scope, a.cfg.Mode == ModeTask) {
			if !a.dispatchTask(ctx, fc, yield) {
				return
			}
		}
		if !a.resumeSingleTurnCalls(ctx, yield) {
			return
		}
		for {
			var calls []*genai.FunctionCall
			awaitResponses := false
			for ev, err := range runAgentOnce(parent, a) {
				if err != nil {
					yield(nil, err)
					return
				}
				// After a pass's task calls, only the responses of its other
				// calls are let through: a model message would start the next
				// step without the tasks' responses.
				if awaitResponses && ev.Content != nil && ev.Content.Role == "model" {
					break
				}
				if !yield(ev, nil) {
					return
				}
				if awaitResponses {
					if len(ev.FunctionResponses()) > 0 {
						break
					}
					continue
				}
				if tc := a.taskCalls(ev); len(tc) > 0 {
					calls = tc
					if !a.hasEagerCalls(ev) {
						break
					}
					awaitResponses = true
				}
			}
			if len(calls) == 0 {
				return
			}
			for _, fc := range calls {
				if !a.dispatchTask(ctx, fc, yield) {
					return
				}
			}
		}
	}
}

// unresolvedTaskCalls returns a's task calls that no event answers
// (google-adk _find_unresolved_task_delegations): calls authored by a (in
// scope, for a task agent), answered by a response anywhere a or the user
// authored.
func (a *LlmAgent) unresolvedTaskCalls(events []*session.Event, scope string, scoped bool) []*genai.FunctionCall {
	var calls []*genai.FunctionCall
	answered := map[string]bool{}
	for _, ev := range contents.LiveEvents(events) {
		if ev.Author != a.Name && ev.Author != "user" {
			continue
		}
		inScope := !scoped || ev.IsolationScope == scope
		for _, fc := range ev.FunctionCalls() {
			if inScope && fc.ID != "" && a.taskTool(fc.Name) != nil {
				calls = append(calls, fc)
			}
		}
		for _, fr := range ev.FunctionResponses() {
			if fr.ID != "" {
				answered[fr.ID] = true
			}
		}
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(calls, func(fc *genai.FunctionCall) bool {
		drop := answered[fc.ID] || seen[fc.ID]
		seen[fc.ID] = true
		return drop
	})
}

// dispatchTask runs the task agent fc delegates to, in the scope of the
// call, and, when it finishes, yields the response event that carries its
// output to the delegating agent. It returns false when the run must end:
// the caller stopped, the task failed, or it waits for the user.
func (a *LlmAgent) dispatchTask(ctx *InvocationContext, fc *genai.FunctionCall, yield func(*session.Event, error) bool) bool {
	target, ok := ctx.FindAgent(fc.Name).(*LlmAgent)
	if !ok {
		yield(nil, fmt.Errorf("agent %q: task target agent %q not found", a.Name, fc.Name))
		return false
	}
	run := ctx.fork()
	run.branch = subBranch(ctx.branch, fc.Name, fc.ID)
	run.isolationScope = fc.ID
	run.singleTurn = nil
	if ctx.nodePath != "" {
		run.nodePath = ctx.nodePath + "/" + fc.Name + "@" + fc.ID
		run.node = newNodeRun(ctx.node, fc.Name, run.nodePath)
		run.node.subBranches, run.node.branch = true, run.branch
	}
	output, finished, cont := runTask(run, target, yield)
	if !cont || !finished {
		return false
	}
	response, isMap := output.(map[string]any)
	if !isMap {
		response = map[string]any{"output": output}
	}
	ev := session.NewEvent(ctx.inv.id, "user", ctx.branch)
	ev.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{
		FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: response},
	}}}
	ctx.stampNode(ev)
	return yield(ev, nil)
}

// runTask runs a task agent until its finish_task call is answered. It
// returns the task output and whether the task finished; cont is false when
// the caller stopped or the run failed (the error was yielded).
func runTask(run *InvocationContext, agent *LlmAgent, yield func(*session.Event, error) bool) (output any, finished, cont bool) {
	finish, _ := agent.finishTool()
	var pending map[string]any
	transferred := false
	for ev, err := range runAgent(run, agent) {
		if err != nil {
			yield(nil, err)
			return nil, false, false
		}
		if ev.Author == agent.Name && !ev.Partial {
			if ev.Actions.TransferToAgent != "" {
				transferred = true
			}
			if args, ok := finishCall(ev); ok && len(agent.taskCalls(ev)) == 0 {
				pending = args
			} else if pending != nil && isTerminalFinishResponse(ev) {
				output = pending
				if finish != nil {
					output = finish.output(pending)
				}
				ev.Output = output
				// The output is the finishing run's, which is another run
				// of the agent when a transfer came back to it.
				path := run.nodePath
				if ev.NodeInfo != nil && ev.NodeInfo.Path != "" {
					path = ev.NodeInfo.Path
				}
				markOutput(ev, path, false)
				if key := agent.cfg.OutputKey; key != "" && output != nil {
					if ev.Actions.StateDelta == nil {
						ev.Actions.StateDelta = map[string]any{}
					}
					ev.Actions.StateDelta[key] = output
				}
				// The task's run ends with its output, as google-adk's
				// wrapper returns there (no after-agent callbacks).
				return output, true, yield(ev, nil)
			}
		}
		if !yield(ev, nil) {
			return nil, false, false
		}
	}
	// A task agent that transferred ends its task once the agents it
	// transferred to are done, with no output (google-adk's run_node does
	// not wait for the user after a transfer).
	return nil, transferred, true
}

// finishCall returns the arguments of ev's finish_task call.
func finishCall(ev *session.Event) (map[string]any, bool) {
	for _, fc := range ev.FunctionCalls() {
		if fc.Name == finishTaskName {
			args := map[string]any{}
			for k, v := range fc.Args {
				args[k] = session.DeepCopy(v)
			}
			return args, true
		}
	}
	return nil, false
}

// finishTool returns the agent's finish_task tool.
func (a *LlmAgent) finishTool() (*finishTaskTool, bool) {
	for _, t := range a.modeTools {
		if ft, ok := t.(*finishTaskTool); ok {
			return ft, true
		}
	}
	return nil, false
}

// findActiveTaskScope returns the isolation scope and invocation of the
// latest task that has not finished (google-adk _find_active_task_scope):
// a user message without a function response joins it.
func findActiveTaskScope(events []*session.Event) (scope, invocationID string, ok bool) {
	// Without any scoped event there is no task: skip the rewind pass and
	// its copy of the history, the common case.
	if !slices.ContainsFunc(events, func(ev *session.Event) bool { return ev.IsolationScope != "" }) {
		return "", "", false
	}
	live := contents.LiveEvents(events)
	finished := map[string]bool{}
	aborted := map[string]bool{} // a task of an aborted invocation waits for no one
	for _, ev := range live {
		if isAbortEvent(ev) {
			aborted[ev.InvocationID] = true
		}
		if ev.IsolationScope == "" {
			continue
		}
		for _, fr := range ev.FunctionResponses() {
			if fr.Name == finishTaskName {
				if isTerminalFinishResponse(ev) {
					finished[ev.IsolationScope] = true
				}
				break
			}
		}
	}
	for i := len(live) - 1; i >= 0; i-- {
		ev := live[i]
		if ev.Actions.Compaction != nil || ev.IsolationScope == "" {
			continue
		}
		if !finished[ev.IsolationScope] && !aborted[ev.InvocationID] {
			return ev.IsolationScope, ev.InvocationID, true
		}
	}
	return "", "", false
}

// taskAwaitingUser reports whether a task delegation of this invocation
// waits for the user: the invocation pauses there, as on a long-running
// call, so workflow agents run no further children until it finishes.
func (c *InvocationContext) taskAwaitingUser() bool {
	_, inv, ok := findActiveTaskScope(c.inv.session.Events())
	return ok && inv == c.inv.id
}

// resolveTaskDelegator maps an agent inside a task delegation to the agent
// that delegated it (google-adk _resolve_task_delegator): the next user
// message goes to the delegating agent, which resumes the task.
func resolveTaskDelegator(a Agent, t *tree) Agent {
	delegator := a
	for cur := a; cur != t.root && t.parent[cur] != nil; cur = t.parent[cur] {
		if modeOf(cur).delegated() {
			delegator = t.parent[cur]
		}
	}
	return delegator
}

// taskInputContent is the first user turn of a scoped agent: the
// arguments of the call that delegated to it, as JSON (google-adk
// _build_task_input_user_content); without that call, the run's user
// content. A single_turn agent is also told that no reply will come.
func taskInputContent(events []*session.Event, scope string, singleTurn bool, fallback *genai.Content) *genai.Content {
	var parts []*genai.Part
	for _, ev := range events {
		for _, fc := range ev.FunctionCalls() {
			if fc.ID == scope && len(fc.Args) > 0 && parts == nil {
				text, err := pyfmt.JSONDumps(fc.Args)
				if err != nil {
					text = fmt.Sprint(fc.Args)
				}
				parts = []*genai.Part{{Text: text}}
			}
		}
	}
	if parts == nil && fallback != nil && len(fallback.Parts) > 0 {
		parts = slices.Clone(fallback.Parts)
	}
	if parts == nil {
		return nil
	}
	if singleTurn {
		parts = append(parts, &genai.Part{Text: "Important: You will not receive any user replies or clarifications. Complete the task using only the information provided above."})
	}
	return &genai.Content{Role: "user", Parts: parts}
}

// singleTurnView returns the events a single_turn agent's history is built
// from: the session's with its request inserted where its run started,
// keeping only events on its branch and, by node path, its own run's (and,
// for a whole-history view, its ancestors') (google-adk
// _filter_single_turn_node_events).
func singleTurnView(events []*session.Event, in *singleTurnInput, branch, nodePath string, ancestors bool) []*session.Event {
	view := make([]*session.Event, 0, len(events)+1)
	if in != nil {
		at := min(in.at, len(events))
		view = append(view, events[:at]...)
		view = append(view, in.event)
		view = append(view, events[at:]...)
	} else {
		view = append(view, events...)
	}
	return slices.DeleteFunc(view, func(ev *session.Event) bool {
		if !contents.BelongsToBranch(branch, ev) {
			return true
		}
		if nodePath == "" {
			return false
		}
		p := ""
		if ev.NodeInfo != nil {
			p = ev.NodeInfo.Path
		}
		return !(nodePathIncludes(nodePath, p) || ancestors && nodePathDescends(nodePath, p))
	})
}

// nodePathIncludes reports whether path is empty, self, or below self.
func nodePathIncludes(self, path string) bool {
	return path == "" || path == self || nodePathDescends(path, self)
}

// nodePathDescends reports whether path is strictly below ancestor.
func nodePathDescends(path, ancestor string) bool {
	if ancestor == "" {
		return path != ""
	}
	return strings.HasPrefix(path, ancestor+"/")
}
