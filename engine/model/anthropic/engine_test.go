package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/anthropic"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// TestAgentToolRoundTrip runs an LlmAgent on Claude (an httptest server
// speaking the Messages API) through a tool call: the agent's instruction
// becomes the system prompt, its tool a tool with an input schema, Claude's
// tool_use runs the Go tool, and the tool's result goes back as a
// tool_result under the same id in the second request.
func TestAgentToolRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	answers := []string{
		`{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"tool_use","usage":{"input_tokens":30,"output_tokens":9},
		  "content":[{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Rome"}}]}`,
		`{"id":"m2","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":50,"output_tokens":6},
		  "content":[{"type":"text","text":"Sunny in Rome."}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(data, &body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n >= len(answers) {
			w.WriteHeader(500)
			io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"no more answers"}}`)
			return
		}
		io.WriteString(w, answers[n])
	}))
	defer srv.Close()

	m, err := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5", APIKey: "k", BaseURL: srv.URL, HTTPClient: srv.Client(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	weather, err := tool.NewFunction(tool.FunctionConfig{
		Name: "get_weather", Description: "Gets the weather.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			return map[string]any{"city": args["city"], "sky": "sunny"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "forecaster", Model: m, Instruction: "Answer weather questions.", Tools: []tool.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: agent, Sessions: session.NewInMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for ev, err := range r.Run(context.Background(), "u", "s", genai.NewContentFromText("Weather in Rome?", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				switch {
				case p.Text != "":
					texts = append(texts, p.Text)
				case p.FunctionCall != nil:
					texts = append(texts, "call "+p.FunctionCall.ID)
				case p.FunctionResponse != nil:
					texts = append(texts, fmt.Sprintf("response %s %v", p.FunctionResponse.ID, p.FunctionResponse.Response))
				}
			}
		}
	}
	if got, want := strings.Join(texts, " | "), "call toolu_01 | response toolu_01 map[city:Rome sky:sunny] | Sunny in Rome."; got != want {
		t.Errorf("events: %s\nwant %s", got, want)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	system, _ := json.Marshal(bodies[0]["system"])
	if !strings.Contains(string(system), "Answer weather questions.") || !strings.Contains(string(system), `You are an agent. Your internal name is \"forecaster\".`) {
		t.Errorf("system = %s", system)
	}
	tools, _ := json.Marshal(bodies[0]["tools"])
	if want := `[{"description":"Gets the weather.","input_schema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather"}]`; string(tools) != want {
		t.Errorf("tools = %s\nwant %s", tools, want)
	}
	msgs, _ := json.Marshal(bodies[1]["messages"])
	if want := `[{"content":[{"text":"Weather in Rome?","type":"text"}],"role":"user"},` +
		`{"content":[{"id":"toolu_01","input":{"city":"Rome"},"name":"get_weather","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"{\"city\": \"Rome\", \"sky\": \"sunny\"}","type":"text"}],"is_error":false,"tool_use_id":"toolu_01","type":"tool_result"}],"role":"user"}]`; string(msgs) != want {
		t.Errorf("second request's messages:\n got %s\nwant %s", msgs, want)
	}
}
