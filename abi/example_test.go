package abi_test

import (
	"errors"
	"fmt"

	"github.com/adkhost/adkhost/abi"
)

// The host encodes a hook's input; the guest answers; the host decodes the
// answer strictly.
func Example() {
	in, _ := abi.Encode(&abi.ToolCallInput{
		Context: abi.InvocationInfo{AppName: "weather_app", UserID: "u1", SessionID: "s1", InvocationID: "e-42", AgentName: "root"},
		Tool:    "get_weather",
		Args:    map[string]any{"city": "Paris"},
	})
	fmt.Println(string(in))

	guestAnswer := []byte(`{"abiVersion":1,"result":{"temperature":21}}`)
	var out abi.ToolCallOutput
	if err := abi.Decode(guestAnswer, &out, 0); err != nil {
		fmt.Println(err)
	}
	fmt.Println(out.Result)

	err := abi.Decode([]byte(`{"abiVersion":1,"result":{},"extra":1}`), &out, 0)
	fmt.Println(errors.Is(err, abi.ErrMalformed), err)
	// Output:
	// {"abiVersion":1,"context":{"appName":"weather_app","userId":"u1","sessionId":"s1","invocationId":"e-42","agentName":"root"},"tool":"get_weather","args":{"city":"Paris"}}
	// map[temperature:21]
	// true abi: malformed message: json: unknown field "extra"
}

// A module declares itself with a Describe message.
func ExampleDescribe_Validate() {
	d := abi.Describe{
		Header: abi.Header{ABIVersion: abi.Version},
		Name:   "weather",
		Tools:  []abi.ToolDecl{{Name: "get_weather", Description: "Current weather for a city."}},
		Hooks:  []abi.Hook{abi.HookToolCall, abi.HookAfterModel},
	}
	fmt.Println(d.Validate())
	d.Hooks = []abi.Hook{abi.HookAfterModel}
	fmt.Println(d.Validate())
	// Output:
	// <nil>
	// abi: invalid describe message: declares 1 tools but not the "tool_call" hook that runs them
}
