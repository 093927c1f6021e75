//go:build wasip1

// Command guest is the test module of package host, built by its tests with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared. It implements the native
// transport by hand and every hook of ABI v1. Each hook but on_model_error
// answers only when its input carries a trigger, so the tests can attach the
// module anywhere; on_model_error answers every error but an "unhandled"
// one. The notification hooks, on_agent_error and on_run_error, log what
// they are told and report an error, which the host only logs.
package main

import (
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

func main() {}

// ---- Transport glue (ABI.md §3) ----

var blocks = map[uint32][]byte{} // blocks handed to the host, kept alive

//go:wasmexport adkhost_abi_version_1
func abiVersion1() {}

//go:wasmexport adkhost_alloc
func alloc(n uint32) uint32 {
	b := make([]byte, max(n, 1))
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	blocks[p] = b
	return p
}

//go:wasmexport adkhost_free
func free(p, n uint32) { delete(blocks, p) }

func read(p, n uint32, v any) {
	if n > 0 {
		json.Unmarshal(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(p))), n), v)
	}
}

func write(m abi.Message) uint64 {
	b, _ := abi.Encode(m)
	p := alloc(uint32(len(b)))
	copy(blocks[p], b)
	return uint64(p)<<32 | uint64(len(b))
}

// take returns a result block the host allocated, and frees it.
func take(p, n uint32) []byte {
	if n == 0 {
		return nil
	}
	b := append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(uintptr(p))), n)...)
	free(p, n)
	return b
}

func ptr(s string) (uint32, uint32) {
	return uint32(uintptr(unsafe.Pointer(unsafe.StringData(s)))), uint32(len(s))
}

//go:wasmimport adkhost state_get
func stateGet(kp, kl uint32, rp, rl *uint32) int32

//go:wasmimport adkhost state_set
func stateSet(kp, kl, vp, vl uint32) int32

//go:wasmimport adkhost state_delete
func stateDelete(kp, kl uint32) int32

//go:wasmimport adkhost transfer_to_agent
func transferToAgent(np, nl uint32) int32

//go:wasmimport adkhost escalate
func escalate() int32

//go:wasmimport adkhost skip_summarization
func skipSummarization() int32

//go:wasmimport adkhost request_confirmation
func requestConfirmation(hp, hl, pp, pl uint32) int32

//go:wasmimport adkhost artifact_save
func artifactSave(np, nl, pp, pl uint32, version *int32) int32

//go:wasmimport adkhost artifact_load
func artifactLoad(np, nl uint32, version int32, rp, rl *uint32) int32

//go:wasmimport adkhost artifact_list
func artifactList(rp, rl *uint32) int32

//go:wasmimport adkhost log
func logLine(level int32, mp, ml uint32) int32

//go:wasmimport adkhost invocation_info
func invocationInfo(rp, rl *uint32) int32

//go:wasmimport adkhost config_get
func configGet(kp, kl uint32, rp, rl *uint32) int32

//go:wasmimport adkhost memory_search
func memorySearch(qp, ql uint32, rp, rl *uint32) int32

//go:wasmimport adkhost memory_add_session
func memoryAddSession() int32

// ---- The module ----

var describe = abi.Describe{
	Name: "testguest",
	Tools: []abi.ToolDecl{
		{Name: "remember", Description: "Stores a value in session state and ends the turn.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{}},"required":["key","value"]}`)},
		{Name: "echo", Description: "Returns its arguments."},
		{Name: "probe", Description: "Calls host functions and reports what they answered."},
		{Name: "fail", Description: "Reports an error."},
		{Name: "trap", Description: "Panics."},
		{Name: "spin", Description: "Never returns."},
		{Name: "later", Description: "Answers in a later turn.", LongRunning: true,
			Response: json.RawMessage(`{"type":"object"}`)},
	},
	Hooks:        abi.Hooks(),
	Capabilities: []abi.Capability{abi.CapState, abi.CapActions, abi.CapArtifacts, abi.CapConfig, abi.CapMemory},
}

//go:wasmexport adkhost_describe
func describeExport(p, n uint32) uint64 { return write(&describe) }

//go:wasmexport adkhost_tool_call
func toolCall(p, n uint32) uint64 {
	var in abi.ToolCallInput
	read(p, n, &in)
	switch in.Tool {
	case "remember":
		key, _ := in.Args["key"].(string)
		val, _ := json.Marshal(in.Args["value"])
		kp, kl := ptr(key)
		vp, vl := ptr(string(val))
		if st := stateSet(kp, kl, vp, vl); st != 0 {
			return write(&abi.ToolCallOutput{Error: "state_set: " + abi.Status(st).String()})
		}
		skipSummarization()
		return write(&abi.ToolCallOutput{Result: map[string]any{"remembered": key}})
	case "echo":
		return write(&abi.ToolCallOutput{Result: in.Args})
	case "probe":
		return write(&abi.ToolCallOutput{Result: probe(in)})
	case "fail":
		return write(&abi.ToolCallOutput{Error: "no luck"})
	case "trap":
		panic("trap!")
	case "spin":
		for {
		}
	case "later":
		return 0
	}
	return write(&abi.ToolCallOutput{Error: "unknown tool " + in.Tool})
}

// probe runs args.ops, each {"op", "key"/"name"/"hint", "value", "version"},
// and returns each status and result.
func probe(in abi.ToolCallInput) map[string]any {
	ops, _ := in.Args["ops"].([]any)
	var out []any
	for _, o := range ops {
		op, _ := o.(map[string]any)
		name, _ := op["op"].(string)
		arg, _ := op["arg"].(string)
		value, _ := json.Marshal(op["value"])
		ap, al := ptr(arg)
		vp, vl := ptr(string(value))
		var rp, rl uint32
		var st int32
		var res any
		switch name {
		case "state_get":
			st = stateGet(ap, al, &rp, &rl)
		case "state_set":
			st = stateSet(ap, al, vp, vl)
		case "state_delete":
			st = stateDelete(ap, al)
		case "transfer_to_agent":
			st = transferToAgent(ap, al)
		case "escalate":
			st = escalate()
		case "skip_summarization":
			st = skipSummarization()
		case "request_confirmation":
			st = requestConfirmation(ap, al, vp, vl)
		case "artifact_save":
			var v int32
			if st = artifactSave(ap, al, vp, vl, &v); st == 0 {
				res = v
			}
		case "artifact_load":
			version, _ := op["version"].(float64)
			st = artifactLoad(ap, al, int32(version), &rp, &rl)
		case "artifact_list":
			st = artifactList(&rp, &rl)
		case "log":
			st = logLine(4, ap, al)
		case "invocation_info":
			st = invocationInfo(&rp, &rl)
		case "memory_search":
			st = memorySearch(ap, al, &rp, &rl)
		case "memory_add_session":
			st = memoryAddSession()
		case "config_get":
			if st = configGet(ap, al, &rp, &rl); st == 0 {
				res = string(take(rp, rl)) // raw bytes, not JSON
				rp, rl = 0, 0
			}
		}
		if b := take(rp, rl); b != nil {
			res = json.RawMessage(b)
		}
		r := map[string]any{"op": name, "status": abi.Status(st).String()}
		if res != nil {
			r["result"] = res
		}
		out = append(out, r)
	}
	return map[string]any{"results": out}
}

func text(c *abi.Content) string {
	if c == nil {
		return ""
	}
	var s string
	for _, p := range c.Parts {
		if p != nil {
			s += p.Text
		}
	}
	return s
}

func say(role, s string) *abi.Content {
	return &abi.Content{Role: role, Parts: []*abi.Part{{Text: s}}}
}

//go:wasmexport adkhost_before_agent
func beforeAgent(p, n uint32) uint64 {
	var in abi.AgentInput
	read(p, n, &in)
	if text(in.Context.UserContent) == "skip agent" {
		return write(&abi.ContentOutput{Content: say("model", "skipped by guest")})
	}
	return 0
}

//go:wasmexport adkhost_after_agent
func afterAgent(p, n uint32) uint64 {
	var in abi.AgentInput
	read(p, n, &in)
	if text(in.Context.UserContent) == "after agent" {
		return write(&abi.ContentOutput{Content: say("model", "added by guest")})
	}
	return 0
}

// before_model answers instead of the model when the request mentions
// BLOCK, and adds an instruction when it mentions BRIEF.
//
//go:wasmexport adkhost_before_model
func beforeModel(p, n uint32) uint64 {
	var in abi.BeforeModelInput
	read(p, n, &in)
	all := ""
	for _, c := range in.Request.Contents {
		all += text(c)
	}
	switch {
	case strings.Contains(all, "BLOCK"):
		return write(&abi.ModelOutput{Response: &abi.LlmResponse{Content: say("model", "Request blocked by policy.")}})
	case strings.Contains(all, "BRIEF"):
		req := in.Request
		if req.Config == nil {
			req.Config = &abi.GenerateContentConfig{}
		}
		if req.Config.SystemInstruction == nil {
			req.Config.SystemInstruction = &abi.Content{Role: "user"}
		}
		si := req.Config.SystemInstruction
		si.Parts = append(si.Parts, &abi.Part{Text: "Be brief."})
		return write(&abi.ModelOutput{Request: req})
	}
	return 0
}

//go:wasmexport adkhost_after_model
func afterModel(p, n uint32) uint64 {
	var in abi.AfterModelInput
	read(p, n, &in)
	if r := in.Response; r != nil && strings.Contains(text(r.Content), "secret") {
		r.Content = say("model", "[redacted]")
		return write(&abi.ModelOutput{Response: r})
	}
	return 0
}

//go:wasmexport adkhost_on_model_error
func onModelError(p, n uint32) uint64 {
	var in abi.ModelErrorInput
	read(p, n, &in)
	if strings.Contains(in.Error, "unhandled") {
		return 0
	}
	return write(&abi.ModelOutput{Response: &abi.LlmResponse{Content: say("model", "fallback: "+in.Error)}})
}

// before_tool drops a "password" argument of echo and marks the call.
//
//go:wasmexport adkhost_before_tool
func beforeTool(p, n uint32) uint64 {
	var in abi.BeforeToolInput
	read(p, n, &in)
	if _, ok := in.Args["password"]; ok && in.Tool.Name == "echo" {
		delete(in.Args, "password")
		in.Args["redacted"] = true
		return write(&abi.BeforeToolOutput{Args: in.Args})
	}
	if in.Tool.Name == "cached" {
		return write(&abi.BeforeToolOutput{Result: map[string]any{"from": "cache"}})
	}
	return 0
}

//go:wasmexport adkhost_after_tool
func afterTool(p, n uint32) uint64 {
	var in abi.AfterToolInput
	read(p, n, &in)
	if in.Tool.LongRunning && in.Args["approve"] == true {
		// Answers a pending long-running call in its place: refused.
		return write(&abi.ToolOutput{Result: map[string]any{"status": "approved"}})
	}
	if _, ok := in.Result["annotate"]; ok {
		in.Result["note"] = "seen by after_tool"
		return write(&abi.ToolOutput{Result: in.Result})
	}
	return 0
}

//go:wasmexport adkhost_on_tool_error
func onToolError(p, n uint32) uint64 {
	var in abi.ToolErrorInput
	read(p, n, &in)
	if in.Tool.Name == "fail" {
		return write(&abi.ToolOutput{Result: map[string]any{"recovered": in.Error}})
	}
	return 0
}

//go:wasmexport adkhost_on_user_message
func onUserMessage(p, n uint32) uint64 {
	var in abi.UserMessageInput
	read(p, n, &in)
	t := text(in.Message)
	switch {
	case strings.HasPrefix(t, "shout "):
		return write(&abi.UserMessageOutput{Message: say("user", strings.ToUpper(t))})
	case t == "probe readonly":
		// What a run-level hook may do: read state, nothing else.
		kp, kl := ptr("color")
		vp, vl := ptr(`"red"`)
		var rp, rl uint32
		got := stateGet(kp, kl, &rp, &rl)
		value := string(take(rp, rl))
		t = "state_get=" + abi.Status(got).String() + " " + value +
			" state_set=" + abi.Status(stateSet(kp, kl, vp, vl)).String() +
			" skip_summarization=" + abi.Status(skipSummarization()).String() +
			" artifact_list=" + abi.Status(artifactList(&rp, &rl)).String() +
			" memory_add_session=" + abi.Status(memoryAddSession()).String()
		if st := invocationInfo(&rp, &rl); st == 0 {
			var info abi.InvocationInfo
			json.Unmarshal(take(rp, rl), &info)
			t += " invocation=" + info.InvocationID
		}
		return write(&abi.UserMessageOutput{Message: say("user", t)})
	}
	return 0
}

//go:wasmexport adkhost_before_run
func beforeRun(p, n uint32) uint64 {
	var in abi.RunInput
	read(p, n, &in)
	if text(in.Context.UserContent) == "stop" {
		return write(&abi.ContentOutput{Content: say("model", "stopped by guest")})
	}
	return 0
}

//go:wasmexport adkhost_on_event
func onEvent(p, n uint32) uint64 {
	var in abi.EventInput
	read(p, n, &in)
	if e := in.Event; e != nil && strings.Contains(text(e.Content), "mark me") {
		e.CustomMetadata = map[string]any{"marked": true}
		return write(&abi.EventOutput{Event: e})
	}
	return 0
}

//go:wasmexport adkhost_after_run
func afterRun(p, n uint32) uint64 {
	var in abi.RunInput
	read(p, n, &in)
	if text(in.Context.UserContent) == "fail after run" {
		return write(&abi.AfterRunOutput{Error: "after_run refused"})
	}
	return 0
}

//go:wasmexport adkhost_on_agent_error
func onAgentError(p, n uint32) uint64 {
	var in abi.AgentErrorInput
	read(p, n, &in)
	notified("on_agent_error agent=" + in.Context.AgentName + " error=" + in.Error)
	return write(&abi.NotifyOutput{Error: "on_agent_error refused"})
}

//go:wasmexport adkhost_on_run_error
func onRunError(p, n uint32) uint64 {
	var in abi.RunErrorInput
	read(p, n, &in)
	notified("on_run_error invocation=" + in.Context.InvocationID + " user=" + text(in.Context.UserContent) + " error=" + in.Error)
	return write(&abi.NotifyOutput{Error: "on_run_error refused"})
}

func notified(line string) {
	mp, ml := ptr(line)
	logLine(0, mp, ml)
}
