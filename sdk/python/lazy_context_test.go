package python_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
)

// TestLazyContext: the runtime cuts a tool call's "context" out of its
// input and the tool's Context decodes it when first read, so a tool that
// never reads it never pays for it; a tool that does sees what the host
// sent, wherever the member is and however its strings are escaped. Input
// the cut does not expect (an escaped key, two "context" members) is
// decoded whole, as json.loads does.
func TestLazyContext(t *testing.T) {
	ctx := context.Background()
	p := toolPool(t, "tests/lazy_context.py")

	host, err := abi.AppendEncode(nil, &abi.ToolCallInput{
		Context: abi.InvocationInfo{AgentName: "root", FunctionCallID: "c1",
			UserContent: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "hi"}}}},
		Tool: "info", Args: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	const c = `{"agentName":"r\"o}]ot","functionCallId":"c\\2","userContent":{"role":"user","parts":[{"text":"{[\"é\"]}"}]}}`
	for _, tc := range []struct{ name, in, want string }{
		{"as the host sends it", string(host), `{"agent":"root","call":"c1","text":"hi","undecoded":true}`},
		{"first member", `{"context":` + c + `,"tool":"info","args":{}}`, `{"agent":"r\"o}]ot","call":"c\\2","text":"{[\"é\"]}","undecoded":true}`},
		{"last member, with whitespace", "{ \"tool\" : \"info\" ,\n \"args\" : { } , \"context\" :\t" + c + " }\n", `{"agent":"r\"o}]ot","call":"c\\2","text":"{[\"é\"]}","undecoded":true}`},
		{"null", `{"tool":"info","context":null,"args":{}}`, `{"agent":null,"call":null,"text":null,"undecoded":true}`},
		{"escaped key", `{"tool":"info","\u0063ontext":{"agentName":"a"},"args":{}}`, `{"agent":"a","call":null,"text":null,"undecoded":false}`},
		{"twice", `{"context":{"agentName":"a"},"tool":"info","context":{"agentName":"b"}}`, `{"agent":"b","call":null,"text":null,"undecoded":false}`},
		{"no context", `{"tool":"info","args":{}}`, `{"agent":null,"call":null,"text":null,"undecoded":false}`},
	} {
		raw, err := p.Call(ctx, abi.HookToolCall, []byte(tc.in), abi.UnavailableHost{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out struct {
			Error  string          `json:"error"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
			t.Fatalf("%s: %s (%v)", tc.name, raw, err)
		}
		if got := strings.ReplaceAll(string(out.Result), `\u00e9`, "é"); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
