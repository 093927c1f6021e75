package examples_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// probeTS: outside CI, the TypeScript example needs the runtime built
// already (make ts-runtime, which also needs the Python runtime's zig);
// under CI=true the example's make target builds it.
func probeTS() ([]byte, error) {
	if os.Getenv("CI") == "true" {
		return nil, nil
	}
	_, err := modbuild.FindTSRuntime("")
	return nil, err
}

// TestWeatherTS: the TypeScript tool declares what its tool() call says,
// writes state through its ToolContext from an async function, and its
// thrown Error fails the run with the tool's message.
func TestWeatherTS(t *testing.T) {
	t.Parallel()
	m := example(t, "weather-ts", host.ModuleConfig{Grants: sandbox.Grants{State: true}})
	if d := m.Describe(); d.Name != "weather-ts" || len(d.Capabilities) != 1 || d.Capabilities[0] != "state" {
		t.Errorf("describe: %+v", d)
	}
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
	const params = `{"properties":{"city":{"description":"the city, e.g. Paris.","type":"string"},"days":{"default":1,"description":"how many days ahead.","type":"integer"}},"required":["city"],"type":"object"}`
	if !strings.Contains(string(decl), `"name":"get_weather"`) || !strings.Contains(string(decl), params) ||
		!strings.Contains(string(decl), `"description":"Returns the forecast for a city."`) {
		t.Errorf("tool declarations %s\nlack %s", decl, params)
	}
	var err error
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "and nowhere?"}}}
	for _, err = range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "Error: city must not be empty") {
		t.Errorf("empty city: run error %v, want the tool's Error", err)
	}
}
