// Package tool defines the Tool interface the engine calls when a model asks
// for a function, and Function, a tool built from a Go func and a JSON Schema.
package tool

import (
	"encoding/json"

	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
)

// Tool is a function the model can call. Run receives the call's arguments
// and returns the result: a map is sent as the function response, any other
// value v as {"result": v}. A long-running tool may return nil to answer
// later through a user message carrying the function response.
type Tool interface {
	callbacks.Tool
	// Declaration is what the model sees; nil for a tool that only changes
	// the request through RequestProcessor.
	Declaration() *genai.FunctionDeclaration
	// Run runs the tool. A result given as JSON text (json.RawMessage) is
	// decoded by the engine, which keeps the order of its dict keys for
	// the text google-adk formats from it (a Go map has no order); an
	// OrderedResult carries a decoded result with that order.
	Run(ctx callbacks.ToolContext, args map[string]any) (any, error)
}

// OrderedResult is a tool result decoded from JSON, with the order of its
// dict keys: KeyOrder is the JSON it was decoded from, or its skeleton
// (see model.Response.KeyOrder). The engine unwraps it: callbacks see
// Value.
type OrderedResult struct {
	Value    any
	KeyOrder json.RawMessage
}

// RequestProcessor is implemented by tools that change the model request
// beyond adding their declaration (google-adk's process_llm_request).
type RequestProcessor interface {
	ProcessRequest(ctx callbacks.ToolContext, req *model.Request) error
}

// ConfirmationRequirer is implemented by tools that may need the user's
// confirmation before a call runs (google-adk's require_confirmation). The
// engine then answers the call with a request for confirmation instead of
// running it, and runs it once the user confirmed.
type ConfirmationRequirer interface {
	RequiresConfirmation(ctx callbacks.ToolContext, args map[string]any) (bool, error)
}

// LongRunningNote is appended to a long-running tool's description.
const LongRunningNote = "\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status."

// Function is a Tool built from a func. Parameters is a JSON Schema object
// sent to the model as parametersJsonSchema; names in its "required" list
// are checked before Fn runs, as google-adk's FunctionTool does.
type Function struct {
	name        string
	description string
	params      map[string]any
	required    []string
	longRunning bool
	confirm     func(ctx callbacks.ToolContext, args map[string]any) (bool, error)
	fn          func(ctx callbacks.ToolContext, args map[string]any) (any, error)
}

// FunctionConfig configures NewFunction.
type FunctionConfig struct {
	Name        string
	Description string
	// Parameters is a JSON Schema of type object; nil means no parameters.
	Parameters map[string]any
	// LongRunning marks a tool whose answer may come in a later turn.
	LongRunning bool
	// RequireConfirmation makes every call wait for the user's
	// confirmation; RequireConfirmationFn decides per call instead (it
	// wins when both are set).
	RequireConfirmation   bool
	RequireConfirmationFn func(ctx callbacks.ToolContext, args map[string]any) (bool, error)
	Fn                    func(ctx callbacks.ToolContext, args map[string]any) (any, error)
}

// NewFunction returns a Function tool.
func NewFunction(cfg FunctionConfig) (*Function, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("tool.NewFunction: a name is required")
	}
	if cfg.Fn == nil {
		return nil, fmt.Errorf("tool.NewFunction %q: Fn is required", cfg.Name)
	}
	f := &Function{name: cfg.Name, description: cfg.Description, params: cfg.Parameters, longRunning: cfg.LongRunning, fn: cfg.Fn, confirm: cfg.RequireConfirmationFn}
	if f.confirm == nil && cfg.RequireConfirmation {
		f.confirm = func(callbacks.ToolContext, map[string]any) (bool, error) { return true, nil }
	}
	if cfg.LongRunning {
		if f.description == "" {
			f.description = strings.TrimLeft(LongRunningNote, "\n")
		} else {
			f.description += LongRunningNote
		}
	}
	switch req := cfg.Parameters["required"].(type) {
	case []string:
		f.required = req
	case []any:
		for _, r := range req {
			s, ok := r.(string)
			if !ok {
				return nil, fmt.Errorf("tool.NewFunction %q: required entries must be strings, got %T", cfg.Name, r)
			}
			f.required = append(f.required, s)
		}
	case nil:
	default:
		return nil, fmt.Errorf("tool.NewFunction %q: required must be a list, got %T", cfg.Name, req)
	}
	return f, nil
}

func (f *Function) Name() string        { return f.name }
func (f *Function) Description() string { return f.description }
func (f *Function) IsLongRunning() bool { return f.longRunning }

// Declaration implements Tool.
func (f *Function) Declaration() *genai.FunctionDeclaration {
	d := &genai.FunctionDeclaration{Name: f.name, Description: f.description}
	if f.params != nil {
		d.ParametersJsonSchema = f.params
	}
	return d
}

// Run checks mandatory arguments, then calls Fn. Missing arguments are
// reported to the model as an error result, not a Go error, so it can retry.
func (f *Function) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	var missing []string
	for _, r := range f.required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return MissingArgumentsResult(f.name, missing...), nil
	}
	return f.fn(ctx, args)
}

// MissingArgumentsResult is the result google-adk's FunctionTool gives
// the model instead of calling a function whose mandatory arguments the
// call left out (so that the model can retry).
func MissingArgumentsResult(name string, missing ...string) map[string]any {
	return map[string]any{"error": fmt.Sprintf("Invoking `%s()` failed as the following mandatory input parameters are not present:\n%s\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters.", name, strings.Join(missing, "\n"))}
}

// RequiresConfirmation implements ConfirmationRequirer.
func (f *Function) RequiresConfirmation(ctx callbacks.ToolContext, args map[string]any) (bool, error) {
	if f.confirm == nil {
		return false, nil
	}
	return f.confirm(ctx, args)
}

var (
	_ Tool                 = (*Function)(nil)
	_ ConfirmationRequirer = (*Function)(nil)
)

// Toolset is a group of tools resolved when a request is built (google-adk's
// BaseToolset), such as the tools an MCP server lists. Put one in an
// agent's tool list with FromSet: its tools take its place there, in the
// order Tools returns them. Tools is called for every model request of an
// invocation; a toolset that is costly to list caches per invocation
// (ctx.InvocationID()) itself, as google-adk's BaseToolset does. When
// Tools fails, the agent runs without the toolset's tools and the error is
// logged, as google-adk drops a toolset that fails to load. A listed tool
// named like a function the agent already has (a tool given directly, an
// earlier toolset's tool, transfer_to_agent and the engine's other
// function names) is left out with a warning: a toolset, often a remote
// server's choice, cannot take over a trusted tool's calls.
type Toolset interface {
	// Name names the toolset in logs and errors.
	Name() string
	Tools(ctx callbacks.ReadonlyContext) ([]Tool, error)
}

// FromSet returns the entry of an agent's tool list that stands for ts.
// The engine never declares or runs the entry itself; it asks ts for its
// tools (SetOf).
func FromSet(ts Toolset) Tool { return setEntry{ts} }

// SetOf returns the toolset t stands for, if t was made by FromSet.
func SetOf(t Tool) (Toolset, bool) {
	e, ok := t.(setEntry)
	return e.set, ok
}

// setEntry is a toolset's place in a tool list.
type setEntry struct{ set Toolset }

func (e setEntry) Name() string                            { return e.set.Name() }
func (e setEntry) Description() string                     { return "toolset " + e.set.Name() }
func (e setEntry) IsLongRunning() bool                     { return false }
func (e setEntry) Declaration() *genai.FunctionDeclaration { return nil }
func (e setEntry) Run(callbacks.ToolContext, map[string]any) (any, error) {
	return nil, fmt.Errorf("toolset %s is not a tool: the engine calls the tools it lists", e.set.Name())
}
