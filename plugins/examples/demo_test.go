package examples_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
)

// demoModules resolves the demo app's module names to the built examples.
type demoModules map[string][]byte

func (d demoModules) ResolveModule(_ context.Context, ref string) ([]byte, string, error) {
	wasm, ok := d[ref]
	if !ok {
		return nil, "", fmt.Errorf("no module %q", ref)
	}
	return wasm, "demo-" + ref, nil
}

// TestDemoApp loads the app of `make demo` (demo/) as the server would and
// runs its conversation offline: the model calls the Go weather module, then
// the Python what_to_wear module with its forecast, and the C guardrail
// refuses a request with BLOCK before the model sees it.
func TestDemoApp(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	for _, name := range []string{"root_agent.yaml", "scripted_model.yaml"} {
		b, err := os.ReadFile(filepath.Join("demo", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	ctx := context.Background()
	app, err := appdef.Load(ctx, appdef.Source{Name: "weather_assistant", Files: files}, appdef.Env{
		Runtime: runtime(t),
		Modules: demoModules{"weather": build(t, "weather"), "wear-py": build(t, "wear-py"), "guardrail-c": build(t, "guardrail-c")},
		Models:  &appdef.ModelRegistry{Scripted: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	svc := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: app.Name, Agent: app.Root, Plugins: app.Plugins, Sessions: svc, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(text string) []string {
		var out []string
		for ev, err := range r.Run(ctx, "u", "s", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: text}}}, engine.RunConfig{}) {
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			for _, p := range ev.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					out = append(out, fmt.Sprintf("call %s(%v)", p.FunctionCall.Name, p.FunctionCall.Args["city"]))
				case p.FunctionResponse != nil:
					out = append(out, fmt.Sprintf("result %v", p.FunctionResponse.Response["condition"]))
				default:
					out = append(out, "text "+p.Text)
				}
			}
		}
		return out
	}
	got := strings.Join(turn("What's the weather in Paris?"), " | ")
	if want := "call get_weather(Paris) | result sunny | call what_to_wear(Paris) | result sunny | text It is sunny in Paris, 7 °C: wear a warm coat."; got != want {
		t.Errorf("weather turn:\n got %s\nwant %s", got, want)
	}
	got = strings.Join(turn("Please BLOCK this request."), " | ")
	if !strings.HasPrefix(got, "text ") || strings.Contains(got, "call ") || strings.Contains(got, "Ask me about") {
		t.Errorf("blocked turn: %s, want the guardrail's refusal only", got)
	}
}
