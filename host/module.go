// Package host binds sandboxed WebAssembly modules to the engine's tools,
// callbacks and plugins, and serves their host functions from the live
// invocation.
//
// Load a module once per app (owner); its Tools go into an agent's tool
// list, its Callbacks into an agent's callback lists, its Plugin into a
// runner's plugins. A call converts the engine's values to the ABI's
// messages (convert.go), runs the hook on a pooled instance (package
// sandbox), and converts the answer back with the ABI's semantics: an empty
// output is no answer (nil), a replacement value is non-nil, an "error" is
// the hook failing.
//
// The engine knows nothing of this package: host imports engine, never the
// other way round.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/sandbox"
)

// ModuleConfig configures Load.
type ModuleConfig struct {
	// Owner is the app the module's instances serve; required. Instances
	// are never shared between owners (sandbox.PoolConfig.Owner).
	Owner string
	// Limits bound the module's memory, call time, message sizes and
	// instances; zero fields take the sandbox's defaults.
	Limits sandbox.Limits
	// Grants are what the module may use (sandbox.Grants): State, Actions
	// and Artifacts let its host functions reach the invocation, Config
	// holds the values config_get returns. A module asking for more than
	// is granted is refused by Load.
	Grants sandbox.Grants
	// WriteUserState and WriteAppState let a module granted State write
	// (set or delete) "user:" keys, shared by every session of the user,
	// and "app:" keys, shared by every user of the app. Without them such
	// writes answer DENIED. Session keys and "temp:" keys are writable with
	// Grants.State alone; reads are never limited by scope. WriteUserState
	// also lets a module granted Artifacts save "user:" artifacts, shared
	// by every session of the user as "user:" state is.
	WriteUserState, WriteAppState bool
	// Logger receives the guest's log lines with the attributes "module",
	// "hook" and "invocation". nil discards them.
	Logger *slog.Logger
}

// Module is a loaded module bound to one owner's instance pool. It is
// immutable and safe for concurrent use: each call takes an instance of its
// own from the pool, and parallel calls run on distinct instances.
type Module struct {
	name   string
	desc   *abi.Describe
	pool   *sandbox.Pool
	cfg    ModuleConfig
	logger *slog.Logger
	hooks  map[abi.Hook]bool
	tools  []tool.Tool
}

// Load compiles (or finds already compiled) a module, validates it and
// makes its pool for cfg.Owner (sandbox.Runtime.Load and Runtime.Pool, whose
// errors it returns wrapped: sandbox.ErrNotGranted, ErrDescribe, ...).
//
// Cost: a compile the first time the runtime sees the bytes (seconds for a
// Go guest; a CacheDir makes later processes fast), then one describe call.
// Instances are created on the first calls, not here.
func Load(ctx context.Context, rt *sandbox.Runtime, wasm []byte, cfg ModuleConfig) (*Module, error) {
	if cfg.Owner == "" {
		return nil, errors.New("host.Load: ModuleConfig.Owner is required")
	}
	sm, err := rt.Load(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("host.Load: %w", err)
	}
	desc := sm.Describe()
	m := &Module{name: desc.Name, desc: desc, cfg: cfg, logger: cfg.Logger, hooks: map[abi.Hook]bool{}}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	for _, h := range desc.Hooks {
		m.hooks[h] = true
	}
	for _, d := range desc.Tools {
		t, err := newTool(m, d)
		if err != nil {
			return nil, fmt.Errorf("host.Load: module %q: %w", desc.Name, err)
		}
		m.tools = append(m.tools, t)
	}
	if m.pool, err = rt.Pool(ctx, sm, sandbox.PoolConfig{Owner: cfg.Owner, Limits: cfg.Limits, Grants: cfg.Grants}); err != nil {
		return nil, fmt.Errorf("host.Load: module %q: %w", desc.Name, err)
	}
	return m, nil
}

// Name returns the module's name, from its describe message.
func (m *Module) Name() string { return m.name }

// Describe returns the module's describe message. It must not be modified.
func (m *Module) Describe() *abi.Describe { return m.desc }

// Implements reports whether the module implements hook.
func (m *Module) Implements(hook abi.Hook) bool { return m.hooks[hook] }

// Pool returns the instance pool the module's calls run on, e.g. for its
// Stats. It is the runtime's pool for this module and owner: closing it
// closes it for every Module loaded with the same bytes and owner.
func (m *Module) Pool() *sandbox.Pool { return m.pool }

// Tools returns one *Tool per tool the module declares, in its order.
func (m *Module) Tools() []tool.Tool { return append([]tool.Tool(nil), m.tools...) }

// Close closes the module's pool (see Pool): calls in flight finish, later
// calls fail with sandbox.ErrClosed.
func (m *Module) Close(ctx context.Context) error { return m.pool.Close(ctx) }

// Error is a module's hook that failed. Err wraps the cause: the guest
// reported an error (sandbox.ErrGuest); it trapped, timed out or answered
// with a bad output (sandbox.ErrTrap, ErrTimeout, ErrBadOutput, ...); or
// the values could not be converted. After a trap or a timeout the pool has
// already discarded the instance, and the next call runs on a fresh one.
type Error struct {
	Module string
	Hook   abi.Hook
	// Tool is the tool called, for tool_call.
	Tool string
	Err  error
}

func (e *Error) Error() string {
	if e.Tool != "" {
		return fmt.Sprintf("module %q hook %s (tool %q): %v", e.Module, e.Hook, e.Tool, e.Err)
	}
	return fmt.Sprintf("module %q hook %s: %v", e.Module, e.Hook, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// invoke runs hook with in on one of m's instances, h serving its host
// functions, and returns the output; an "error" in it, and every failure of
// the call, is an *Error.
func invoke[Out any, PO interface {
	*Out
	abi.Message
}](ctx context.Context, m *Module, hook abi.Hook, toolName string, in abi.Message, h *callHost) (*Out, error) {
	out, err := sandbox.Invoke[Out, PO](ctx, m.pool, hook, in, h)
	if err != nil {
		return nil, &Error{Module: m.name, Hook: hook, Tool: toolName, Err: err}
	}
	if msg := outputError(PO(out)); msg != "" {
		return nil, &Error{Module: m.name, Hook: hook, Tool: toolName, Err: fmt.Errorf("%w: %s", sandbox.ErrGuest, capMessage(msg))}
	}
	if err := m.admit(hook, in, PO(out)); err != nil {
		return nil, &Error{Module: m.name, Hook: hook, Tool: toolName, Err: err}
	}
	return out, nil
}

// maxErrorMessage bounds the error text a guest's output puts into the
// engine's errors, events and logs.
const maxErrorMessage = 16 << 10

// capMessage cuts a guest's error message at maxErrorMessage bytes.
func capMessage(msg string) string {
	if len(msg) <= maxErrorMessage {
		return msg
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes cut)", msg[:cut], len(msg)-cut)
}

// outputError returns the "error" field of an output message.
func outputError(m abi.Message) string {
	switch o := m.(type) {
	case *abi.ToolCallOutput:
		return o.Error
	case *abi.ContentOutput:
		return o.Error
	case *abi.ModelOutput:
		return o.Error
	case *abi.BeforeToolOutput:
		return o.Error
	case *abi.ToolOutput:
		return o.Error
	case *abi.UserMessageOutput:
		return o.Error
	case *abi.EventOutput:
		return o.Error
	case *abi.AfterRunOutput:
		return o.Error
	case *abi.NotifyOutput:
		return o.Error
	}
	return ""
}

// inputError is an *Error for a value the host could not encode.
func (m *Module) inputError(hook abi.Hook, err error) error {
	return &Error{Module: m.name, Hook: hook, Err: fmt.Errorf("encoding the input: %w", err)}
}

// outputErr is an *Error for an output whose values do not convert.
func (m *Module) outputErr(hook abi.Hook, err error) error {
	return &Error{Module: m.name, Hook: hook, Err: fmt.Errorf("%w: %w", sandbox.ErrBadOutput, err)}
}

// schema decodes a JSON Schema of a tool declaration; nil when absent.
func schema(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s, nil
}
