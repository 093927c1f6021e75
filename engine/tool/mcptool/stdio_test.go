package mcptool

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServerEnv makes the test binary a stdio MCP server (runStdioServer)
// instead of running the tests.
const stdioServerEnv = "MCPTOOL_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) != "" {
		runStdioServer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runStdioServer serves one tool, "repeat", whose text result is n x's.
func runStdioServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "repeat", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ N int }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// TestStdioResponseBound: a stdio server's message longer than
// MaxResponseBytes fails the call with an error naming the bound (the
// SDK alone lets 16 MiB through), and the next call gets a new session;
// shorter ones pass.
func TestStdioResponseBound(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ts := newToolset(t, Config{Name: "stdio", MaxResponseBytes: 64 << 10,
		Stdio: &StdioServer{Command: exe, Env: map[string]string{stdioServerEnv: "1"}}})
	tools := list(t, ts, "i")
	repeat := tools["repeat"]
	if repeat == nil {
		t.Fatalf("tools: %v", tools)
	}
	if got := jsonOf(call(t, repeat, map[string]any{"n": 1000})); !strings.Contains(got, strings.Repeat("x", 1000)) {
		t.Errorf("small result: %.200s", got)
	}
	got := call(t, repeat, map[string]any{"n": 1 << 20})
	if e, _ := got["error"].(string); !strings.Contains(e, "longer than 65536 bytes") {
		t.Errorf("1 MiB result: %.300s", jsonOf(got))
	}
	if got := jsonOf(call(t, repeat, map[string]any{"n": 10})); !strings.Contains(got, `"text":"xxxxxxxxxx"`) {
		t.Errorf("after a refused result: %.200s", got)
	}
}

// TestLineLimitReader: a line of exactly max bytes passes, whatever the
// reads' sizes; one byte more fails, and so does every read after.
func TestLineLimitReader(t *testing.T) {
	const max = 10
	ok := strings.Repeat("a", max) + "\n" + strings.Repeat("b", max) + "\n" + "c"
	for _, r := range []io.Reader{strings.NewReader(ok), iotest.OneByteReader(strings.NewReader(ok))} {
		got, err := io.ReadAll(&lineLimitReader{r: r, max: max})
		if err != nil || string(got) != ok {
			t.Errorf("lines of %d bytes: %q, %v", max, got, err)
		}
	}
	long := "short\n" + strings.Repeat("a", max+1) + "\n"
	for _, r := range []io.Reader{strings.NewReader(long), iotest.OneByteReader(strings.NewReader(long))} {
		l := &lineLimitReader{r: r, max: max}
		if _, err := io.ReadAll(l); err == nil || !strings.Contains(err.Error(), "longer than 10 bytes") {
			t.Errorf("a line of %d bytes: %v", max+1, err)
		}
		if _, err := l.Read(make([]byte, 8)); err == nil {
			t.Error("a read after the bound passed")
		}
	}
}
