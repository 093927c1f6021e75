package adkhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/adkhost/adkhost/abi"
)

// Handle runs hook h on an encoded input message, as the module's
// adkhost_<hook> export does, and returns the encoded output message: nil
// for "nothing to change", or a message whose "error" is set if the hook
// failed (including a bad input, an unregistered hook and a recovered
// panic). The exports call it; a test can call it too, and so can a glue
// layer for another transport.
//
// Inputs are decoded leniently (unknown fields are ignored, as ABI.md §6
// asks of guests); outputs are encoded with abi.Encode.
func Handle(h abi.Hook, input []byte) []byte { return std.handle(nil, h, input) }

// handle is Handle, writing the output into buf's array when it can (the
// exports reuse one buffer for every output).
func (r *registry) handle(buf []byte, h abi.Hook, input []byte) []byte {
	var out abi.Message
	var err error
	if h == abi.HookToolCall && r.implements(h) {
		var b []byte
		if b, err = r.toolCall(buf[:0], input); err == nil {
			if len(b) == 0 {
				return nil
			}
			return b
		}
	} else {
		out, err = r.run(h, input)
	}
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "failed" // an empty "error" would read as success
		}
		return (&errorOutput{Error: msg}).appendJSON(buf[:0])
	}
	b, err := abi.Encode(out)
	if err != nil {
		return (&errorOutput{Error: fmt.Sprintf("adkhost: encoding the output of %s: %v", h, err)}).appendJSON(buf[:0])
	}
	if bytes.Equal(b, emptyOutput) {
		return nil
	}
	return b
}

// toolCallPrefix starts a tool_call output with a result.
var toolCallPrefix = `{"abiVersion":` + strconv.Itoa(abi.Version) + `,"result":`

// toolCall runs a tool_call and appends its output to dst, nothing for an
// empty output. It writes the envelope around the encoded result itself:
// abi.Encode would run encoding/json over the whole message again.
func (r *registry) toolCall(dst, input []byte) (_ []byte, err error) {
	defer recoverPanic(abi.HookToolCall, &err)
	var in toolCallInput
	strs := inputStrings{data: input}
	if err := decodeToolCall(&strs, &in); err != nil {
		return nil, err
	}
	t, ok := r.tool(in.Tool)
	if !ok {
		return nil, fmt.Errorf("adkhost: module %s has no tool %q", r.name, in.Tool)
	}
	ctx := ToolContext{
		CallbackContext: CallbackContext{Invocation: in.Context, Hook: abi.HookToolCall},
		Tool:            abi.ToolInfo{Name: t.decl.Name, Description: t.decl.Description, LongRunning: t.decl.LongRunning},
		Confirmation:    in.Confirmation,
	}
	start := len(dst)
	dst = append(dst, toolCallPrefix...)
	b, err := t.run(ctx, strs, in.Args, dst)
	if err != nil {
		return nil, err
	}
	if len(b) == len(dst) {
		return b[:start], nil // a nil result: every field absent
	}
	return append(b, '}'), nil
}

// recoverPanic, deferred, turns a panic of hook h into its error. It runs
// after every call: the work of a panic is apart, in panicked.
func recoverPanic(h abi.Hook, err *error) {
	if p := recover(); p != nil {
		*err = panicked(h, p)
	}
}

// panicked logs a panic of hook h with its stack and returns its error.
func panicked(h abi.Hook, p any) error {
	Log(LevelError, fmt.Sprintf("adkhost: %s panicked: %v\n%s", h, p, debug.Stack()))
	return fmt.Errorf("panic: %v", p)
}

// emptyOutput is an output with every field absent, sent as zero bytes.
var emptyOutput = []byte(`{"abiVersion":1}`)

// errorOutput is any hook's output with only "error" set: every output
// message of ABI v1 has that field.
type errorOutput struct {
	abi.Header
	Error string `json:"error,omitempty"`
}

// appendJSON writes the message as abi.Encode does, without encoding/json
// (see fastcodec.go): a failing hook should not cost more than a working
// one.
func (o *errorOutput) appendJSON(b []byte) []byte {
	b = append(b, `{"abiVersion":`...)
	b = strconv.AppendInt(b, int64(abi.Version), 10)
	if o.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, o.Error)
	}
	return append(b, '}')
}

// toolOutput is abi.ToolOutput (after_tool, on_tool_error) with the result
// as raw JSON, so that a non-nil empty map is sent as {} instead of being
// dropped by omitempty.
type toolOutput struct {
	abi.Header
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// beforeToolOutput is abi.BeforeToolOutput with raw JSON fields, for the
// same reason.
type beforeToolOutput struct {
	abi.Header
	Result json.RawMessage `json:"result,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// toolCallInput is abi.ToolCallInput with the arguments kept as raw JSON,
// decoded once into the tool's argument type (no float64 detour for
// integers).
type toolCallInput struct {
	abi.Header
	Context      abi.InvocationInfo    `json:"context"`
	Tool         string                `json:"tool"`
	Args         json.RawMessage       `json:"args"`
	Confirmation *abi.ToolConfirmation `json:"confirmation,omitempty"`
}

// decode decodes an input leniently and checks its abiVersion.
func decode(input []byte, m abi.Message) error {
	if len(input) == 0 {
		return errors.New("adkhost: empty input")
	}
	if err := json.Unmarshal(input, m); err != nil {
		return fmt.Errorf("adkhost: bad input: %w", err)
	}
	if v := m.ABIHeader().ABIVersion; v != abi.Version {
		return fmt.Errorf("adkhost: input has abiVersion %d; this SDK speaks %d", v, abi.Version)
	}
	return nil
}

func (r *registry) run(h abi.Hook, input []byte) (out abi.Message, err error) {
	defer recoverPanic(h, &err)
	if !r.implements(h) {
		if h.Known() {
			return nil, fmt.Errorf("adkhost: hook %s is not registered in this module", h)
		}
		return nil, fmt.Errorf("adkhost: unknown hook %q", h)
	}
	cb := &r.cb
	switch h {
	case abi.HookBeforeAgent, abi.HookAfterAgent, abi.HookBeforeRun:
		var in abi.AgentInput // RunInput has the same fields
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		fns := cb.beforeAgent
		switch h {
		case abi.HookAfterAgent:
			fns = cb.afterAgent
		case abi.HookBeforeRun:
			fns = cb.beforeRun
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		c, err := firstPtr(len(fns), func(i int) (*abi.Content, error) { return fns[i](ctx) })
		return &abi.ContentOutput{Content: c}, err

	case abi.HookBeforeModel:
		var in abi.BeforeModelInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Request == nil {
			in.Request = &abi.LlmRequest{}
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		before := marshal(in.Request)
		resp, err := firstPtr(len(cb.beforeModel), func(i int) (*abi.LlmResponse, error) { return cb.beforeModel[i](ctx, in.Request) })
		if err != nil {
			return nil, err
		}
		o := &abi.ModelOutput{Response: resp}
		if !bytes.Equal(before, marshal(in.Request)) {
			o.Request = in.Request
		}
		return o, nil

	case abi.HookAfterModel:
		var in abi.AfterModelInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Response == nil {
			in.Response = &abi.LlmResponse{}
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		before := marshal(in.Response)
		resp, err := firstPtr(len(cb.afterModel), func(i int) (*abi.LlmResponse, error) { return cb.afterModel[i](ctx, in.Response) })
		if err != nil {
			return nil, err
		}
		if resp == nil && !bytes.Equal(before, marshal(in.Response)) {
			resp = in.Response
		}
		return &abi.ModelOutput{Response: resp}, nil

	case abi.HookOnModelError:
		var in abi.ModelErrorInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		modelErr := errors.New(in.Error)
		resp, err := firstPtr(len(cb.onModelError), func(i int) (*abi.LlmResponse, error) { return cb.onModelError[i](ctx, in.Request, modelErr) })
		return &abi.ModelOutput{Response: resp}, err

	case abi.HookBeforeTool:
		var in abi.BeforeToolInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Args == nil {
			in.Args = map[string]any{}
		}
		ctx := toolContext(in.Context, h, in.Tool)
		ctx.Confirmation = in.Confirmation
		before := marshal(in.Args)
		res, err := firstMap(len(cb.beforeTool), func(i int) (map[string]any, error) { return cb.beforeTool[i](ctx, in.Args) })
		if err != nil {
			return nil, err
		}
		o := &beforeToolOutput{Result: rawMap(res)}
		if after := marshal(in.Args); !bytes.Equal(before, after) {
			o.Args = after
		}
		return o, nil

	case abi.HookAfterTool:
		var in abi.AfterToolInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Result == nil {
			in.Result = map[string]any{}
		}
		ctx := toolContext(in.Context, h, in.Tool)
		before := marshal(in.Result)
		res, err := firstMap(len(cb.afterTool), func(i int) (map[string]any, error) { return cb.afterTool[i](ctx, in.Args, in.Result) })
		if err != nil {
			return nil, err
		}
		o := &toolOutput{Result: rawMap(res)}
		if after := marshal(in.Result); res == nil && !bytes.Equal(before, after) {
			o.Result = after
		}
		return o, nil

	case abi.HookOnToolError:
		var in abi.ToolErrorInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		ctx := toolContext(in.Context, h, in.Tool)
		toolErr := errors.New(in.Error)
		res, err := firstMap(len(cb.onToolError), func(i int) (map[string]any, error) { return cb.onToolError[i](ctx, in.Args, toolErr) })
		if err != nil {
			return nil, err
		}
		return &toolOutput{Result: rawMap(res)}, nil

	case abi.HookOnUserMessage:
		var in abi.UserMessageInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Message == nil {
			in.Message = &abi.Content{}
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		before := marshal(in.Message)
		msg, err := firstPtr(len(cb.onUserMessage), func(i int) (*abi.Content, error) { return cb.onUserMessage[i](ctx, in.Message) })
		if err != nil {
			return nil, err
		}
		if msg == nil && !bytes.Equal(before, marshal(in.Message)) {
			msg = in.Message
		}
		return &abi.UserMessageOutput{Message: msg}, nil

	case abi.HookOnEvent:
		var in abi.EventInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		if in.Event == nil {
			in.Event = &abi.Event{}
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		before := marshal(in.Event)
		ev, err := firstPtr(len(cb.onEvent), func(i int) (*abi.Event, error) { return cb.onEvent[i](ctx, in.Event) })
		if err != nil {
			return nil, err
		}
		if ev == nil && !bytes.Equal(before, marshal(in.Event)) {
			ev = in.Event
		}
		return &abi.EventOutput{Event: ev}, nil

	case abi.HookAfterRun:
		var in abi.RunInput
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		for _, fn := range cb.afterRun {
			if err := fn(ctx); err != nil {
				return nil, err
			}
		}
		return &abi.AfterRunOutput{}, nil

	case abi.HookOnAgentError, abi.HookOnRunError:
		var in abi.AgentErrorInput // RunErrorInput has the same fields
		if err := decode(input, &in); err != nil {
			return nil, err
		}
		fns := cb.onAgentError
		if h == abi.HookOnRunError {
			fns = cb.onRunError
		}
		ctx := CallbackContext{Invocation: in.Context, Hook: h}
		cause := errors.New(in.Error)
		for _, fn := range fns {
			fn(ctx, cause)
		}
		return &abi.NotifyOutput{}, nil
	}
	return nil, fmt.Errorf("adkhost: hook %s is not supported by this SDK", h)
}

func toolContext(info abi.InvocationInfo, h abi.Hook, tool abi.ToolInfo) ToolContext {
	return ToolContext{CallbackContext: CallbackContext{Invocation: info, Hook: h}, Tool: tool}
}

// firstPtr runs a chain: the first non-nil result or error ends it.
func firstPtr[T any](n int, call func(i int) (*T, error)) (*T, error) {
	for i := range n {
		if v, err := call(i); err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// firstMap is firstPtr for maps.
func firstMap(n int, call func(i int) (map[string]any, error)) (map[string]any, error) {
	for i := range n {
		if v, err := call(i); err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}

// marshal encodes v to compare it before and after the callbacks ran.
// encoding/json sorts map keys, so equal values encode equally.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("adkhost: encoding %T: %v", v, err))
	}
	return b
}

// rawMap encodes a non-nil map, empty or not; nil stays absent.
func rawMap(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	return marshal(m)
}
