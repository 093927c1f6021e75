//go:build wasip1

// Command goguest is a native-transport test guest in Go, built by the
// sandbox tests with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared. It uses
// package abi for its messages, as a Go guest may: abi imports only the
// standard library. Each tool exercises one behaviour of the sandbox.
package main

import (
	"encoding/json"
	"os"
	"strings"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

func main() {}

// ---- The native transport's glue ----

// blocks keeps every block handed to the host alive until it is freed.
var blocks = map[uint32][]byte{}

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

// view returns the input block; it is valid until the export returns.
func view(p, n uint32) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(uintptr(p))), n)
}

// output copies b into a new block and packs its address and length.
func output(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	p := alloc(uint32(len(b)))
	copy(blocks[p], b)
	return uint64(p)<<32 | uint64(len(b))
}

// take returns the block a host function allocated for a result, and
// frees it.
func take(p, n uint32) []byte {
	b := append([]byte(nil), view(p, n)...)
	free(p, n)
	return b
}

func ptr(s string) (uint32, uint32) {
	return uint32(uintptr(unsafe.Pointer(unsafe.StringData(s)))), uint32(len(s))
}

func bptr(b []byte) (uint32, uint32) {
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))
}

//go:wasmimport adkhost state_get
func stateGet(keyPtr, keyLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost state_set
func stateSet(keyPtr, keyLen, valPtr, valLen uint32) int32

//go:wasmimport adkhost state_delete
func stateDelete(keyPtr, keyLen uint32) int32

//go:wasmimport adkhost transfer_to_agent
func transferToAgent(namePtr, nameLen uint32) int32

//go:wasmimport adkhost escalate
func escalate() int32

//go:wasmimport adkhost skip_summarization
func skipSummarization() int32

//go:wasmimport adkhost request_confirmation
func requestConfirmation(hintPtr, hintLen, payloadPtr, payloadLen uint32) int32

//go:wasmimport adkhost artifact_save
func artifactSave(namePtr, nameLen, partPtr, partLen uint32, version *int32) int32

//go:wasmimport adkhost artifact_load
func artifactLoad(namePtr, nameLen uint32, version int32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost artifact_list
func artifactList(retPtr, retLen *uint32) int32

//go:wasmimport adkhost log
func logLine(level int32, msgPtr, msgLen uint32) int32

//go:wasmimport adkhost invocation_info
func invocationInfo(retPtr, retLen *uint32) int32

//go:wasmimport adkhost config_get
func configGet(keyPtr, keyLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost http_request
func httpRequest(reqPtr, reqLen uint32, retPtr, retLen *uint32) int32

// ---- The module ----

var describe = abi.Describe{
	Name:    "goguest",
	Version: "1.0.0",
	Tools: []abi.ToolDecl{
		{Name: "echo", Description: "Returns its arguments.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "garbage", Description: "Answers with bytes that are not JSON."},
		{Name: "badfield", Description: "Answers with a field the ABI does not define."},
		{Name: "panic", Description: "Panics."},
		{Name: "loop", Description: "Never returns."},
		{Name: "bomb", Description: "Allocates until memory runs out."},
		{Name: "huge", Description: "Answers with args.bytes bytes of text."},
		{Name: "barrier", Description: "Reads the state key \"barrier\"."},
		{Name: "host", Description: "Calls the host functions."},
		{Name: "http", Description: "Fetches args.url."},
		{Name: "readfile", Description: "Reads args.path, then tries to write beside it."},
	},
	Hooks:        []abi.Hook{abi.HookToolCall, abi.HookBeforeModel},
	Capabilities: []abi.Capability{abi.CapState, abi.CapActions, abi.CapArtifacts, abi.CapConfig, abi.CapHTTP, abi.CapFS},
}

//go:wasmexport adkhost_describe
func describeExport(p, n uint32) uint64 {
	b, _ := abi.Encode(&describe)
	return output(b)
}

//go:wasmexport adkhost_before_model
func beforeModel(p, n uint32) uint64 {
	var in abi.BeforeModelInput
	if err := json.Unmarshal(view(p, n), &in); err != nil {
		return fail(err.Error())
	}
	req := in.Request
	req.Model = strings.ToUpper(req.Model)
	b, _ := abi.Encode(&abi.ModelOutput{Request: req})
	return output(b)
}

func fail(msg string) uint64 {
	b, _ := abi.Encode(&abi.ToolCallOutput{Error: msg})
	return output(b)
}

func result(v any) uint64 {
	b, err := abi.Encode(&abi.ToolCallOutput{Result: v})
	if err != nil {
		return fail(err.Error())
	}
	return output(b)
}

var sink [][]byte

//go:wasmexport adkhost_tool_call
func toolCall(p, n uint32) uint64 {
	var in abi.ToolCallInput
	if err := json.Unmarshal(view(p, n), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	switch in.Tool {
	case "echo":
		return result(in.Args)
	case "garbage":
		return output([]byte("{not json"))
	case "badfield":
		return output([]byte(`{"abiVersion":1,"result":{},"surprise":true}`))
	case "panic":
		panic("boom")
	case "loop":
		for {
		}
	case "bomb":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "huge":
		size, _ := in.Args["bytes"].(float64)
		return result(map[string]any{"text": strings.Repeat("x", int(size))})
	case "barrier":
		var rp, rl uint32
		kp, kl := ptr("barrier")
		st := stateGet(kp, kl, &rp, &rl)
		return result(map[string]any{"status": st, "value": string(take(rp, rl))})
	case "host":
		return hostTour(in)
	case "http":
		u, _ := in.Args["url"].(string)
		req, _ := json.Marshal(abi.HTTPRequest{Method: "GET", URL: u})
		var rp, rl uint32
		qp, ql := bptr(req)
		st := httpRequest(qp, ql, &rp, &rl)
		if st != 0 {
			return result(map[string]any{"status": abi.Status(st).String()})
		}
		var resp abi.HTTPResponse
		if err := json.Unmarshal(take(rp, rl), &resp); err != nil {
			return fail(err.Error())
		}
		return result(map[string]any{"status": "OK", "code": resp.Status, "body": string(resp.Body)})
	case "readfile":
		path, _ := in.Args["path"].(string)
		out := map[string]any{}
		if b, err := os.ReadFile(path); err != nil {
			out["readError"] = err.Error()
		} else {
			out["content"] = string(b)
		}
		if err := os.WriteFile(path+".new", []byte("x"), 0o644); err != nil {
			out["writeError"] = err.Error()
		}
		return result(out)
	}
	return fail("unknown tool " + in.Tool)
}

// hostTour calls each host function the test grants and reports what it
// saw.
func hostTour(in abi.ToolCallInput) uint64 {
	out := map[string]any{}
	kp, kl := ptr("temp:count")
	vp, vl := ptr("41")
	out["set"] = abi.Status(stateSet(kp, kl, vp, vl)).String()
	var rp, rl uint32
	if st := stateGet(kp, kl, &rp, &rl); st == 0 {
		out["get"] = string(take(rp, rl))
	} else {
		out["get"] = abi.Status(st).String()
	}
	mp, ml := ptr("missing")
	out["missing"] = abi.Status(stateGet(mp, ml, &rp, &rl)).String()
	bp, bl := ptr("")
	out["emptyKey"] = abi.Status(stateGet(bp, bl, &rp, &rl)).String()
	out["badPointer"] = abi.Status(stateGet(0xfffffff0, 8, &rp, &rl)).String()
	cp, cl := ptr("greeting")
	if st := configGet(cp, cl, &rp, &rl); st == 0 {
		out["config"] = string(take(rp, rl))
	} else {
		out["config"] = abi.Status(st).String()
	}
	lp, ll := ptr("hello from the guest")
	out["log"] = abi.Status(logLine(0, lp, ll)).String()
	if st := invocationInfo(&rp, &rl); st == 0 {
		var info abi.InvocationInfo
		json.Unmarshal(take(rp, rl), &info)
		out["invocation"] = info.InvocationID
		out["contextMatches"] = info.InvocationID == in.Context.InvocationID
	} else {
		out["invocation"] = abi.Status(st).String()
	}
	dp, dl := ptr("user:gone")
	out["delete"] = abi.Status(stateDelete(dp, dl)).String()
	ap, al := ptr("helper")
	out["transfer"] = abi.Status(transferToAgent(ap, al)).String()
	out["escalate"] = abi.Status(escalate()).String()
	out["skip"] = abi.Status(skipSummarization()).String()
	hp, hl := ptr("spend 3 credits?")
	pp, pl := ptr(`{"credits":3}`)
	out["confirm"] = abi.Status(requestConfirmation(hp, hl, pp, pl)).String()
	np, nl := ptr("notes.txt")
	part, _ := json.Marshal(abi.Part{Text: "saved text"})
	sp, sl := bptr(part)
	var version int32
	if st := artifactSave(np, nl, sp, sl, &version); st == 0 {
		out["save"] = float64(version)
	} else {
		out["save"] = abi.Status(st).String()
	}
	if st := artifactLoad(np, nl, -1, &rp, &rl); st == 0 {
		var p abi.Part
		json.Unmarshal(take(rp, rl), &p)
		out["load"] = p.Text
	} else {
		out["load"] = abi.Status(st).String()
	}
	if st := artifactList(&rp, &rl); st == 0 {
		out["list"] = string(take(rp, rl))
	} else {
		out["list"] = abi.Status(st).String()
	}
	return result(out)
}
