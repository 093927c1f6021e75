package engine

// LlmAgent delegation modes (google-adk 2.13 LlmAgent.mode): a chat agent
// offers its task and single_turn sub-agents to its model as tools instead
// of transfer targets. This file holds the mode itself and the tools it
// adds; task.go runs the delegations.

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
)

// AgentMode is how an LlmAgent takes part in a conversation.
type AgentMode string

const (
	// ModeDefault leaves the mode unset: chat, as google-adk defaults a
	// sub-agent and a root agent.
	ModeDefault AgentMode = ""
	// ModeChat is a conversational agent reached by transfer_to_agent.
	ModeChat AgentMode = "chat"
	// ModeTask is an agent its parent delegates a task to through a tool
	// call: it may talk with the user over several turns, in its own
	// isolation scope, and ends the task by calling finish_task.
	ModeTask AgentMode = "task"
	// ModeSingleTurn is an agent its parent calls as a tool: it answers
	// once from the request alone and its answer is the tool's result.
	ModeSingleTurn AgentMode = "single_turn"
)

// delegated reports whether the mode makes the agent a tool of its parent
// rather than a transfer target (google-adk DELEGATED_TASK_MODES).
func (m AgentMode) delegated() bool { return m == ModeTask || m == ModeSingleTurn }

// validAgentMode reports whether m is a mode NewLlmAgent accepts.
func validAgentMode(m AgentMode) bool {
	switch m {
	case ModeDefault, ModeChat, ModeTask, ModeSingleTurn:
		return true
	}
	return false
}

// modeOf returns a's mode; agents other than LlmAgents have none.
func modeOf(a Agent) AgentMode {
	if la, ok := a.(*LlmAgent); ok {
		return la.cfg.Mode
	}
	return ModeDefault
}

// ModeError is google-adk's ValueError for an agent tree whose modes it
// refuses to run, such as a single_turn root.
type ModeError struct{ Message string }

func (e *ModeError) Error() string { return e.Message }

// ErrorCode names google-adk's exception.
func (e *ModeError) ErrorCode() string { return "ValueError" }

// checkRootMode refuses a root LlmAgent that is not chat or task, as
// google-adk's Runner.run_async does before storing anything.
func checkRootMode(root Agent) error {
	la, ok := root.(*LlmAgent)
	if !ok {
		return nil
	}
	switch la.cfg.Mode {
	case ModeDefault, ModeChat, ModeTask:
		return nil
	}
	return &ModeError{Message: fmt.Sprintf("LlmAgent as root agent must have mode='chat' or 'task', but got mode='%s'.", la.cfg.Mode)}
}

// delegationTools returns the tools an LlmAgent gets from modes, after its
// own (google-adk model_post_init): finish_task when it is a task agent,
// then one tool per task or single_turn sub-agent, in sub-agent order.
func delegationTools(cfg *LlmAgentConfig) ([]tool.Tool, error) {
	var out []tool.Tool
	if cfg.Mode == ModeTask {
		ft, err := newFinishTaskTool(cfg.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("finish_task: %w", err)
		}
		out = append(out, ft)
	}
	for _, sub := range cfg.SubAgents {
		switch modeOf(sub) {
		case ModeSingleTurn:
			out = append(out, &singleTurnAgentTool{agent: sub})
		case ModeTask:
			out = append(out, &taskAgentTool{agent: sub})
		}
	}
	return out, nil
}

// singleTurnAgentTool is google-adk's _SingleTurnAgentTool: calling it runs
// the sub-agent once, inline, and its final text is the result.
type singleTurnAgentTool struct{ agent Agent }

func (t *singleTurnAgentTool) Name() string        { return t.agent.Info().Name }
func (t *singleTurnAgentTool) Description() string { return t.agent.Info().Description }
func (t *singleTurnAgentTool) IsLongRunning() bool { return false }

func (t *singleTurnAgentTool) Declaration() *genai.FunctionDeclaration {
	return requestDeclaration(t.Name(), t.Description())
}

// requestDeclaration declares an agent called as a tool: one string, the
// request (google-adk's declaration for an agent without input schema).
func requestDeclaration(name, description string) *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        name,
		Description: description,
		ParametersJsonSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"request": map[string]any{"type": "string"}},
			"required":   []any{"request"},
		},
	}
}

// Run runs the sub-agent (task.go).
func (t *singleTurnAgentTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	tc, ok := ctx.(*toolContext)
	if !ok {
		return nil, fmt.Errorf("single_turn agent %q: called outside the engine's tool pipeline", t.Name())
	}
	return runSingleTurn(tc, t.agent, args)
}

// Description suffix of a task agent's tool (google-adk _TaskAgentTool).
const taskToolNote = "\nIMPORTANT: This tool delegates execution to a specialized agent. Do NOT call this tool in parallel with any other tools."

// taskAgentTool is google-adk's _TaskAgentTool: a marker the delegating
// agent's run (task.go) intercepts; the tool itself answers nothing, so no
// function response is built for it.
type taskAgentTool struct{ agent Agent }

func (t *taskAgentTool) Name() string { return t.agent.Info().Name }
func (t *taskAgentTool) Description() string {
	return strings.TrimSpace(t.agent.Info().Description + taskToolNote)
}
func (t *taskAgentTool) IsLongRunning() bool { return false }

// defersResponse: the response comes later, from the task agent.
func (t *taskAgentTool) defersResponse() bool { return true }

func (t *taskAgentTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        t.Name(),
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type":  "object",
			"title": "_DefaultTaskInput",
			"properties": map[string]any{
				"request": map[string]any{
					"description": "Detailed instructions or context for the task sub-agent.",
					"title":       "Request",
					"type":        "string",
				},
			},
			"required": []any{"request"},
		},
	}
}

func (t *taskAgentTool) Run(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil }

// responseDeferrer is implemented by tools whose empty result means "the
// response comes later" rather than an empty response.
type responseDeferrer interface{ defersResponse() bool }

// finish_task names and results (google-adk agents/llm/task).
const (
	finishTaskName          = "finish_task"
	finishTaskSuccessResult = "Task completed."
	finishTaskErrorResult   = "Task failed."
	finishTaskWrapperKey    = "result"
	finishTaskInstruction   = "Do NOT call `finish_task` prematurely. Use your available tools to\nfully complete every aspect of the delegated task first. If the\ntask is unclear, ask the user for clarification before proceeding.\nOnce the task is fully complete, call `finish_task` by itself with\nno accompanying text output."
)

// finishTaskTool is google-adk's FinishTaskTool: a task agent calls it
// with its result, which becomes the task's output.
type finishTaskTool struct {
	params map[string]any
	// wrapperKey is set when the output schema is not an object: the
	// result is passed under this key.
	wrapperKey  string
	description string
	// defaultSchema: no output schema, the result is {"result": string}.
	defaultSchema bool
}

func newFinishTaskTool(outputSchema map[string]any) (*finishTaskTool, error) {
	t := &finishTaskTool{description: "Signal that this agent has completed its delegated task. Call this when you have finished your delegated task."}
	if outputSchema == nil {
		t.defaultSchema = true
		t.params = map[string]any{
			"additionalProperties": false,
			"description":          "Default output schema when no custom output_schema is provided.\n\nUsed by FinishTaskTool to generate the function declaration when the\ntask agent does not define an explicit output_schema.",
			"properties":           map[string]any{"result": map[string]any{"title": "Result", "type": "string"}},
			"required":             []any{"result"},
			"title":                "_DefaultTaskOutput",
			"type":                 "object",
		}
		return t, nil
	}
	t.description += " Pass the required output data in the parameters."
	if typ, _ := outputSchema["type"].(string); typ == "object" || typ == "OBJECT" {
		t.params = outputSchema
		return t, nil
	}
	// A non-object schema is wrapped in an object; its $defs move to the
	// top so that $ref pointers stay valid.
	inner := maps.Clone(outputSchema)
	defs, hasDefs := inner["$defs"]
	delete(inner, "$defs")
	t.wrapperKey = finishTaskWrapperKey
	t.params = map[string]any{
		"type":       "object",
		"properties": map[string]any{finishTaskWrapperKey: inner},
		"required":   []any{finishTaskWrapperKey},
	}
	if hasDefs {
		t.params["$defs"] = defs
	}
	return t, nil
}

func (t *finishTaskTool) Name() string        { return finishTaskName }
func (t *finishTaskTool) Description() string { return t.description }
func (t *finishTaskTool) IsLongRunning() bool { return false }

func (t *finishTaskTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: finishTaskName, Description: t.description, ParametersJsonSchema: t.params}
}

// ProcessRequest tells the model when to call finish_task.
func (t *finishTaskTool) ProcessRequest(_ callbacks.ToolContext, req *model.Request) error {
	req.AppendInstructions(finishTaskInstruction)
	return nil
}

// Run validates the arguments as google-adk's FinishTaskTool does (the
// output schema's pydantic TypeAdapter, validate_python; the default
// schema forbids fields other than its result string) and confirms; a
// failure answers the model with pydantic's message so it retries. The
// delegating run reads the output from the call's arguments.
func (t *finishTaskTool) Run(_ callbacks.ToolContext, args map[string]any) (any, error) {
	if msg := t.validate(args); msg != "" {
		return map[string]any{"error": fmt.Sprintf("Invoking `%s()` failed due to validation errors:\n%s\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters with correct types.", finishTaskName, msg)}, nil
	}
	return finishTaskSuccessResult, nil
}

// validate returns pydantic's message for args, or "" when they validate.
func (t *finishTaskTool) validate(args map[string]any) string {
	if t.wrapperKey != "" {
		// A non-object schema: only the wrapper's presence is checked.
		if _, ok := args[t.wrapperKey]; !ok {
			return t.wrapperKey + ": Field required"
		}
		return ""
	}
	if _, _, err := validateArgs(t.params, nil, args); err != nil {
		var verr *OutputValidationError
		if errors.As(err, &verr) {
			return verr.Error()
		}
		return err.Error()
	}
	return ""
}

// output is the task output carried by a finish_task call's arguments:
// as validated against the output schema (pydantic's coercions applied,
// "7" for an integer is 7), as google-adk's node runtime validates a
// node's output.
func (t *finishTaskTool) output(args map[string]any) any {
	if t.wrapperKey != "" {
		if v, ok := args[t.wrapperKey]; ok {
			return v
		}
		return args
	}
	if out, _, err := validateArgs(t.params, nil, args); err == nil {
		return out
	}
	return args
}

// isTerminalFinishResponse reports whether ev answers finish_task with
// its success or failure result (not a validation error the model may
// retry after).
func isTerminalFinishResponse(ev interface {
	FunctionResponses() []*genai.FunctionResponse
}) bool {
	for _, fr := range ev.FunctionResponses() {
		if fr.Name == finishTaskName {
			r, _ := fr.Response["result"].(string)
			return r == finishTaskSuccessResult || r == finishTaskErrorResult
		}
	}
	return false
}

var (
	_ tool.Tool             = (*singleTurnAgentTool)(nil)
	_ tool.Tool             = (*taskAgentTool)(nil)
	_ tool.Tool             = (*finishTaskTool)(nil)
	_ tool.RequestProcessor = (*finishTaskTool)(nil)
	_ responseDeferrer      = (*taskAgentTool)(nil)
)
