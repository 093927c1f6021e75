package guesttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// BeforeToolConfirmations calls the before_tool hook of a module (a
// callback or a plugin answering with what it sees of the user's
// confirmation of the call) without, then with, a confirmation
// {hint: "pay 5?", confirmed: true}, and returns the two results as JSON.
func BeforeToolConfirmations(t *testing.T, wasm []byte) string {
	t.Helper()
	ctx := context.Background()
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var results []map[string]any
	for _, conf := range []*abi.ToolConfirmation{nil, {Hint: "pay 5?", Confirmed: true}} {
		in := &abi.BeforeToolInput{Context: abi.InvocationInfo{AgentName: "root", FunctionCallID: "c1"},
			Tool: abi.ToolInfo{Name: "pay"}, Args: map[string]any{"amount": 5}, Confirmation: conf}
		out, err := sandbox.Invoke[abi.BeforeToolOutput](ctx, p, abi.HookBeforeTool, in, abi.UnavailableHost{})
		if err != nil || out.Error != "" {
			t.Fatalf("before_tool: %v %q", err, out.Error)
		}
		results = append(results, out.Result)
	}
	b, _ := json.Marshal(results)
	return string(b)
}
