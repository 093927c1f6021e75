package engine

import (
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestFindActiveTaskScope(t *testing.T) {
	ev := func(inv, scope string, parts ...*genai.Part) *session.Event {
		e := session.NewEvent(inv, "researcher", "")
		e.IsolationScope = scope
		e.Content = &genai.Content{Role: "model", Parts: parts}
		return e
	}
	text := &genai.Part{Text: "Which cats?"}
	finished := &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: finishTaskName, Response: map[string]any{"result": finishTaskSuccessResult}}}
	retry := &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: finishTaskName, Response: map[string]any{"error": "bad"}}}

	if _, _, ok := findActiveTaskScope([]*session.Event{ev("i1", "", text)}); ok {
		t.Errorf("unscoped events: found an active task")
	}
	scope, inv, ok := findActiveTaskScope([]*session.Event{ev("i1", "a", text), ev("i2", "b", text)})
	if !ok || scope != "b" || inv != "i2" {
		t.Errorf("latest scope = %q %q %v, want b i2", scope, inv, ok)
	}
	scope, _, ok = findActiveTaskScope([]*session.Event{ev("i1", "a", text), ev("i2", "b", text), ev("i2", "b", finished)})
	if !ok || scope != "a" {
		t.Errorf("after b finished: scope = %q %v, want a", scope, ok)
	}
	if scope, _, ok = findActiveTaskScope([]*session.Event{ev("i1", "a", text), ev("i1", "a", retry)}); !ok || scope != "a" {
		t.Errorf("a validation error does not close the scope: got %q %v", scope, ok)
	}
}

func TestFinishTaskTool(t *testing.T) {
	ft, err := newFinishTaskTool(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ft.Run(nil, map[string]any{"result": "done"}); got != finishTaskSuccessResult {
		t.Errorf("valid args: %v", got)
	}
	for _, args := range []map[string]any{{}, {"result": 3}, {"result": "x", "extra": 1}} {
		got, _ := ft.Run(nil, args)
		if m, ok := got.(map[string]any); !ok || m["error"] == nil {
			t.Errorf("%v: want a validation error, got %v", args, got)
		}
	}
	if out := ft.output(map[string]any{"result": "r"}); out.(map[string]any)["result"] != "r" {
		t.Errorf("object schema output = %v, want the args", out)
	}
	wrapped, err := newFinishTaskTool(map[string]any{"type": "string"})
	if err != nil {
		t.Fatal(err)
	}
	if out := wrapped.output(map[string]any{"result": "r"}); out != "r" {
		t.Errorf("wrapped output = %v, want r", out)
	}
}

func TestRootModeAndTransferTargets(t *testing.T) {
	task, err := NewLlmAgent(LlmAgentConfig{Name: "task", Mode: ModeTask})
	if err != nil {
		t.Fatal(err)
	}
	chat, err := NewLlmAgent(LlmAgentConfig{Name: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := NewLlmAgent(LlmAgentConfig{Name: "root", SubAgents: []Agent{task, chat}})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTree(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := root.transferTargetsIn(tr); len(got) != 1 || got[0] != Agent(chat) {
		t.Errorf("transfer targets = %v, want only chat", got)
	}
	if !root.delegatesTasks() || root.taskTool("task") == nil {
		t.Errorf("root does not offer its task sub-agent as a tool")
	}
	if _, ok := task.finishTool(); !ok {
		t.Errorf("task agent has no finish_task")
	}
	if resolveTaskDelegator(task, tr) != Agent(root) {
		t.Errorf("task agent's delegator is not root")
	}
	single, err := NewLlmAgent(LlmAgentConfig{Name: "s", Mode: ModeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRootMode(single); err == nil {
		t.Errorf("single_turn root accepted")
	}
	if _, err := NewLlmAgent(LlmAgentConfig{Name: "x", Mode: "bogus"}); err == nil {
		t.Errorf("unknown mode accepted")
	}
}

// A task agent with an output schema and tools gets no set_model_response
// tool nor its instruction (google-adk's output-schema processor skips
// task mode: finish_task takes the schema); a chat agent does.
func TestTaskAgentGetsNoSetModelResponse(t *testing.T) {
	pick, err := tool.NewFunction(tool.FunctionConfig{Name: "pick", Description: "Picks.",
		Fn: func(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	for _, mode := range []AgentMode{ModeTask, ModeChat} {
		a, err := NewLlmAgent(LlmAgentConfig{Name: "planner", Mode: mode, OutputSchema: schema, Tools: []tool.Tool{pick}})
		if err != nil {
			t.Fatal(err)
		}
		call := &llmCall{req: &model.Request{}, tools: map[string]tool.Tool{}}
		if err := a.outputSchemaProcessor(call, nil); err != nil {
			t.Fatal(err)
		}
		_, offered := call.tools[setModelResponseName]
		if want := mode == ModeChat; offered != want || (call.req.SystemInstructionText() != "") != want {
			t.Errorf("mode %s: set_model_response offered %v, instruction %q; want offered %v", mode, offered, call.req.SystemInstructionText(), want)
		}
	}
}
