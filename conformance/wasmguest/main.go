// Command wasmguest is the conformance harness's generic Wasm guest. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o guest.wasm ./conformance/wasmguest
//
// It performs the scenario behaviour vocabulary (FORMAT.md §1.4, §1.5) of
// the agent or plugin its config describes (key "spec", a wasmspec.Spec):
// the runner in Wasm mode (conformance/wasm.go) loads it once per agent and
// once per plugin, so one .wasm serves every scenario.
//
// Describe runs before any grant exists, so it cannot read the config: the
// guest declares one dispatcher tool (wasmspec.DispatchTool), called with
// {"tool": <scenario tool>, "args": <its args>}, and registers one callback
// for every hook; each callback runs the hook's behaviour items in order
// and returns the first non-nil result, as an agent's list of one-item
// callbacks (or a plugin hook) does. callback_log entries go to the host
// through the log host function (wasmspec.LogPrefix + JSON). Item call
// counts (`when.nth`) live in the instance's globals: the runner gives each
// module a pool of one instance.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/conformance/wasmguest/wasmspec"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

func main() {}

var (
	mu       sync.Mutex
	spec     *wasmspec.Spec
	specText string
	calls    = map[string]int64{}
)

func loadSpec() (*wasmspec.Spec, error) {
	s, err := adkhost.Config(wasmspec.ConfigKey)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if spec != nil && s == specText {
		return spec, nil
	}
	var sp wasmspec.Spec
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		return nil, fmt.Errorf("config %q: %w", wasmspec.ConfigKey, err)
	}
	spec, specText = &sp, s
	return spec, nil
}

// value decodes a JSON value keeping numbers exact (json.Number).
func value(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func pyErr(e *wasmspec.PyError) error {
	b, _ := json.Marshal(e)
	return errors.New(wasmspec.ErrPrefix + string(b))
}

func logEntry(e map[string]any) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	adkhost.Log(slog.LevelInfo, wasmspec.LogPrefix+string(b))
	return nil
}

type info struct {
	agent, tool, err, author *string
	args                     map[string]any
}

func sp(s string) *string { return &s }

type ret struct {
	content  *abi.Content
	response *abi.LlmResponse
	value    map[string]any
	event    *wasmspec.EventUpdate
}

func matches(w wasmspec.When, in info, n int64) bool {
	eq := func(want, got *string) bool { return want == nil || (got != nil && *got == *want) }
	if !eq(w.Agent, in.agent) || !eq(w.Tool, in.tool) || !eq(w.Author, in.author) {
		return false
	}
	if w.ErrorContains != nil && (in.err == nil || !strings.Contains(*in.err, *w.ErrorContains)) {
		return false
	}
	return w.Nth == nil || *w.Nth == n
}

// artifactOps runs artifact operations through the host's artifact
// functions and returns their results as google-adk's dumps show them: a
// saved version, a loaded part (nil when missing), a list of names. A
// runner without an artifact service answers UNAVAILABLE, which is
// google-adk's ValueError.
func artifactOps(ops []wasmspec.ArtifactOp) ([]any, error) {
	results := []any{}
	noService := func(err error) error {
		var he *adkhost.HostError
		if errors.As(err, &he) && he.Status == abi.StatusUnavailable {
			return pyErr(&wasmspec.PyError{Type: "ValueError", Msg: "Artifact service is not initialized."})
		}
		return err
	}
	for _, op := range ops {
		switch {
		case op.Save != nil:
			v, err := adkhost.Artifacts().Save(*op.Save, &abi.Part{InlineData: &abi.Blob{MIMEType: op.MIMEType, Data: op.Data}})
			if err != nil {
				return nil, noService(err)
			}
			results = append(results, v)
		case op.Load != nil:
			version := adkhost.LatestVersion
			if op.Version != nil {
				version = int(*op.Version)
			}
			p, err := adkhost.Artifacts().Load(*op.Load, version)
			var he *adkhost.HostError
			switch {
			case errors.As(err, &he) && he.Status == abi.StatusNotFound:
				results = append(results, nil)
			case err != nil:
				return nil, noService(err)
			default:
				results = append(results, partDump(p))
			}
		default:
			names, err := adkhost.Artifacts().List()
			if err != nil {
				return nil, noService(err)
			}
			if names == nil {
				names = []string{}
			}
			results = append(results, names)
		}
	}
	return results, nil
}

// partDump is a loaded part as google-adk's Part.model_dump(mode="json",
// exclude_none=True) writes it (inline data, base64; text).
func partDump(p *abi.Part) map[string]any {
	d := map[string]any{}
	if p.Text != "" {
		d["text"] = p.Text
	}
	if b := p.InlineData; b != nil {
		blob := map[string]any{"data": b.Data}
		if b.MIMEType != "" {
			blob["mime_type"] = b.MIMEType
		}
		if b.DisplayName != "" {
			blob["display_name"] = b.DisplayName
		}
		d["inline_data"] = blob
	}
	return d
}

// run performs one item: log, set_state, artifacts, escalate,
// transfer_to_agent, set_args, append_instruction, raise, return. An item
// with artifacts is logged once they ran, with their results.
func run(it *wasmspec.Item, in info, args map[string]any, req *abi.LlmRequest) (*ret, error) {
	key := fmt.Sprintf("%s#%d", it.Hook, it.Index)
	mu.Lock()
	calls[key]++
	n := calls[key]
	mu.Unlock()
	matched := matches(it.When, in, n)
	e := map[string]any{"hook": it.Hook, "owner": it.Owner, "index": it.Index, "matched": matched}
	if in.agent != nil {
		e["agent"] = *in.agent
	}
	if in.tool != nil {
		e["tool"] = *in.tool
	}
	if in.args != nil {
		e["args"] = in.args
	}
	if in.err != nil {
		e["error"] = *in.err
	}
	if in.author != nil {
		e["author"] = *in.author
	}
	withResults := matched && it.Artifacts != nil
	if !withResults {
		if err := logEntry(e); err != nil {
			return nil, err
		}
	}
	if !matched {
		return nil, nil
	}
	for _, kv := range it.SetState {
		if err := adkhost.State().Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	if withResults {
		results, err := artifactOps(it.Artifacts)
		if err == nil {
			e["artifacts"] = results
		}
		if lerr := logEntry(e); lerr != nil {
			return nil, lerr
		}
		if err != nil {
			return nil, err
		}
	}
	if it.Escalate {
		if err := adkhost.Actions().Escalate(); err != nil {
			return nil, err
		}
	}
	if it.TransferToAgent != nil {
		if err := adkhost.Actions().TransferToAgent(*it.TransferToAgent); err != nil {
			return nil, err
		}
	}
	for _, kv := range it.SetArgs {
		v, err := value(kv.Value)
		if err != nil {
			return nil, err
		}
		args[kv.Key] = v
	}
	if it.AppendInstruction != nil {
		appendInstruction(req, *it.AppendInstruction)
	}
	if it.Raise != nil {
		return nil, pyErr(it.Raise)
	}
	if !it.HasReturn {
		return nil, nil
	}
	if it.ReturnEvent != nil {
		return &ret{event: it.ReturnEvent}, nil
	}
	switch {
	case len(it.ReturnContent) > 0:
		var c abi.Content
		if err := json.Unmarshal(it.ReturnContent, &c); err != nil {
			return nil, err
		}
		return &ret{content: &c}, nil
	case len(it.ReturnResponse) > 0:
		var r abi.LlmResponse
		if err := json.Unmarshal(it.ReturnResponse, &r); err != nil {
			return nil, err
		}
		return &ret{response: &r}, nil
	}
	v, err := value(it.ReturnValue)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return &ret{value: v}, nil
	default:
		return &ret{value: map[string]any{"result": v}}, nil
	}
}

// first runs the hook's items until one returns a value or fails.
func first(hook string, in info, args map[string]any, req *abi.LlmRequest) (*ret, error) {
	s, err := loadSpec()
	if err != nil {
		return nil, err
	}
	for _, it := range s.Hooks[hook] {
		r, err := run(it, in, args, req)
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, nil
}

// appendInstruction is llm_request.append_instructions([text]), as
// engine/model.Request.AppendInstructions does it.
func appendInstruction(req *abi.LlmRequest, text string) {
	if req.Config == nil {
		req.Config = &abi.GenerateContentConfig{}
	}
	si := req.Config.SystemInstruction
	blank := true
	if si != nil {
		for _, p := range si.Parts {
			if p != nil && !reflect.ValueOf(*p).IsZero() {
				blank = false
			}
		}
	}
	if si == nil || blank {
		if text != "" {
			req.Config.SystemInstruction = &abi.Content{Role: "user", Parts: []*abi.Part{{Text: text}}}
		}
		return
	}
	if n := len(si.Parts); n > 0 && si.Parts[n-1] != nil && si.Parts[n-1].Text != "" {
		si.Parts[n-1] = &abi.Part{Text: si.Parts[n-1].Text + "\n\n" + text}
		return
	}
	if text != "" {
		si.Parts = append(si.Parts, &abi.Part{Text: text})
	}
}

func (r *ret) getContent() *abi.Content {
	if r == nil {
		return nil
	}
	return r.content
}

func (r *ret) getResponse() *abi.LlmResponse {
	if r == nil {
		return nil
	}
	return r.response
}

func (r *ret) getValue() map[string]any {
	if r == nil {
		return nil
	}
	return r.value
}

func agentInfo(ctx adkhost.CallbackContext) info { return info{agent: sp(ctx.Invocation.AgentName)} }

func toolInfo(ctx adkhost.ToolContext, args map[string]any) info {
	return info{agent: sp(ctx.Invocation.AgentName), tool: sp(ctx.Tool.Name), args: snapshot(args)}
}

// snapshot is a deep copy of args, taken before the item changes them.
func snapshot(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	b, _ := json.Marshal(args)
	v, _ := value(b)
	m, _ := v.(map[string]any)
	return m
}

type dispatchArgs struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// tool is the body of a scenario function tool (§1.4).
func tool(ctx adkhost.ToolContext, in dispatchArgs) (any, error) {
	s, err := loadSpec()
	if err != nil {
		return nil, err
	}
	t := s.Tools[in.Tool]
	if t == nil {
		return nil, fmt.Errorf("no tool %q in this module's spec", in.Tool)
	}
	callArgs := map[string]any{}
	for _, p := range t.Params {
		v, ok := in.Args[p.Name]
		switch {
		case ok:
		case p.HasDefault:
			if v, err = value(p.Default); err != nil {
				return nil, err
			}
		case p.Optional:
			v = nil
		default:
			return nil, pyErr(&wasmspec.PyError{Type: "TypeError", Msg: fmt.Sprintf("%s() missing 1 required keyword-only argument: '%s'", in.Tool, p.Name)})
		}
		callArgs[p.Name] = v
	}
	entry := map[string]any{"hook": "tool", "owner": "tool:" + in.Tool, "agent": ctx.Invocation.AgentName, "tool": in.Tool, "args": callArgs}
	if c := ctx.Confirmation; c != nil {
		ce := map[string]any{"confirmed": c.Confirmed, "hint": c.Hint}
		if c.Payload != nil {
			ce["payload"] = c.Payload
		}
		entry["confirmation"] = ce
	}
	if err := logEntry(entry); err != nil {
		return nil, err
	}
	if rc := t.RequestConfirmation; rc != nil {
		if ctx.Confirmation == nil {
			var payload any
			if rc.Payload != nil {
				if payload, err = value(rc.Payload); err != nil {
					return nil, err
				}
			}
			if err := ctx.RequestConfirmation(rc.Hint, payload); err != nil {
				return nil, err
			}
			return map[string]any{"status": "confirmation requested"}, nil
		}
		if !ctx.Confirmation.Confirmed {
			return map[string]any{"status": "rejected"}, nil
		}
	}
	for _, kv := range t.SetState {
		if err := adkhost.State().Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	var artifactResults []any
	if t.Artifacts != nil {
		if artifactResults, err = artifactOps(t.Artifacts); err != nil {
			return nil, err
		}
	}
	if t.TransferToAgent != nil {
		if err := adkhost.Actions().TransferToAgent(*t.TransferToAgent); err != nil {
			return nil, err
		}
	}
	if t.Escalate {
		if err := adkhost.Actions().Escalate(); err != nil {
			return nil, err
		}
	}
	if t.SkipSummarization {
		if err := adkhost.Actions().SkipSummarization(); err != nil {
			return nil, err
		}
	}
	if t.Raise != nil {
		return nil, pyErr(t.Raise)
	}
	if t.ReturnArgs {
		return callArgs, nil
	}
	if t.ReturnArtifacts {
		return map[string]any{"artifacts": artifactResults}, nil
	}
	if t.HasReturn {
		if _, err := value(t.Return); err != nil {
			return nil, err
		}
		// As written, so that its dicts keep the scenario's key order.
		return t.Return, nil
	}
	return nil, nil
}

func init() {
	adkhost.Module("conformance_behaviours", "1.0.0", abi.CapState, abi.CapActions, abi.CapArtifacts, abi.CapConfig)
	adkhost.Tool(wasmspec.DispatchTool, "Runs a scenario tool's behaviour.", tool)

	adkhost.BeforeAgent(func(ctx adkhost.CallbackContext) (*abi.Content, error) {
		r, err := first("before_agent", agentInfo(ctx), nil, nil)
		return r.getContent(), err
	})
	adkhost.AfterAgent(func(ctx adkhost.CallbackContext) (*abi.Content, error) {
		r, err := first("after_agent", agentInfo(ctx), nil, nil)
		return r.getContent(), err
	})
	adkhost.BeforeModel(func(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		r, err := first("before_model", agentInfo(ctx), nil, req)
		return r.getResponse(), err
	})
	adkhost.AfterModel(func(ctx adkhost.CallbackContext, _ *abi.LlmResponse) (*abi.LlmResponse, error) {
		r, err := first("after_model", agentInfo(ctx), nil, nil)
		return r.getResponse(), err
	})
	adkhost.OnModelError(func(ctx adkhost.CallbackContext, req *abi.LlmRequest, cause error) (*abi.LlmResponse, error) {
		in := agentInfo(ctx)
		in.err = sp(cause.Error())
		r, err := first("on_model_error", in, nil, req)
		return r.getResponse(), err
	})
	adkhost.BeforeTool(func(ctx adkhost.ToolContext, args map[string]any) (map[string]any, error) {
		r, err := first("before_tool", toolInfo(ctx, args), args, nil)
		return r.getValue(), err
	})
	adkhost.AfterTool(func(ctx adkhost.ToolContext, args, _ map[string]any) (map[string]any, error) {
		r, err := first("after_tool", toolInfo(ctx, args), args, nil)
		return r.getValue(), err
	})
	adkhost.OnToolError(func(ctx adkhost.ToolContext, args map[string]any, cause error) (map[string]any, error) {
		in := toolInfo(ctx, args)
		in.err = sp(cause.Error())
		r, err := first("on_tool_error", in, args, nil)
		return r.getValue(), err
	})
	adkhost.OnUserMessage(func(ctx adkhost.CallbackContext, _ *abi.Content) (*abi.Content, error) {
		r, err := first("on_user_message", agentInfo(ctx), nil, nil)
		return r.getContent(), err
	})
	adkhost.BeforeRun(func(ctx adkhost.CallbackContext) (*abi.Content, error) {
		r, err := first("before_run", agentInfo(ctx), nil, nil)
		return r.getContent(), err
	})
	adkhost.OnEvent(func(_ adkhost.CallbackContext, ev *abi.Event) (*abi.Event, error) {
		r, err := first("on_event", info{author: sp(ev.Author)}, nil, nil)
		if err != nil || r == nil || r.event == nil {
			return nil, err
		}
		// The event with the item's fields replaced (google-adk merges the
		// fields a replacement sets onto the event).
		out := *ev
		if len(r.event.Content) > 0 {
			var c abi.Content
			if err := json.Unmarshal(r.event.Content, &c); err != nil {
				return nil, err
			}
			out.Content = &c
		}
		if len(r.event.CustomMetadata) > 0 {
			v, err := value(r.event.CustomMetadata)
			if err != nil {
				return nil, err
			}
			out.CustomMetadata, _ = v.(map[string]any)
		}
		return &out, nil
	})
	adkhost.AfterRun(func(ctx adkhost.CallbackContext) error {
		_, err := first("after_run", agentInfo(ctx), nil, nil)
		return err
	})
	// Notifications, as google-adk's on_agent_error_callback and
	// on_run_error_callback: the items run, their result is ignored, and an
	// error they raise is only logged by the host.
	adkhost.OnAgentError(func(ctx adkhost.CallbackContext, cause error) {
		in := agentInfo(ctx)
		in.err = sp(cause.Error())
		_, _ = first("on_agent_error", in, nil, nil)
	})
	adkhost.OnRunError(func(ctx adkhost.CallbackContext, cause error) {
		in := agentInfo(ctx)
		in.err = sp(cause.Error())
		_, _ = first("on_run_error", in, nil, nil)
	})
}
