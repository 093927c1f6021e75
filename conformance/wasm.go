package conformance

// Wasm mode: the scenario's tools, agent callbacks and plugins run in the
// generic guest of wasmguest/ through package host (RUNNER-go.md, "Wasm
// mode").

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/conformance/wasmguest/wasmspec"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// WasmGaps are the scenarios Wasm mode cannot reproduce because the ABI,
// host or SDK lacks a capability (RUNNER-go.md, "Wasm mode"); each value
// names what is missing. TestScenariosWasm skips them; adkconf -wasm marks
// them.
var WasmGaps = map[string]string{
	// None: every scenario runs in Wasm mode.
}

// Wasm runs scenarios with their behaviours in the conformance guest. It
// holds one sandbox runtime and the guest's bytes; it is safe for
// concurrent use by several Run calls.
type Wasm struct {
	rt     *sandbox.Runtime
	wasm   []byte
	owners atomic.Int64
}

// NewWasm builds the guest (GOOS=wasip1, cached under os.TempDir() by a
// hash of its sources, the SDK's and the ABI's) and makes a sandbox
// runtime whose compilation cache also lives under os.TempDir().
func NewWasm(ctx context.Context) (*Wasm, error) { return NewWasmGuest(ctx, "go") }

// Guests are the languages of the generic guest: "go" (wasmguest/) and
// "python" (pyguest/guest.py, built with modbuild over the Python runtime
// of make python-runtime).
var Guests = []string{"go", "python"}

// NewWasmGuest is NewWasm with the guest written in the given language.
func NewWasmGuest(ctx context.Context, guest string) (*Wasm, error) {
	var wasm []byte
	var err error
	switch guest {
	case "go":
		wasm, err = BuildGuest()
	case "python":
		wasm, err = BuildPythonGuest(ctx)
	default:
		return nil, fmt.Errorf("unknown guest %q: one of %s", guest, strings.Join(Guests, ", "))
	}
	if err != nil {
		return nil, err
	}
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-conformance-sandbox-cache")})
	if err != nil {
		return nil, err
	}
	return &Wasm{rt: rt, wasm: wasm}, nil
}

// Close closes the runtime.
func (w *Wasm) Close(ctx context.Context) error { return w.rt.Close(ctx) }

// guestSources are the directories (relative to the module root) whose Go
// files make up the guest.
var guestSources = []string{"conformance/wasmguest", "sdk/go/adkhost", "abi"}

// BuildGuest returns the conformance guest's .wasm, building it with the
// go command of the running toolchain when its sources changed.
func BuildGuest() ([]byte, error) {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return nil, fmt.Errorf("building the Wasm guest: %w", err)
	}
	return wasmbuild.Build(wasmbuild.Spec{
		Dir: root, Package: "./conformance/wasmguest",
		Sources: guestSources, Cache: "adkhost-conformance-guest",
	})
}

// BuildPythonGuest builds pyguest/guest.py into a module.
func BuildPythonGuest(ctx context.Context) ([]byte, error) {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return nil, fmt.Errorf("building the Python guest: %w", err)
	}
	dir, err := os.MkdirTemp("", "adkhost-conformance-pyguest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "guest.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(ctx, modbuild.Options{Source: filepath.Join(root, "conformance", "pyguest", "guest.py"), Output: out, Stderr: &log}); err != nil {
		return nil, fmt.Errorf("building the Python guest: %w", err)
	}
	return os.ReadFile(out)
}

// wasmRun is Wasm mode for one scenario run: the modules it loaded (closed
// at the end) and the run's callback log.
type wasmRun struct {
	w       *Wasm
	log     *callbackLog
	mu      sync.Mutex
	modules []*host.Module
}

func (r *wasmRun) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.modules {
		_ = m.Close(context.Background())
	}
	r.modules = nil
}

// load loads the guest for one agent or plugin, with spec as its config.
// Each module gets an owner of its own (so a pool of its own) of one
// instance, which keeps the items' call counts (when.nth) in its globals.
func (r *wasmRun) load(spec *wasmspec.Spec) (*host.Module, error) {
	text, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	owner := fmt.Sprintf("conformance-%d", r.w.owners.Add(1))
	m, err := host.Load(context.Background(), r.w.rt, r.w.wasm, host.ModuleConfig{
		Owner:          owner,
		Limits:         sandbox.Limits{MaxInstances: 1},
		Grants:         sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{wasmspec.ConfigKey: string(text)}},
		WriteUserState: true,
		WriteAppState:  true,
		Logger:         slog.New(&logHandler{log: r.log}),
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.modules = append(r.modules, m)
	r.mu.Unlock()
	return m, nil
}

// ---------------------------------------------------------------------------
// Specs: the scenario's behaviours as the guest's config.

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("conformance: scenario value does not encode as JSON: %v", err))
	}
	return b
}

// orderedJSON is rawJSON with the maps of v in the scenario's key order.
func orderedJSON(v any, order json.RawMessage) json.RawMessage {
	b, err := keyorder.Marshal(v, order)
	if err != nil {
		panic(fmt.Sprintf("conformance: scenario value does not encode as JSON: %v", err))
	}
	return b
}

func kvsSpec(kvs []kv) []wasmspec.KV {
	var out []wasmspec.KV
	for _, e := range kvs {
		out = append(out, wasmspec.KV{Key: e.Key, Value: orderedJSON(e.Value, e.Order)})
	}
	return out
}

func pyErrSpec(e *PyError) *wasmspec.PyError {
	if e == nil {
		return nil
	}
	return &wasmspec.PyError{Type: e.Type, Msg: e.Msg}
}

func artifactOpsSpec(ops []ArtifactOp) []wasmspec.ArtifactOp {
	if ops == nil {
		return nil
	}
	out := []wasmspec.ArtifactOp{}
	for _, op := range ops {
		out = append(out, wasmspec.ArtifactOp{Save: op.Save, MIMEType: op.MIMEType, Data: op.Data, Load: op.Load, Version: op.Version, List: op.List})
	}
	return out
}

func toolSpec(t *ToolSpec) *wasmspec.ToolSpec {
	s := &wasmspec.ToolSpec{
		SetState: kvsSpec(t.SetState), TransferToAgent: t.TransferToAgent,
		Escalate: t.Escalate, SkipSummarization: t.SkipSummarization,
		Raise: pyErrSpec(t.Raise), ReturnArgs: t.ReturnArgs, HasReturn: t.HasReturn,
		Artifacts: artifactOpsSpec(t.Artifacts), ReturnArtifacts: t.ReturnArtifacts,
	}
	if t.HasReturn {
		s.Return = orderedJSON(t.Return, t.ReturnOrder)
	}
	if c := t.RequestConfirmation; c != nil {
		s.RequestConfirmation = &wasmspec.Confirmation{}
		if c.Hint != nil {
			s.RequestConfirmation.Hint = *c.Hint
		}
		if c.Payload != nil {
			s.RequestConfirmation.Payload = rawJSON(c.Payload)
		}
	}
	for _, p := range t.Params {
		ps := wasmspec.Param{Name: p.Name, HasDefault: p.HasDefault, Optional: p.Optional}
		if p.HasDefault {
			ps.Default = rawJSON(p.Default)
		}
		s.Params = append(s.Params, ps)
	}
	return s
}

// itemSpec is a behaviour item for the guest; its return value is given in
// its ABI form, built with the native runner's builders and the host's
// converters, so both modes return the same values.
func itemSpec(b *Behaviour) (*wasmspec.Item, error) {
	it := &wasmspec.Item{
		Hook: b.Hook, Owner: b.Owner, Index: b.Index,
		When:     wasmspec.When{Agent: b.When.Agent, Tool: b.When.Tool, Author: b.When.Author, ErrorContains: b.When.ErrorContains, Nth: b.When.Nth},
		SetState: kvsSpec(b.SetState), SetArgs: kvsSpec(b.SetArgs),
		Artifacts: artifactOpsSpec(b.Artifacts), Escalate: b.Escalate, TransferToAgent: b.TransferToAgent,
		AppendInstruction: b.AppendInstruction, Raise: pyErrSpec(b.Raise), HasReturn: b.HasReturn,
	}
	switch {
	case !b.HasReturn:
	case b.ReturnContent != nil:
		it.ReturnContent = rawJSON(host.ContentToABI(buildContent(b.ReturnContent)))
	case b.ReturnResponse != nil:
		r, err := host.ResponseToABI(buildResponse(b.ReturnResponse))
		if err != nil {
			return nil, fmt.Errorf("%s of %s: return: %w", b.Hook, b.Owner, err)
		}
		it.ReturnResponse = rawJSON(r)
	case b.ReturnEvent != nil:
		it.ReturnEvent = &wasmspec.EventUpdate{}
		if b.ReturnEvent.Content != nil {
			it.ReturnEvent.Content = rawJSON(host.ContentToABI(buildContent(b.ReturnEvent.Content)))
		}
		if b.ReturnEvent.CustomMetadata != nil {
			it.ReturnEvent.CustomMetadata = rawJSON(b.ReturnEvent.CustomMetadata)
		}
	default:
		it.ReturnValue = rawJSON(b.ReturnValue)
	}
	return it, nil
}

func hooksSpec(hooks map[string][]*Behaviour) (map[string][]*wasmspec.Item, error) {
	out := map[string][]*wasmspec.Item{}
	for hook, items := range hooks {
		for _, b := range items {
			it, err := itemSpec(b)
			if err != nil {
				return nil, err
			}
			out[hook] = append(out[hook], it)
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Agents and tools.

// agent loads the guest for an agent's function tools and callbacks (nil
// when it has neither) and returns its callbacks: one engine callback per
// hook that has behaviour items, running them all in the guest (the
// guest's chain stops at the first result, as the engine's list of one-item
// callbacks does).
func (r *wasmRun) agent(spec *AgentSpec) (agentCallbacks, *host.Module, error) {
	s := &wasmspec.Spec{Tools: map[string]*wasmspec.ToolSpec{}}
	for _, t := range spec.Tools {
		if t.Builtin == "" && t.AgentTool == nil && t.ExampleTool == nil {
			s.Tools[t.Name] = toolSpec(t)
		}
	}
	var err error
	if s.Hooks, err = hooksSpec(spec.Callbacks); err != nil {
		return agentCallbacks{}, nil, err
	}
	if len(s.Tools) == 0 && len(s.Hooks) == 0 {
		return agentCallbacks{}, nil, nil
	}
	m, err := r.load(s)
	if err != nil {
		return agentCallbacks{}, nil, err
	}
	mc := m.Callbacks()
	has := func(hook string) bool { return len(spec.Callbacks[hook]) > 0 }
	var cbs agentCallbacks
	if has("before_agent") {
		f := mc.BeforeAgent[0]
		cbs.beforeAgent = []callbacks.BeforeAgent{func(cc callbacks.CallbackContext) (*genai.Content, error) {
			c, err := f(cc)
			return c, fromGuest(err)
		}}
	}
	if has("after_agent") {
		f := mc.AfterAgent[0]
		cbs.afterAgent = []callbacks.AfterAgent{func(cc callbacks.CallbackContext) (*genai.Content, error) {
			c, err := f(cc)
			return c, fromGuest(err)
		}}
	}
	if has("before_model") {
		f := mc.BeforeModel[0]
		cbs.beforeModel = []callbacks.BeforeModel{func(cc callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
			resp, err := f(cc, req)
			return resp, fromGuest(err)
		}}
	}
	if has("after_model") {
		f := mc.AfterModel[0]
		cbs.afterModel = []callbacks.AfterModel{func(cc callbacks.CallbackContext, in *model.Response) (*model.Response, error) {
			resp, err := f(cc, in)
			return resp, fromGuest(err)
		}}
	}
	if has("on_model_error") {
		f := mc.OnModelError[0]
		cbs.onModelError = []callbacks.OnModelError{func(cc callbacks.CallbackContext, req *model.Request, cause error) (*model.Response, error) {
			resp, err := f(cc, req, pyCause{cause})
			return resp, fromGuest(err)
		}}
	}
	if has("before_tool") {
		f := mc.BeforeTool[0]
		cbs.beforeTool = []callbacks.BeforeTool{func(tc callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
			res, err := f(tc, t, args)
			return res, fromGuest(err)
		}}
	}
	if has("after_tool") {
		f := mc.AfterTool[0]
		cbs.afterTool = []callbacks.AfterTool{func(tc callbacks.ToolContext, t callbacks.Tool, args, result map[string]any) (map[string]any, error) {
			res, err := f(tc, t, args, result)
			return res, fromGuest(err)
		}}
	}
	if has("on_tool_error") {
		f := mc.OnToolError[0]
		cbs.onToolError = []callbacks.OnToolError{func(tc callbacks.ToolContext, t callbacks.Tool, args map[string]any, cause error) (map[string]any, error) {
			res, err := f(tc, t, args, pyCause{cause})
			return res, fromGuest(err)
		}}
	}
	return cbs, m, nil
}

// toolFn is a scenario tool's body in Wasm mode: the guest's dispatcher
// tool called with the tool's name and arguments. The declaration and the
// check of mandatory arguments stay tool.Function's, as in native mode.
func wasmToolFn(m *host.Module, name string) (func(callbacks.ToolContext, map[string]any) (any, error), error) {
	var disp tool.Tool
	for _, t := range m.Tools() {
		if t.Name() == wasmspec.DispatchTool {
			disp = t
		}
	}
	if disp == nil {
		return nil, fmt.Errorf("the Wasm guest declares no %s tool", wasmspec.DispatchTool)
	}
	return func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
		if args == nil {
			args = map[string]any{}
		}
		res, err := disp.Run(ctx, map[string]any{"tool": name, "args": args})
		return res, fromGuest(err)
	}, nil
}

// ---------------------------------------------------------------------------
// Plugins.

// wasmPlugin is a scenario plugin backed by the guest: the hooks with
// behaviour items call the module's plugin hooks; the others, like
// BasePlugin's defaults, do nothing. on_agent_error and on_run_error are
// notifications: the host logs the guest's failures and never returns them.
type wasmPlugin struct {
	callbacks.NoopPlugin
	name string
	p    *host.Plugin
	has  map[string]bool
}

var _ callbacks.Plugin = (*wasmPlugin)(nil)

func (r *wasmRun) plugin(spec *PluginSpec) (*wasmPlugin, error) {
	hooks, err := hooksSpec(spec.Hooks)
	if err != nil {
		return nil, err
	}
	m, err := r.load(&wasmspec.Spec{Hooks: hooks})
	if err != nil {
		return nil, err
	}
	p := &wasmPlugin{name: spec.Name, p: m.Plugin(), has: map[string]bool{}}
	for hook, items := range spec.Hooks {
		p.has[hook] = len(items) > 0
	}
	return p, nil
}

func (p *wasmPlugin) Name() string { return p.name }

func (p *wasmPlugin) OnUserMessage(ctx callbacks.ReadonlyContext, msg *genai.Content) (*genai.Content, error) {
	if !p.has["on_user_message"] {
		return nil, nil
	}
	c, err := p.p.OnUserMessage(ctx, msg)
	return c, fromGuest(err)
}

func (p *wasmPlugin) BeforeRun(ctx callbacks.ReadonlyContext) (*genai.Content, error) {
	if !p.has["before_run"] {
		return nil, nil
	}
	c, err := p.p.BeforeRun(ctx)
	return c, fromGuest(err)
}

func (p *wasmPlugin) AfterRun(ctx callbacks.ReadonlyContext) error {
	if !p.has["after_run"] {
		return nil
	}
	return fromGuest(p.p.AfterRun(ctx))
}

func (p *wasmPlugin) OnEvent(ctx callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
	if !p.has["on_event"] {
		return nil, nil
	}
	ev, err := p.p.OnEvent(ctx, e)
	return ev, fromGuest(err)
}

func (p *wasmPlugin) BeforeAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	if !p.has["before_agent"] {
		return nil, nil
	}
	c, err := p.p.BeforeAgent(ctx)
	return c, fromGuest(err)
}

func (p *wasmPlugin) AfterAgent(ctx callbacks.CallbackContext) (*genai.Content, error) {
	if !p.has["after_agent"] {
		return nil, nil
	}
	c, err := p.p.AfterAgent(ctx)
	return c, fromGuest(err)
}

func (p *wasmPlugin) BeforeModel(ctx callbacks.CallbackContext, req *model.Request) (*model.Response, error) {
	if !p.has["before_model"] {
		return nil, nil
	}
	r, err := p.p.BeforeModel(ctx, req)
	return r, fromGuest(err)
}

func (p *wasmPlugin) AfterModel(ctx callbacks.CallbackContext, resp *model.Response) (*model.Response, error) {
	if !p.has["after_model"] {
		return nil, nil
	}
	r, err := p.p.AfterModel(ctx, resp)
	return r, fromGuest(err)
}

func (p *wasmPlugin) OnModelError(ctx callbacks.CallbackContext, req *model.Request, cause error) (*model.Response, error) {
	if !p.has["on_model_error"] {
		return nil, nil
	}
	r, err := p.p.OnModelError(ctx, req, pyCause{cause})
	return r, fromGuest(err)
}

func (p *wasmPlugin) BeforeTool(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any) (map[string]any, error) {
	if !p.has["before_tool"] {
		return nil, nil
	}
	r, err := p.p.BeforeTool(ctx, t, args)
	return r, fromGuest(err)
}

func (p *wasmPlugin) AfterTool(ctx callbacks.ToolContext, t callbacks.Tool, args, result map[string]any) (map[string]any, error) {
	if !p.has["after_tool"] {
		return nil, nil
	}
	r, err := p.p.AfterTool(ctx, t, args, result)
	return r, fromGuest(err)
}

func (p *wasmPlugin) OnToolError(ctx callbacks.ToolContext, t callbacks.Tool, args map[string]any, cause error) (map[string]any, error) {
	if !p.has["on_tool_error"] {
		return nil, nil
	}
	r, err := p.p.OnToolError(ctx, t, args, pyCause{cause})
	return r, fromGuest(err)
}

// OnAgentError is google-adk's on_agent_error_callback (told only).
func (p *wasmPlugin) OnAgentError(ctx callbacks.CallbackContext, cause error) {
	if !p.has["on_agent_error"] {
		return
	}
	p.p.OnAgentError(ctx, pyCause{cause})
}

// OnRunError is google-adk's on_run_error_callback (told only).
func (p *wasmPlugin) OnRunError(ctx callbacks.ReadonlyContext, cause error) {
	if !p.has["on_run_error"] {
		return
	}
	p.p.OnRunError(ctx, pyCause{cause})
}

// ---------------------------------------------------------------------------
// Errors and the callback log across the boundary.

// pyCause shows an engine error to the guest as Python's
// f"{type(e).__name__}: {e}" (the text the native runner logs and matches
// `error_contains` against); the host passes err.Error() to the guest.
type pyCause struct{ err error }

func (c pyCause) Error() string { return pyErrorString(c.err) }
func (c pyCause) Unwrap() error { return c.err }

// fromGuest turns a Python exception the guest raised (wasmspec.ErrPrefix +
// JSON in the *host.Error's message) back into a *PyError; other errors
// are returned as they are.
func fromGuest(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	i := strings.LastIndex(s, wasmspec.ErrPrefix)
	if i < 0 {
		return err
	}
	var e wasmspec.PyError
	if json.NewDecoder(strings.NewReader(s[i+len(wasmspec.ErrPrefix):])).Decode(&e) != nil || e.Type == "" {
		return err
	}
	return &PyError{Type: e.Type, Msg: e.Msg}
}

// logHandler receives the guest's log lines; the callback_log entries among
// them (wasmspec.LogPrefix + JSON) are appended to the run's log, with JSON
// integers as int64 and other numbers as float64, as the scenario values
// of native mode are.
type logHandler struct {
	log *callbackLog
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *logHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logHandler) WithGroup(string) slog.Handler            { return h }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	text, ok := strings.CutPrefix(r.Message, wasmspec.LogPrefix)
	if !ok {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var e map[string]any
	if err := d.Decode(&e); err != nil {
		e = map[string]any{"$bad_log_entry": text}
	}
	h.log.add(pyfmt.ExactNumbers(e).(map[string]any))
	return nil
}
