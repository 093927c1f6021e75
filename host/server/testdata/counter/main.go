// Command counter is the test guest of the MCP server tests: tools that use
// session state and artifacts, fail, or never return, and a before_tool
// callback that refuses large additions, so the tests can see that a tool
// called over MCP gets its session, its grants, its limits and the app's
// callbacks.
package main

import (
	"errors"
	"fmt"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

func main() {}

func init() {
	adkhost.Module("counter", "1.0.0", abi.CapState, abi.CapArtifacts)
	adkhost.Tool("add", "Adds n to the session's counter and returns the new total.", add)
	adkhost.Tool("note", "Saves text as the artifact note.txt and returns its version.", note)
	adkhost.Tool("fail", "Always fails with the given message.", fail)
	adkhost.Tool("spin", "Loops forever (the sandbox's time limit stops it).", spin)
	adkhost.BeforeTool(limitAdd)
}

// limitAdd answers for add instead of the tool when n is over 1000.
func limitAdd(ctx adkhost.ToolContext, args map[string]any) (map[string]any, error) {
	if n, _ := args["n"].(float64); ctx.Tool.Name == "add" && n > 1000 {
		return map[string]any{"refused": "n over 1000"}, nil
	}
	return nil, nil
}

type addArgs struct {
	N int `json:"n" jsonschema:"how much to add"`
}

type total struct {
	Total int `json:"total"`
}

func add(ctx adkhost.ToolContext, args addArgs) (total, error) {
	var n int
	if err := ctx.State().Get("count", &n); err != nil && !errors.Is(err, abi.StatusNotFound) {
		return total{}, err
	}
	n += args.N
	if err := ctx.State().Set("count", n); err != nil {
		return total{}, err
	}
	return total{Total: n}, nil
}

type noteArgs struct {
	Text string `json:"text"`
}

func note(ctx adkhost.ToolContext, args noteArgs) (map[string]any, error) {
	v, err := ctx.Artifacts().Save("note.txt", &abi.Part{Text: args.Text})
	if err != nil {
		return nil, err
	}
	return map[string]any{"version": v}, nil
}

type failArgs struct {
	Message string `json:"message"`
}

func fail(_ adkhost.ToolContext, args failArgs) (map[string]any, error) {
	return nil, fmt.Errorf("failed as asked: %s", args.Message)
}

type none struct{}

func spin(adkhost.ToolContext, none) (map[string]any, error) {
	for i := 0; ; i++ {
		if i < 0 {
			return nil, nil
		}
	}
}
