package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/tool"
)

const (
	transferToAgentName  = "transfer_to_agent"
	setModelResponseName = "set_model_response"
)

// transferTool is google-adk's TransferToAgentTool: its agent_name
// parameter is an enum of the agents the caller may transfer to.
type transferTool struct{ names []string }

func newTransferTool(names []string) *transferTool { return &transferTool{names: names} }

func (t *transferTool) Name() string { return transferToAgentName }
func (t *transferTool) Description() string {
	return "Transfer the query to another agent.\n\nUse this tool to hand off control to another agent that is more suitable to\nanswer the user's query according to the agent's description.\n\nArgs:\n  agent_name: the agent name to transfer to."
}
func (t *transferTool) IsLongRunning() bool { return false }

func (t *transferTool) Declaration() *genai.FunctionDeclaration {
	enum := make([]any, len(t.names))
	for i, n := range t.names {
		enum[i] = n
	}
	return &genai.FunctionDeclaration{
		Name:        transferToAgentName,
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type":  "object",
			"title": "transfer_to_agentParams",
			"properties": map[string]any{
				"agent_name": map[string]any{"title": "Agent Name", "type": "string", "enum": enum},
			},
			"required": []any{"agent_name"},
		},
	}
}

// Run records the transfer; the flow carries it out after the response
// event is yielded.
func (t *transferTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	return runTransferToAgent(ctx, args)
}

// runTransferToAgent is google-adk's transfer_to_agent function as its
// FunctionTool calls it: a call without agent_name is answered with the
// missing-argument error for the model; an empty name, or one that is not
// a string (null, a number: the function stores it unchecked), transfers
// nowhere (google-adk's scheduler only transfers to a non-empty string).
// google-adk's event then shows a number in actions.transfer_to_agent,
// which adkhost's string field cannot hold.
func runTransferToAgent(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	v, ok := args["agent_name"]
	if !ok {
		return tool.MissingArgumentsResult(transferToAgentName, "agent_name"), nil
	}
	if name, _ := v.(string); name != "" {
		ctx.Actions().TransferToAgent = name
	}
	return nil, nil
}

// setModelResponseTool is google-adk's SetModelResponseTool: with tools
// and an output schema together, the model gives its structured answer by
// calling it. The arguments are validated as the output schema's pydantic
// model validates a dict (validateArgs); the answer is the model's dump,
// and a failure answers the model with pydantic's message so it retries.
type setModelResponseTool struct {
	params map[string]any
	schema map[string]any
	// schemaOrder is the schema's key order as written (the answer's field
	// order).
	schemaOrder json.RawMessage
}

func newSetModelResponseTool(schema map[string]any, schemaOrder json.RawMessage) (*setModelResponseTool, error) {
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		return nil, fmt.Errorf("set_model_response needs an object schema with properties")
	}
	params := map[string]any{"type": "object", "title": "set_model_responseParams", "properties": props}
	if req, ok := schema["required"]; ok {
		params["required"] = req
	}
	if defs, ok := schema["$defs"]; ok {
		params["$defs"] = defs // the nested models the properties' $refs name
	}
	return &setModelResponseTool{params: params, schema: schema, schemaOrder: schemaOrder}, nil
}

func (t *setModelResponseTool) Name() string { return setModelResponseName }
func (t *setModelResponseTool) Description() string {
	return "Set your final response using the required output schema.\n\nUse this tool to provide your final structured answer instead\nof outputting text directly."
}
func (t *setModelResponseTool) IsLongRunning() bool { return false }

func (t *setModelResponseTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: setModelResponseName, Description: t.Description(), ParametersJsonSchema: t.params}
}

// Run validates the answer and records it.
func (t *setModelResponseTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	out, order, err := validateArgs(t.schema, t.schemaOrder, args)
	if err != nil {
		var verr *OutputValidationError
		if !errors.As(err, &verr) {
			return nil, err
		}
		return map[string]any{"error": "Validation Error found:\n" + verr.Error() + "\nRecall the set_model_response function correctly, fix the errors, and call it again with all required fields using the correct types."}, nil
	}
	ctx.Actions().SetModelResponse = out
	return tool.OrderedResult{Value: out, KeyOrder: order}, nil
}

var (
	_ tool.Tool = (*transferTool)(nil)
	_ tool.Tool = (*setModelResponseTool)(nil)
)

// GetUserChoiceTool is google-adk's get_user_choice: a long-running tool
// that offers options to the user. Its call answers nothing and skips
// summarization, so the invocation waits for the user's choice, which the
// client sends as the call's function response.
type GetUserChoiceTool struct{}

var _ tool.Tool = GetUserChoiceTool{}

func (GetUserChoiceTool) Name() string { return "get_user_choice" }
func (GetUserChoiceTool) Description() string {
	return "Provides the options to the user and asks them to choose one.\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status."
}
func (GetUserChoiceTool) IsLongRunning() bool { return true }

// Declaration is what google-adk builds from get_user_choice(options:
// list[str], tool_context).
func (t GetUserChoiceTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        t.Name(),
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type":  "object",
			"title": "get_user_choiceParams",
			"properties": map[string]any{
				"options": map[string]any{"type": "array", "title": "Options", "items": map[string]any{"type": "string"}},
			},
			"required": []any{"options"},
		},
	}
}

// Run skips summarization and answers nothing: the user answers.
func (GetUserChoiceTool) Run(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
	ctx.Actions().SkipSummarization = true
	return nil, nil
}

// TransferToAgentFunctionTool is google-adk's transfer_to_agent function
// listed as a tool (google.adk.tools.transfer_to_agent): unlike the
// transfer tool an agent with sub-agents gets by itself, its agent_name is
// free text and it takes a transfer_reason. google-adk declares both when
// an agent lists it; a call transfers the same way.
type TransferToAgentFunctionTool struct{}

var _ tool.Tool = TransferToAgentFunctionTool{}

func (TransferToAgentFunctionTool) Name() string { return transferToAgentName }
func (TransferToAgentFunctionTool) Description() string {
	return "Transfer the query to another agent.\n\nUse this tool to hand off control to another agent that is more suitable to\nanswer the user's query according to the agent's description.\n\nArgs:\n  agent_name: the agent name to transfer to.\n  transfer_reason: the reason for transferring to the target agent."
}
func (TransferToAgentFunctionTool) IsLongRunning() bool { return false }

func (t TransferToAgentFunctionTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        transferToAgentName,
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type":  "object",
			"title": "transfer_to_agentParams",
			"properties": map[string]any{
				"agent_name":      map[string]any{"title": "Agent Name", "type": "string"},
				"transfer_reason": map[string]any{"title": "Transfer Reason", "type": "string", "default": ""},
			},
			"required": []any{"agent_name"},
		},
	}
}

// Run records the transfer (and its reason) for the flow to carry out.
func (TransferToAgentFunctionTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	if r, err := runTransferToAgent(ctx, args); r != nil || err != nil {
		return r, err
	}
	if reason, _ := args["transfer_reason"].(string); reason != "" {
		ctx.Actions().TransferReason = reason
	}
	return nil, nil
}
