package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// A single_turn sub-agent that fails, as in google-adk's node runtime:
// the failure is an error event of the sub-agent's run (authored by the
// sub-agent, which yielded nothing, on its branch and node path), and the
// call's result names the node, as DynamicNodeFailError does.
func TestSingleTurnFailureIsAnErrorEventOfItsRun(t *testing.T) {
	t.Parallel()
	m := scripted.FromSteps("m",
		scripted.Step{Response: calls(fcallID("call-w", "worker", map[string]any{"request": "go"}))},
		scripted.Step{Err: errors.New("model exploded")},
		scripted.Step{Response: text("It failed.")})
	worker := newLlm(t, engine.LlmAgentConfig{Name: "worker", Model: m, Mode: engine.ModeSingleTurn})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{worker}})
	r, svc := mustRunner(t, coordinator)
	evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{})
	var failure, answer *session.Event
	for _, ev := range evs {
		if ev.ErrorMessage != "" {
			failure = ev
		}
		for _, fr := range ev.FunctionResponses() {
			if fr.Name == "worker" {
				answer = ev
			}
		}
	}
	if failure == nil || failure.Author != "worker" || failure.Branch != "worker@call-w" || failure.ErrorMessage != "model exploded" ||
		failure.NodeInfo == nil || failure.NodeInfo.Path != "coordinator@1/worker@1" {
		t.Errorf("error event = %+v, want the worker's, on its branch and path", failure)
	}
	if answer == nil {
		t.Fatal("no response to the worker call")
	}
	if got := answer.FunctionResponses()[0].Response["result"]; got != "Error running sub-agent: Dynamic node worker failed" {
		t.Errorf("worker call result = %v, want google-adk's DynamicNodeFailError text", got)
	}
}

// A task agent that transfers to its sub-agent: the target runs on a
// sub-branch of the task's branch named after its run, and when it is done
// the task ends with no output (google-adk's run_node does not wait for
// the user after a transfer): the delegating agent gets {"output": null}
// and answers in the same turn.
func TestTaskTransferEndsTheTask(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-r", "researcher", map[string]any{"request": "cats"})),
		calls(fcallID("call-t", "transfer_to_agent", map[string]any{"agent_name": "diver"})),
		text("Deep facts about cats."),
		text("Done."))
	diver := newLlm(t, engine.LlmAgentConfig{Name: "diver", Model: m, Description: "Dives."})
	researcher := newLlm(t, engine.LlmAgentConfig{Name: "researcher", Model: m, Mode: engine.ModeTask, SubAgents: []engine.Agent{diver}})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{researcher}})
	r, svc := mustRunner(t, coordinator)
	evs := mustRun(t, r, svc, "s", userText("Research cats."), engine.RunConfig{})
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Author+"/"+ev.Branch)
	}
	want := "coordinator/ researcher/researcher@call-r researcher/researcher@call-r diver/researcher@call-r.diver@1 user/ coordinator/"
	if strings.Join(got, " ") != want {
		t.Fatalf("events (author/branch) = %s, want %s", strings.Join(got, " "), want)
	}
	fr := evs[4].FunctionResponses()
	if len(fr) != 1 || fr[0].ID != "call-r" || len(fr[0].Response) != 1 || fr[0].Response["output"] != nil {
		t.Errorf("task response = %+v, want {\"output\": null}", fr)
	}
	if _, ok := fr[0].Response["output"]; !ok {
		t.Errorf("task response %v has no output key", fr[0].Response)
	}
}

// A task agent whose model fails: the error event belongs to the task's
// isolation scope, as google-adk's node runner stamps it, so the task stays
// the active one and the user's next message joins it.
func TestTaskFailureEventIsInTheTaskScope(t *testing.T) {
	t.Parallel()
	m := scripted.FromSteps("m",
		scripted.Step{Response: calls(fcallID("call-r", "researcher", map[string]any{"request": "cats"}))},
		scripted.Step{Err: errors.New("model exploded")},
		scripted.Step{Response: text("Which cats?")})
	researcher := newLlm(t, engine.LlmAgentConfig{Name: "researcher", Model: m, Mode: engine.ModeTask})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{researcher}})
	r, svc := mustRunner(t, coordinator)
	evs, err := run(t, r, svc, "s", userText("Research cats."), engine.RunConfig{})
	if err == nil || len(evs) != 2 || evs[1].ErrorMessage != "model exploded" || evs[1].IsolationScope != "call-r" {
		t.Fatalf("turn 1: %v, events %s; want the failure's error event in scope call-r", err, eventsJSON(evs))
	}
	mustRun(t, r, svc, "s", userText("Hello?"), engine.RunConfig{})
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	if n := len(last.Contents); n != 2 || last.Contents[1].Parts[0].Text != "Hello?" {
		t.Errorf("the task's request after the failure has %d contents, want its input and the user's message", n)
	}
}

// A single_turn sub-agent that pauses on a long-running call pauses the
// delegating agent with it (google-adk's NodeInterruptedError): no
// response answers the delegation. The user's answer resumes the
// sub-agent, whose answer then answers the delegation, and the
// delegating agent goes on in the same turn.
func TestSingleTurnPausedOnLongRunningCallResumes(t *testing.T) {
	t.Parallel()
	ask, err := tool.NewFunction(tool.FunctionConfig{Name: "ask_human", Description: "Asks.", LongRunning: true,
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New("m",
		calls(fcallID("call-a", "approver", map[string]any{"request": "approve it"})),
		calls(fcallID("call-h", "ask_human", map[string]any{})),
		text("Approved by the human."),
		text("It is approved."))
	approver := newLlm(t, engine.LlmAgentConfig{Name: "approver", Model: m, Mode: engine.ModeSingleTurn, Tools: []tool.Tool{ask}})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{approver}})
	r, svc := mustRunner(t, coordinator)
	evs := mustRun(t, r, svc, "s", userText("Get it approved."), engine.RunConfig{})
	if len(evs) != 2 || evs[1].Author != "approver" || len(evs[1].LongRunningToolIDs) != 1 {
		t.Fatalf("turn 1 = %s, want the delegation and the approver's pending call only", eventsJSON(evs))
	}
	evs = mustRun(t, r, svc, "s", userFuncResponse("call-h", "ask_human", map[string]any{"ok": true}), engine.RunConfig{})
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Author)
	}
	if strings.Join(got, " ") != "approver coordinator coordinator" {
		t.Fatalf("turn 2 authors = %v, want the approver's answer, the delegation's response, the coordinator's answer", got)
	}
	if fr := evs[1].FunctionResponses(); len(fr) != 1 || fr[0].ID != "call-a" || fr[0].Response["result"] != "Approved by the human." {
		t.Errorf("delegation response = %+v", fr)
	}
	if evs[0].InvocationID != evs[2].InvocationID {
		t.Errorf("turn 2 left the paused invocation")
	}
}

// The pause holds when the sub-agent's long-running tool answered with a
// status (google-adk keeps the call's id until the user answers) and when
// the delegation came beside another call: that call's response is
// stored, and the delegating agent's model is not asked again.
func TestSingleTurnPauseWithStatusAndSibling(t *testing.T) {
	t.Parallel()
	ask, err := tool.NewFunction(tool.FunctionConfig{Name: "ask_human", Description: "Asks.", LongRunning: true,
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) {
			return map[string]any{"status": "pending"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	logIt, err := tool.NewFunction(tool.FunctionConfig{Name: "log_it", Description: "Logs.",
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{"ok": true}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New("m",
		calls(fcallID("call-l", "log_it", map[string]any{}), fcallID("call-a", "approver", map[string]any{"request": "approve it"})),
		calls(fcallID("call-h", "ask_human", map[string]any{})),
		text("Approval is pending."),
		text("The coordinator must not be asked again."))
	approver := newLlm(t, engine.LlmAgentConfig{Name: "approver", Model: m, Mode: engine.ModeSingleTurn, Tools: []tool.Tool{ask}})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, Tools: []tool.Tool{logIt}, SubAgents: []engine.Agent{approver}})
	r, svc := mustRunner(t, coordinator)
	evs := mustRun(t, r, svc, "s", userText("Log and approve."), engine.RunConfig{})
	if n := len(m.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (the coordinator once, the approver twice)", n)
	}
	last := evs[len(evs)-1]
	if fr := last.FunctionResponses(); last.Author != "coordinator" || len(fr) != 1 || fr[0].ID != "call-l" {
		t.Errorf("last event = %s, want the coordinator's response to log_it alone", eventsJSON(evs))
	}
}

// A single_turn sub-agent whose after_agent callback returns content after
// its answer produces a second output, which google-adk's node refuses
// (ValueError "Output already set..."): an error event of the sub-agent's
// run instead of the callback's event, and the failure text as the result.
// Each call runs the sub-agent as the first run under the call (@1).
func TestSingleTurnSecondOutputFails(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-f", "formatter", map[string]any{"request": "hi"})),
		text("**hi**"),
		calls(fcallID("call-g", "formatter", map[string]any{"request": "ho"})),
		text("**ho**"),
		text("Done."))
	formatter := newLlm(t, engine.LlmAgentConfig{Name: "formatter", Model: m, Mode: engine.ModeSingleTurn,
		AfterAgent: []callbacks.AfterAgent{func(callbacks.CallbackContext) (*genai.Content, error) {
			return &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "Signing off."}}}, nil
		}}})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{formatter}})
	r, svc := mustRunner(t, coordinator)
	evs := mustRun(t, r, svc, "s", userText("Format."), engine.RunConfig{})
	var failures, results []string
	for _, ev := range evs {
		if ev.ErrorCode != "" {
			failures = append(failures, ev.Author+":"+ev.ErrorCode+":"+ev.ErrorMessage+":"+ev.NodeInfo.Path)
		}
		for _, fr := range ev.FunctionResponses() {
			results = append(results, fmt.Sprint(fr.Response["result"]))
		}
		if ev.Content != nil && len(ev.Content.Parts) > 0 && ev.Content.Parts[0].Text == "Signing off." {
			t.Errorf("the callback's second output was stored: %s", eventsJSON([]*session.Event{ev}))
		}
	}
	want := "formatter:ValueError:Output already set. A node can produce at most one output.:coordinator@1/formatter@1"
	if len(failures) != 2 || failures[0] != want || failures[1] != want {
		t.Errorf("error events = %q, want two of %q", failures, want)
	}
	if len(results) != 2 || results[0] != "Error running sub-agent: Dynamic node formatter failed" || results[1] != results[0] {
		t.Errorf("results = %q", results)
	}
}

// A task agent with include_contents none has no turn of its own in view on
// its first request (the user's message is outside its scope), so, as in
// google-adk, its request has no contents at all, not even the task input;
// once the user answers inside the task, the input leads the turn.
func TestTaskIncludeContentsNoneFirstRequest(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-r", "researcher", map[string]any{"request": "cats"})),
		text("Which cats?"),
		calls(fcallID("call-f", "finish_task", map[string]any{"result": "house cats"})),
		text("House cats."))
	researcher := newLlm(t, engine.LlmAgentConfig{Name: "researcher", Model: m, Mode: engine.ModeTask, IncludeContents: engine.IncludeContentsNone})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{researcher}})
	r, svc := mustRunner(t, coordinator)
	mustRun(t, r, svc, "s", userText("Research cats."), engine.RunConfig{})
	mustRun(t, r, svc, "s", userText("House cats."), engine.RunConfig{})
	reqs := m.Requests()
	if n := len(reqs[1].Contents); n != 0 {
		t.Errorf("the task's first request has %d contents, want none", n)
	}
	if c := reqs[2].Contents; len(c) != 2 || c[0].Parts[0].Text != `{"request": "cats"}` || c[1].Parts[0].Text != "House cats." {
		t.Errorf("the task's second request = %v, want its input and the user's answer", c)
	}
}

// An agent a root task agent transferred to answers the next message
// inside the root's task (google-adk keeps the task's isolation scope):
// its events stay in the scope and its request leads with the message.
func TestRootTaskTransferTargetKeepsTheScope(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-t", "transfer_to_agent", map[string]any{"agent_name": "helper"})),
		text("Helper answer."),
		text("Helper again."))
	helper := newLlm(t, engine.LlmAgentConfig{Name: "helper", Model: m, Description: "Helps."})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root_task", Model: m, Mode: engine.ModeTask, SubAgents: []engine.Agent{helper}})
	r, svc := mustRunner(t, root)
	mustRun(t, r, svc, "s", userText("Start."), engine.RunConfig{})
	evs := mustRun(t, r, svc, "s", userText("Next."), engine.RunConfig{})
	if len(evs) != 1 || evs[0].Author != "helper" || evs[0].IsolationScope != "root_task@1" {
		t.Fatalf("turn 2 = %s, want the helper's answer in scope root_task@1", eventsJSON(evs))
	}
	reqs := m.Requests()
	if c := reqs[len(reqs)-1].Contents; len(c) == 0 || c[0].Parts[0].Text != "Next." {
		t.Errorf("the helper's second request = %v, want it to lead with the message", c)
	}
}

// A root task agent its sub-agent transfers back to runs as a new task in
// the scope of its new node path (google-adk's scheduler scopes a task
// node by its path): it sees only the message, and its run ends at its
// finish_task with the task's output, without asking its model again.
func TestRootTaskReachedByTransferIsANewTask(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-t", "transfer_to_agent", map[string]any{"agent_name": "helper"})),
		text("What do you need?"),
		calls(fcallID("call-b", "transfer_to_agent", map[string]any{"agent_name": "root_task"})),
		calls(fcallID("call-f", "finish_task", map[string]any{"result": "done"})),
		text("The model must not be asked after finish_task."))
	helper := newLlm(t, engine.LlmAgentConfig{Name: "helper", Model: m, Description: "Helps."})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root_task", Model: m, Mode: engine.ModeTask, SubAgents: []engine.Agent{helper}})
	r, svc := mustRunner(t, root)
	mustRun(t, r, svc, "s", userText("Start."), engine.RunConfig{})
	evs := mustRun(t, r, svc, "s", userText("Back to you."), engine.RunConfig{})
	last := evs[len(evs)-1]
	if last.Author != "root_task" || last.IsolationScope != "root_task@2" || last.Output == nil || len(last.FunctionResponses()) != 1 {
		t.Fatalf("turn 2 = %s, want it to end with root_task@2's finish_task response and output", eventsJSON(evs))
	}
	reqs := m.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if c := reqs[3].Contents; len(c) != 1 || c[0].Parts[0].Text != "Back to you." {
		t.Errorf("the new task's request = %v, want the message alone", c)
	}
}
