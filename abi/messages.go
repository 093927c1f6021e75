package abi

import (
	"bytes"
	"encoding/json"
)

// Message is a top-level ABI message: a hook's input or output, a describe
// message, or an Extism host call or reply. Every message embeds Header, so
// its JSON carries "abiVersion".
type Message interface {
	ABIHeader() *Header
}

// Header is embedded in every message. Encode sets ABIVersion to Version
// when it is zero; Decode refuses any other value than Version.
type Header struct {
	ABIVersion int `json:"abiVersion"`
}

// ABIHeader implements Message.
func (h *Header) ABIHeader() *Header { return h }

// A hook's output may also be empty (zero bytes): that is the same as an
// output message with every field absent, "nothing to change".

// Every output has an Error field. A non-empty Error is the hook failing, as
// a google-adk callback that raises: the engine treats it as the Go error a
// callback or tool returned.

// ToolCallInput asks a module to run one of its tools (HookToolCall).
type ToolCallInput struct {
	Header
	Context InvocationInfo `json:"context"`
	// Tool is the name of the tool, one of Describe.Tools.
	Tool string `json:"tool"`
	// Args are the arguments the model sent.
	Args map[string]any `json:"args"`
	// Confirmation is the user's answer to an earlier request_confirmation
	// of this call, if any.
	Confirmation *ToolConfirmation `json:"confirmation,omitempty"`
}

// ToolCallOutput is a tool's result. A JSON object is the function response
// as is; any other value v is sent as {"result": v}, as google-adk does. An
// absent or null Result from a long-running tool means the answer comes
// later; from any other tool it is sent as {"result": null}.
type ToolCallOutput struct {
	Header
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`

	// resultJSON is the JSON text Result was decoded from.
	resultJSON json.RawMessage
}

// ResultJSON returns the JSON text Result was decoded from (nil when the
// output was not decoded, or had no result): the host reads the order of
// the result's object keys from it, which a Go map does not keep.
func (o *ToolCallOutput) ResultJSON() json.RawMessage { return o.resultJSON }

// keepRaw keeps the result's JSON text from the output's, which Decode
// has checked.
func (o *ToolCallOutput) keepRaw(data []byte) {
	o.resultJSON = nil
	if o.Result == nil {
		return
	}
	var w struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(data, &w) == nil && len(w.Result) > 0 {
		o.resultJSON = bytes.Clone(w.Result)
	}
}

// AgentInput is the input of before_agent and after_agent.
type AgentInput struct {
	Header
	Context InvocationInfo `json:"context"`
}

// ContentOutput answers before_agent, after_agent and before_run. A non-nil
// Content from before_agent skips the agent and is its answer; from
// after_agent it is an extra event after the agent; from before_run it ends
// the run with this content as its only answer.
type ContentOutput struct {
	Header
	Content *Content `json:"content,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// BeforeModelInput is the input of before_model.
type BeforeModelInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Request *LlmRequest    `json:"request"`
}

// AfterModelInput is the input of after_model.
type AfterModelInput struct {
	Header
	Context  InvocationInfo `json:"context"`
	Response *LlmResponse   `json:"response"`
}

// ModelErrorInput is the input of on_model_error.
type ModelErrorInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Request *LlmRequest    `json:"request"`
	// Error is the model error's message.
	Error string `json:"error"`
}

// ModelOutput answers before_model, after_model and on_model_error. A
// non-nil Response from before_model skips the model call; from after_model
// it replaces the model's response; from on_model_error it is used instead
// of failing. Request, from before_model only, replaces the request the model
// receives (google-adk's callbacks edit llm_request in place).
type ModelOutput struct {
	Header
	Response *LlmResponse `json:"response,omitempty"`
	Request  *LlmRequest  `json:"request,omitempty"`
	Error    string       `json:"error,omitempty"`
}

// ToolInfo is what tool hooks learn of the tool being called.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	LongRunning bool   `json:"longRunning,omitempty"`
}

// BeforeToolInput is the input of before_tool.
type BeforeToolInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Tool    ToolInfo       `json:"tool"`
	Args    map[string]any `json:"args"`
	// Confirmation is the user's answer to the call's confirmation
	// request, when the call runs again after it (google-adk's
	// tool_context.tool_confirmation). The arguments of a confirmed call
	// are the ones the user confirmed: the output may not change them.
	Confirmation *ToolConfirmation `json:"confirmation,omitempty"`
}

// BeforeToolOutput answers before_tool. A non-nil Result skips the tool and
// is its result; a non-nil Args replaces the arguments the tool receives
// (google-adk's callbacks edit args in place).
type BeforeToolOutput struct {
	Header
	Result map[string]any `json:"result,omitzero"`
	Args   map[string]any `json:"args,omitzero"`
	Error  string         `json:"error,omitempty"`
}

// AfterToolInput is the input of after_tool.
type AfterToolInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Tool    ToolInfo       `json:"tool"`
	Args    map[string]any `json:"args"`
	Result  map[string]any `json:"result"`
}

// ToolErrorInput is the input of on_tool_error.
type ToolErrorInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Tool    ToolInfo       `json:"tool"`
	Args    map[string]any `json:"args"`
	// Error is the tool error's message.
	Error string `json:"error"`
}

// ToolOutput answers after_tool and on_tool_error. A non-nil Result
// replaces the tool's result (after_tool) or is used as the result instead
// of failing (on_tool_error).
type ToolOutput struct {
	Header
	Result map[string]any `json:"result,omitzero"`
	Error  string         `json:"error,omitempty"`
}

// UserMessageInput is the input of on_user_message.
type UserMessageInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Message *Content       `json:"message"`
}

// UserMessageOutput answers on_user_message: a non-nil Message replaces the
// user's message before it is stored.
type UserMessageOutput struct {
	Header
	Message *Content `json:"message,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// RunInput is the input of before_run and after_run.
type RunInput struct {
	Header
	Context InvocationInfo `json:"context"`
}

// EventInput is the input of on_event.
type EventInput struct {
	Header
	Context InvocationInfo `json:"context"`
	Event   *Event         `json:"event"`
}

// EventOutput answers on_event: a non-nil Event replaces the event before it
// is yielded (it is already stored).
type EventOutput struct {
	Header
	Event *Event `json:"event,omitempty"`
	Error string `json:"error,omitempty"`
}

// AfterRunOutput answers after_run, which can only fail.
type AfterRunOutput struct {
	Header
	Error string `json:"error,omitempty"`
}

// AgentErrorInput is the input of on_agent_error: an agent's run failed.
// Context is the failed agent's invocation context.
type AgentErrorInput struct {
	Header
	Context InvocationInfo `json:"context"`
	// Error is the agent error's message.
	Error string `json:"error"`
}

// RunErrorInput is the input of on_run_error: the run failed.
type RunErrorInput struct {
	Header
	Context InvocationInfo `json:"context"`
	// Error is the run error's message.
	Error string `json:"error"`
}

// NotifyOutput answers the notification-only hooks, on_agent_error and
// on_run_error: it has no value, and a non-empty Error is only logged by the
// host; it never changes the run (the error propagates as it would anyway).
type NotifyOutput struct {
	Header
	Error string `json:"error,omitempty"`
}

// DescribeInput is the input of adkhost_describe.
type DescribeInput struct {
	Header
}

// Describe is a module's declaration of what it is: the tools it provides,
// the hooks it implements and the capabilities it asks for. The host reads
// it once, when it loads the module, and calls only the hooks it lists.
type Describe struct {
	Header
	// Name names the module, e.g. "weather"; same syntax as a tool name.
	Name string `json:"name"`
	// Version is the module's own version, for people; the host ignores it.
	Version string `json:"version,omitempty"`
	// Tools are the tools the module provides through tool_call.
	Tools []ToolDecl `json:"tools,omitempty"`
	// Hooks are the hooks the module implements; each must be exported.
	// "tool_call" is listed exactly when Tools is not empty.
	Hooks []Hook `json:"hooks"`
	// Capabilities are what the module asks for; see Capability.
	Capabilities []Capability `json:"capabilities,omitempty"`
}

// ToolDecl declares a tool: what the model sees of it.
type ToolDecl struct {
	// Name is the function name the model calls: a letter or underscore,
	// then letters, digits, underscores, dots or dashes; 64 bytes at most.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the arguments, an object schema
	// ({"type": "object", ...}); absent for a tool without parameters.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Response is the JSON Schema of the result, optional.
	Response json.RawMessage `json:"response,omitempty"`
	// LongRunning marks a tool whose answer may come in a later turn.
	LongRunning bool `json:"longRunning,omitempty"`
}

// HostCall is a host-function call on the Extism transport: Op is one of
// the Import* names, and the other fields are its arguments.
type HostCall struct {
	Header
	Op string `json:"op"`
	// Key: state_get, state_set, state_delete, config_get.
	Key string `json:"key,omitempty"`
	// Name: transfer_to_agent (the agent), artifact_load, artifact_save.
	Name string `json:"name,omitempty"`
	// Value: state_set (the value), request_confirmation (the payload),
	// artifact_save (a Part), http_request (an HTTPRequest).
	Value json.RawMessage `json:"value,omitempty"`
	// Hint: request_confirmation.
	Hint string `json:"hint,omitempty"`
	// Version: artifact_load; absent for the newest.
	Version *int `json:"version,omitempty"`
	// Level and Message: log. Level is a log/slog level: -4 debug, 0 info,
	// 4 warn, 8 error.
	Level   int    `json:"level,omitempty"`
	Message string `json:"message,omitempty"`
	// Query: memory_search (added within v1).
	Query string `json:"query,omitempty"`
}

// HostReply answers a HostCall. Value is the call's result when Status is
// StatusOK: the same bytes the native transport returns (a JSON value), or
// for artifact_save the version number and for config_get the value as a
// JSON string.
type HostReply struct {
	Header
	Status Status          `json:"status"`
	Value  json.RawMessage `json:"value,omitempty"`
}

// HTTPRequest is the argument of http_request.
type HTTPRequest struct {
	Method string `json:"method"`
	// URL is absolute, http or https.
	URL string `json:"url"`
	// Headers hold one value per name; join repeated values with ", ".
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// HTTPResponse is the result of http_request.
type HTTPResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// SearchMemoryResponse is the result of memory_search: google-adk's
// SearchMemoryResponse, in its own wire format (snake_case keys, as
// model_dump writes them), the best matches first.
type SearchMemoryResponse struct {
	Memories []MemoryEntry `json:"memories"`
}

// MemoryEntry is one memory (google-adk MemoryEntry). Content is in the
// ABI's Content format; CustomMetadata is free-form; ID, Author and
// Timestamp (text, as google-adk's datetime.isoformat writes it) are left
// out when empty.
type MemoryEntry struct {
	Content        *Content       `json:"content"`
	CustomMetadata map[string]any `json:"custom_metadata"`
	ID             string         `json:"id,omitempty"`
	Author         string         `json:"author,omitempty"`
	Timestamp      string         `json:"timestamp,omitempty"`
}
