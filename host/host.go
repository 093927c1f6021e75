package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
)

// callHost serves the host functions of one hook call from the engine
// context the hook runs in: a guest's state writes and actions land where a
// Go tool's or callback's would, on the same *session.State and
// *session.EventActions. The sandbox has checked the capability, the key
// and the JSON before a method runs; config_get and http_request never reach
// it (the sandbox serves them from the grants).
//
// One call runs on one goroutine, so a callHost needs no lock.
type callHost struct {
	m    *Module
	hook abi.Hook
	ro   callbacks.ReadonlyContext
	cc   callbacks.CallbackContext // nil in the run-level plugin hooks
	tc   callbacks.ToolContext     // set in tool_call and the tool hooks
}

var _ abi.Host = (*callHost)(nil)

// runHost, callbackHost and toolHost bind a call to the context of a
// run-level plugin hook, an agent or model hook, and a tool or tool hook.
func runHost(m *Module, hook abi.Hook, ro callbacks.ReadonlyContext) *callHost {
	return &callHost{m: m, hook: hook, ro: ro}
}

func callbackHost(m *Module, hook abi.Hook, cc callbacks.CallbackContext) *callHost {
	return &callHost{m: m, hook: hook, ro: cc, cc: cc}
}

func toolHost(m *Module, hook abi.Hook, tc callbacks.ToolContext) *callHost {
	return &callHost{m: m, hook: hook, ro: tc, cc: tc, tc: tc}
}

// StateGet reads the pending delta, then the session. In the run-level
// plugin hooks (no callback context) it reads the session only.
func (h *callHost) StateGet(_ context.Context, key string) (json.RawMessage, error) {
	var v any
	var ok bool
	switch {
	case h.cc != nil:
		v, ok = h.cc.State().Get(key)
	case h.ro.Session() != nil:
		v, ok = h.ro.Session().StateValue(key)
	default:
		return nil, abi.StatusUnavailable
	}
	if !ok {
		return nil, abi.StatusNotFound
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("state %q does not encode as JSON: %w", key, err)
	}
	return b, nil
}

// StateSet writes through the context's State, as a Go tool's
// ctx.State().Set does: the value, decoded by the ABI codec (integers stay
// int64), lands in the event's state delta.
func (h *callHost) StateSet(_ context.Context, key string, value json.RawMessage) error {
	if err := h.writable(key); err != nil {
		return err
	}
	var v any
	if err := abi.DecodeValue(value, &v, 0); err != nil {
		return abi.StatusInvalidArgument
	}
	// The JSON text keeps the order of the value's dict keys.
	h.cc.State().SetOrdered(key, v, value)
	return nil
}

// StateDelete records null, as google-adk's `state[key] = None`.
func (h *callHost) StateDelete(_ context.Context, key string) error {
	if err := h.writable(key); err != nil {
		return err
	}
	h.cc.State().Set(key, nil)
	return nil
}

// writable checks that this call can write key: a callback context, and a
// grant for the app: and user: scopes.
func (h *callHost) writable(key string) error {
	if h.cc == nil {
		return abi.StatusUnavailable
	}
	switch {
	case strings.HasPrefix(key, abi.StatePrefixApp) && !h.m.cfg.WriteAppState,
		strings.HasPrefix(key, abi.StatePrefixUser) && !h.m.cfg.WriteUserState:
		return abi.StatusDenied
	}
	return nil
}

func (h *callHost) TransferToAgent(_ context.Context, agent string) error {
	if h.cc == nil {
		return abi.StatusUnavailable
	}
	h.cc.Actions().TransferToAgent = agent
	return nil
}

func (h *callHost) Escalate(context.Context) error {
	if h.cc == nil {
		return abi.StatusUnavailable
	}
	h.cc.Actions().Escalate = true
	return nil
}

func (h *callHost) SkipSummarization(context.Context) error {
	if h.cc == nil {
		return abi.StatusUnavailable
	}
	h.cc.Actions().SkipSummarization = true
	return nil
}

// RequestConfirmation asks to confirm the current function call, as a Go
// tool's ctx.RequestConfirmation does; only a tool context has one.
func (h *callHost) RequestConfirmation(_ context.Context, hint string, payload json.RawMessage) error {
	if h.tc == nil {
		return abi.StatusUnavailable
	}
	var p any
	if len(payload) > 0 {
		if err := abi.DecodeValue(payload, &p, 0); err != nil {
			return abi.StatusInvalidArgument
		}
	}
	h.tc.RequestConfirmation(hint, p)
	return nil
}

func (h *callHost) ArtifactLoad(_ context.Context, name string, version int) (*abi.Part, error) {
	if h.cc == nil {
		return nil, abi.StatusUnavailable
	}
	p, err := h.cc.LoadArtifact(name, version)
	if err != nil {
		return nil, artifactStatus(err)
	}
	if p == nil {
		return nil, abi.StatusNotFound
	}
	return PartToABI(p), nil
}

// ArtifactSave saves through the callback context, as a Go tool's
// ctx.SaveArtifact does. A "user:" name is the user's, shared by every
// session as "user:" state is, so it needs WriteUserState too.
func (h *callHost) ArtifactSave(_ context.Context, name string, part *abi.Part) (int, error) {
	if h.cc == nil {
		return 0, abi.StatusUnavailable
	}
	if artifact.IsUserScoped(name) && !h.m.cfg.WriteUserState {
		return 0, abi.StatusDenied
	}
	p, err := partFromABI(part)
	if err != nil {
		return 0, abi.StatusInvalidArgument
	}
	v, err := h.cc.SaveArtifact(name, p)
	if err != nil {
		return 0, artifactStatus(err)
	}
	return v, nil
}

func (h *callHost) ArtifactList(context.Context) ([]string, error) {
	if h.cc == nil {
		return nil, abi.StatusUnavailable
	}
	names, err := h.cc.ListArtifacts()
	if err != nil {
		return nil, artifactStatus(err)
	}
	return names, nil
}

// artifactStatus maps an artifact error to a status; others are FAILED.
func artifactStatus(err error) error {
	switch {
	case errors.Is(err, artifact.ErrNotFound):
		return abi.StatusNotFound
	case errors.Is(err, engine.ErrNoArtifactService):
		return abi.StatusUnavailable
	}
	return err
}

// MemorySearch searches the user's memories through the callback context,
// as a Go tool's ctx.SearchMemory does; the run-level plugin hooks have
// none.
func (h *callHost) MemorySearch(_ context.Context, query string) (*abi.SearchMemoryResponse, error) {
	if h.cc == nil {
		return nil, abi.StatusUnavailable
	}
	resp, err := h.cc.SearchMemory(query)
	if err != nil {
		return nil, memoryStatus(err)
	}
	return MemoryToABI(resp), nil
}

// MemoryAddSession adds the current session to the memory service, as a
// Go tool's ctx.AddSessionToMemory does.
func (h *callHost) MemoryAddSession(context.Context) error {
	if h.cc == nil {
		return abi.StatusUnavailable
	}
	if err := h.cc.AddSessionToMemory(); err != nil {
		return memoryStatus(err)
	}
	return nil
}

// memoryStatus maps a memory error to a status; others are FAILED.
func memoryStatus(err error) error {
	if errors.Is(err, engine.ErrNoMemoryService) {
		return abi.StatusUnavailable
	}
	return err
}

// Log writes a guest's line to the module's logger, with the module's name,
// the hook and the invocation.
func (h *callHost) Log(ctx context.Context, level slog.Level, msg string) {
	h.m.logger.Log(ctx, level, msg, "module", h.m.name, "hook", string(h.hook), "invocation", h.ro.InvocationID())
}

func (h *callHost) InvocationInfo(context.Context) (*abi.InvocationInfo, error) {
	info := h.info()
	return &info, nil
}

// info is the "context" of the hook's input.
func (h *callHost) info() abi.InvocationInfo {
	ro := h.ro
	info := abi.InvocationInfo{
		AppName:      ro.AppName(),
		UserID:       ro.UserID(),
		InvocationID: ro.InvocationID(),
		AgentName:    ro.AgentName(),
		Branch:       ro.Branch(),
		UserContent:  ContentToABI(ro.UserContent()),
	}
	if s := ro.Session(); s != nil {
		info.SessionID = s.ID
	}
	if h.tc != nil {
		info.FunctionCallID = h.tc.FunctionCallID()
	}
	return info
}
