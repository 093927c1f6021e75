//go:build wasip1

// Command extismguest is an Extism-transport test guest built with the
// Extism Go PDK: the same export names and JSON as a native guest, with the
// PDK's input and output, and the adkhost_host host function for host calls.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport adkhost_abi_version_1
func abiVersion1() {}

//go:wasmimport extism:host/user adkhost_host
func adkhostHost(offset uint64) uint64

// host runs one host call: the request and reply are JSON in Extism memory.
func host(call map[string]any) map[string]any {
	call["abiVersion"] = 1
	b, _ := json.Marshal(call)
	mem := pdk.AllocateBytes(b)
	defer mem.Free()
	reply := pdk.FindMemory(adkhostHost(mem.Offset()))
	defer reply.Free()
	var out map[string]any
	json.Unmarshal(reply.ReadBytes(), &out)
	return out
}

const describe = `{"abiVersion":1,"name":"extismguest","tools":[
 {"name":"echo","description":"Returns its arguments and what the host said.","parameters":{"type":"object"}},
 {"name":"loop","description":"Never returns."},
 {"name":"fail","description":"Reports an Extism error."},
 {"name":"host","description":"Makes the host calls in args.calls and returns the replies."}],
 "hooks":["tool_call"],"capabilities":["state","actions","artifacts","config","memory"]}`

//go:wasmexport adkhost_describe
func describeExport() int32 {
	pdk.OutputString(describe)
	return 0
}

type toolCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

//go:wasmexport adkhost_tool_call
func toolCallExport() int32 {
	var in toolCall
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(err)
		return 1
	}
	switch in.Tool {
	case "echo":
		greeting, _ := pdk.GetConfig("greeting")
		out := map[string]any{
			"abiVersion": 1,
			"result": map[string]any{
				"args":      in.Args,
				"state":     host(map[string]any{"op": "state_get", "key": "who"}),
				"config":    host(map[string]any{"op": "config_get", "key": "greeting"}),
				"pdkConfig": greeting,
			},
		}
		b, _ := json.Marshal(out)
		pdk.Output(b)
		return 0
	case "host":
		calls, _ := in.Args["calls"].([]any)
		replies := []any{}
		for _, c := range calls {
			call, _ := c.(map[string]any)
			replies = append(replies, host(call))
		}
		b, _ := json.Marshal(map[string]any{"abiVersion": 1, "result": map[string]any{"replies": replies}})
		pdk.Output(b)
		return 0
	case "loop":
		for {
		}
	case "fail":
		pdk.SetErrorString("the guest says no")
		return 1
	}
	pdk.SetErrorString("unknown tool " + in.Tool)
	return 1
}
