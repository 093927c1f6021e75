//go:build wasip1

// Command extism-greeter is an example adkhost module built with the
// Extism Go PDK (github.com/extism/go-pdk) instead of an adkhost SDK: the
// host sees that it imports from extism:host/env and runs it on the Extism
// transport (ABI.md §5). It exports the ABI's names (the version marker,
// adkhost_describe, adkhost_tool_call) with Extism's calling convention:
// JSON messages come in through pdk.Input and go out through pdk.Output,
// and host functions are JSON HostCalls to extism:host/user adkhost_host.
//
// Its tool, greet(name), answers {"greeting": "Hello, <name>!"}, counts the
// greetings of the user in state (user:greetings, capability "state") and
// logs each one. Build it in this directory (a module of its own) with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o extism-greeter.wasm .
package main

import (
	"encoding/json"
	"strings"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport adkhost_abi_version_1
func abiVersion1() {}

//go:wasmimport extism:host/user adkhost_host
func adkhostHost(request uint64) uint64

// hostReply is a HostReply: a §10 status and, on OK, the value.
type hostReply struct {
	Status int             `json:"status"`
	Value  json.RawMessage `json:"value"`
}

// host makes one host call: the request and the reply are JSON in Extism
// memory blocks; the reply is ours to free.
func host(call map[string]any) hostReply {
	call["abiVersion"] = 1
	b, _ := json.Marshal(call)
	req := pdk.AllocateBytes(b)
	defer req.Free()
	mem := pdk.FindMemory(adkhostHost(req.Offset()))
	defer mem.Free()
	var r hostReply
	if err := json.Unmarshal(mem.ReadBytes(), &r); err != nil {
		r.Status = 7 // FAILED: an unreadable reply
	}
	return r
}

const describe = `{"abiVersion":1,"name":"extism-greeter","version":"1.0.0",` +
	`"tools":[{"name":"greet","description":"Greets someone by name.",` +
	`"parameters":{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}},"required":["name"]}}],` +
	`"hooks":["tool_call"],"capabilities":["state"]}`

//go:wasmexport adkhost_describe
func describeExport() int32 {
	pdk.OutputString(describe)
	return 0
}

// toolCallInput is the part of a ToolCallInput this tool reads; the rest
// is ignored, as ABI.md §6 asks of guests.
type toolCallInput struct {
	Tool string `json:"tool"`
	Args struct {
		Name string `json:"name"`
	} `json:"args"`
}

func output(v map[string]any) int32 {
	v["abiVersion"] = 1
	b, _ := json.Marshal(v)
	pdk.Output(b)
	return 0
}

//go:wasmexport adkhost_tool_call
func toolCall() int32 {
	var in toolCallInput
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err) // an Extism error: the call fails with its message
		return 1
	}
	name := strings.TrimSpace(in.Args.Name)
	if in.Tool != "greet" || name == "" {
		// A portable failure (either transport): an output with "error".
		return output(map[string]any{"error": "greet needs a non-empty name"})
	}
	count := 0
	if r := host(map[string]any{"op": "state_get", "key": "user:greetings"}); r.Status == 0 {
		json.Unmarshal(r.Value, &count)
	}
	count++
	if r := host(map[string]any{"op": "state_set", "key": "user:greetings", "value": count}); r.Status != 0 {
		return output(map[string]any{"error": "state_set failed with status " + itoa(r.Status)})
	}
	host(map[string]any{"op": "log", "level": 0, "message": "extism-greeter: greeted " + name})
	return output(map[string]any{"result": map[string]any{"greeting": "Hello, " + name + "!", "greetings": count}})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
