package host

import (
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/tool"
)

// Tool is a tool a module declares, as an engine tool: Run calls the
// module's tool_call hook. Its declaration is what a tool.Function with the
// same name, description and parameters declares: the parameters as
// parametersJsonSchema, the response schema, if any, as responseJsonSchema;
// a long-running tool's description gets tool.LongRunningNote, as
// google-adk's LongRunningFunctionTool appends it.
//
// The module checks its own arguments: unlike tool.Function, Tool does not
// check the schema's "required" list before the call.
type Tool struct {
	m           *Module
	name        string
	description string
	longRunning bool
	params      map[string]any
	response    map[string]any
}

var _ tool.Tool = (*Tool)(nil)

func newTool(m *Module, d abi.ToolDecl) (*Tool, error) {
	// A module's tool is a direct tool of the agent, so the engine would
	// let it replace its own transfer_to_agent (taking the model's
	// transfers) or answer under adk_request_confirmation's name, which the
	// engine reads back as the user's confirmation.
	if engine.IsEngineFunctionName(d.Name) {
		return nil, fmt.Errorf("tool %q: the name is one the engine gives meaning to (transfer_to_agent, set_model_response, finish_task, adk_request_confirmation, adk_request_credential, adk_request_input); rename the tool", d.Name)
	}
	t := &Tool{m: m, name: d.Name, description: d.Description, longRunning: d.LongRunning}
	var err error
	if t.params, err = schema(d.Parameters); err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", d.Name, err)
	}
	if t.response, err = schema(d.Response); err != nil {
		return nil, fmt.Errorf("tool %q: response: %w", d.Name, err)
	}
	if t.longRunning {
		if t.description == "" {
			t.description = strings.TrimLeft(tool.LongRunningNote, "\n")
		} else {
			t.description += tool.LongRunningNote
		}
	}
	return t, nil
}

func (t *Tool) Name() string        { return t.name }
func (t *Tool) Description() string { return t.description }
func (t *Tool) IsLongRunning() bool { return t.longRunning }

// Module returns the module that provides the tool.
func (t *Tool) Module() *Module { return t.m }

// Declaration implements tool.Tool. The schemas are shared between calls
// and must not be modified.
func (t *Tool) Declaration() *genai.FunctionDeclaration {
	d := &genai.FunctionDeclaration{Name: t.name, Description: t.description}
	if t.params != nil {
		d.ParametersJsonSchema = t.params
	}
	if t.response != nil {
		d.ResponseJsonSchema = t.response
	}
	return d
}

// Run calls the module's tool_call hook. The guest's host functions act on
// ctx as a Go tool's calls would: state writes and actions land on the
// function response event. The result is the guest's: an object is the
// function response, another value v becomes {"result": v}, and nil from a
// long-running tool means the answer comes later. An object or list comes
// as a tool.OrderedResult with the JSON it was decoded from, for the order
// of its keys. A failure is an *Error,
// which the engine hands to the on_tool_error callbacks.
//
// Cost: one pooled call; encoding args and decoding the result as JSON.
func (t *Tool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	h := toolHost(t.m, abi.HookToolCall, ctx)
	in := &abi.ToolCallInput{Context: h.info(), Tool: t.name, Args: args}
	if c := ctx.ToolConfirmation(); c != nil {
		in.Confirmation = &abi.ToolConfirmation{Hint: c.Hint, Confirmed: c.Confirmed, Payload: c.Payload}
	}
	out, err := invoke[abi.ToolCallOutput](ctx, t.m, abi.HookToolCall, t.name, in, h)
	if err != nil {
		return nil, err
	}
	if raw := out.ResultJSON(); len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		// The engine reads the key order from the JSON text, once: a
		// hint made here was read again there (keyorder.Of twice).
		return tool.OrderedResult{Value: out.Result, KeyOrder: raw}, nil
	}
	return out.Result, nil
}
