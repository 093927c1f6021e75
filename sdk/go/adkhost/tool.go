package adkhost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

// Tool registers a tool the model can call. Call it from an init function.
//
// The JSON arguments the model sends are decoded into a new A (a struct, a
// pointer to one, a map with string keys, or any) as encoding/json does,
// ignoring unknown fields. (A struct of strings, numbers and booleans, and
// a result built from structs, pointers, slices and those, take a faster
// path with the same outcome; see fastcodec.go.) The parameters schema the model sees is derived
// from A (see SchemaFor for the rules); a required property that is absent
// or null fails the call before fn runs. A struct without fields declares
// no parameters.
//
// fn's result is encoded with encoding/json: a JSON object is the function
// response as is; any other value v reaches the model as {"result": v}.
// A nil result (a nil pointer, map or interface) from a LongRunning tool
// means "the answer comes later"; from another tool it is {"result": null}.
// An error fails the call: the engine runs the on_tool_error hooks, then
// hands the message to the model. A panic is recovered and reported the
// same way.
//
//	type WeatherArgs struct {
//		City string `json:"city" jsonschema:"the city, e.g. Paris"`
//		Days int    `json:"days,omitempty" jsonschema:"forecast days, 1 if absent"`
//	}
//
//	func init() {
//		adkhost.Tool("get_weather", "Returns the weather of a city.",
//			func(ctx adkhost.ToolContext, args WeatherArgs) (Weather, error) { ... })
//	}
//
// Tool panics if name is not a valid tool name (a letter or underscore,
// then letters, digits, '_', '.' or '-'; 64 bytes at most), is already
// registered, or A has no schema.
func Tool[A, R any](name, description string, fn func(ctx ToolContext, args A) (R, error), opts ...ToolOption) {
	t, err := newTool(name, description, fn, opts)
	if err != nil {
		panic(err)
	}
	std.addTool(t)
}

// ToolOption configures a tool.
type ToolOption func(*toolConfig)

type toolConfig struct {
	longRunning bool
	params      json.RawMessage
	response    json.RawMessage
}

// LongRunning marks a tool whose answer may come in a later turn
// (google-adk's LongRunningFunctionTool): it may return nil, or a status
// such as {"status": "pending"}, and the final answer arrives later as a
// function response from the client.
func LongRunning() ToolOption { return func(c *toolConfig) { c.longRunning = true } }

// WithParameters replaces the derived parameters schema with schema, a
// JSON Schema object ({"type": "object", ...}). Its top-level "required"
// list is still checked before the tool runs.
func WithParameters(schema json.RawMessage) ToolOption {
	return func(c *toolConfig) { c.params = schema }
}

// WithResponse declares the JSON Schema of the tool's result (a JSON object
// schema), which some models use. None is declared by default.
func WithResponse(schema json.RawMessage) ToolOption {
	return func(c *toolConfig) { c.response = schema }
}

type toolEntry struct {
	decl abi.ToolDecl
	// params is the derived schema of the parameters, which describe
	// encodes into decl.Parameters; nil with WithParameters or none.
	params   *schema
	required []string
	// run decodes the arguments, calls the tool and appends its encoded
	// result to dst; nothing for a nil result.
	run func(ctx ToolContext, strs inputStrings, args json.RawMessage, dst []byte) ([]byte, error)
}

func newTool[A, R any](name, description string, fn func(ToolContext, A) (R, error), opts []ToolOption) (*toolEntry, error) {
	if !abi.ValidName(name) {
		return nil, fmt.Errorf("adkhost.Tool: %q is not a valid tool name (a letter or underscore, then letters, digits, '_', '.', '-'; 64 bytes at most)", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("adkhost.Tool %q: nil function", name)
	}
	var cfg toolConfig
	for _, o := range opts {
		o(&cfg)
	}
	derived, required, err := argsSchema(reflect.TypeFor[A]())
	if err != nil {
		return nil, fmt.Errorf("adkhost.Tool %q: %w", name, err)
	}
	var params json.RawMessage
	if cfg.params != nil {
		derived = nil
		var s struct {
			Type     any      `json:"type"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(cfg.params, &s); err != nil || (s.Type != nil && s.Type != "object") {
			return nil, fmt.Errorf("adkhost.Tool %q: WithParameters needs a JSON Schema object of type \"object\"", name)
		}
		params, required = cfg.params, s.Required
	}
	if cfg.response != nil {
		var m map[string]any
		if json.Unmarshal(cfg.response, &m) != nil || m == nil {
			return nil, fmt.Errorf("adkhost.Tool %q: WithResponse needs a JSON Schema object", name)
		}
	}
	t := &toolEntry{
		decl: abi.ToolDecl{
			Name:        name,
			Description: description,
			Parameters:  params,
			Response:    cfg.response,
			LongRunning: cfg.longRunning,
		},
		params:   derived,
		required: required,
	}
	// Plans for the arguments and the result (fastcodec.go); nil for
	// types they do not cover, which encoding/json handles alone.
	dec := newArgsDecoder(reflect.TypeFor[A]())
	enc := newEncoder(reflect.TypeFor[R]())
	// With the plan, the presence of the required arguments is read off
	// the decode itself instead of a scan of its own (reqFields holds
	// their fields); nil when a required name is not a field of the plan.
	reqFields := dec.fieldsOf(required)
	// res holds the result while enc writes it: in a guest one array
	// reused, since a pointer handed to a plan would move each result to
	// the heap. No user code runs meanwhile (plans cover no marshalers).
	res := new(R)
	t.run = func(ctx ToolContext, strs inputStrings, raw json.RawMessage, dst []byte) ([]byte, error) {
		var args A
		if len(raw) > 0 && (space(raw[0]) || space(raw[len(raw)-1])) {
			raw = bytes.TrimSpace(raw)
		}
		decoded := false
		if reqFields != nil && len(raw) > 0 && !bytes.Equal(raw, null) {
			var set uint64
			if set, decoded = dec.decode(&strs, raw, unsafe.Pointer(&args)); decoded {
				for i, f := range reqFields {
					if set&(1<<f) == 0 {
						return nil, fmt.Errorf("missing required argument %q", t.required[i])
					}
				}
			} else {
				args = *new(A) // undo what dec wrote before it gave up
			}
		}
		if !decoded {
			if err := checkRequired(raw, t.required); err != nil {
				return nil, err
			}
			if len(raw) > 0 && !bytes.Equal(raw, null) {
				if err := decodeArgs(dec, &strs, raw, &args); err != nil {
					return nil, fmt.Errorf("invalid arguments: %w", err)
				}
			}
		}
		r, err := fn(ctx, args)
		if err != nil {
			return nil, err
		}
		slot := res
		if !inWasm {
			slot = new(R) // Handle may run on several goroutines
		}
		*slot = r
		n := len(dst)
		b, err := appendResult(enc, dst, slot)
		*slot = *new(R) // keep nothing of the result alive
		if err != nil {
			return nil, fmt.Errorf("encoding the result: %w", err)
		}
		if bytes.Equal(b[n:], null) {
			return b[:n], nil
		}
		return b, nil
	}
	return t, nil
}

var null = []byte("null")

// checkRequired fails unless every required property is present and not
// null in the arguments object.
func checkRequired(raw json.RawMessage, required []string) error {
	if len(required) == 0 {
		return nil
	}
	if name, ok := missingRequired(raw, required); ok {
		if name != "" {
			return fmt.Errorf("missing required argument %q", name)
		}
		return nil
	}
	var m map[string]json.RawMessage
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("invalid arguments: %w", err)
		}
	}
	for _, name := range required {
		if v, ok := m[name]; !ok || bytes.Equal(bytes.TrimSpace(v), null) {
			return fmt.Errorf("missing required argument %q", name)
		}
	}
	return nil
}

// decodeArgs decodes raw into the zero *args as json.Unmarshal does, with
// dec when it can (nil: never). Strings are taken from strs when raw lies
// within its data.
func decodeArgs[A any](dec *argsDecoder, strs *inputStrings, raw []byte, args *A) error {
	if dec != nil {
		if _, ok := dec.decode(strs, raw, unsafe.Pointer(args)); ok {
			return nil
		}
	}
	// A separate variable, so that the caller's stays on its stack: only
	// this path hands one to encoding/json.
	v := new(A)
	err := json.Unmarshal(raw, v)
	*args = *v
	return err
}

// appendResult appends *res to dst as json.Marshal encodes it, with enc
// when it can (nil: never).
func appendResult[R any](enc encodeFunc, dst []byte, res *R) ([]byte, error) {
	if enc != nil {
		if b, ok := enc(dst, unsafe.Pointer(res)); ok {
			return b, nil
		}
	}
	b, err := json.Marshal(*res)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}
