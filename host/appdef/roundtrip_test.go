package appdef_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
)

// weatherApp is a definition using every extension: a module's tool, its
// hook as a callback and as a plugin, settings with grants, limits and a
// user-state write permission, and a reactive scripted model.
func weatherApp(digest string) map[string][]byte {
	return files(
		"root_agent.yaml", `
# The weather app: google-adk's Agent Config plus adkhost's module entries.
name: assistant
model: scripted
description: Answers weather questions.
instruction: You help with the weather. Last city asked about was {user:last_city?}.
tools:
  - module: weather
    tool: get_weather
before_model_callbacks:
  - {module: weather, hook: before_model}
adkhost:
  plugins:
    - module: weather
  modules:
    weather:
      ref: weather@`+digest+`
      grants: {state: true}
      write_user_state: true
      limits: {timeout: 5s, max_instances: 4}
`,
		"scripted_model.yaml", `
name: weather-demo
rules:
  - when:
      user_matches: '(?i)weather in (?P<city>[a-z ]+)'
      instruction_contains: '[weather-guard]'
    respond:
      function_calls: [{name: get_weather, args: {city: '{{city}}'}}]
  - when: {function_response: get_weather}
    respond: {text: 'It is {{response.summary}} in {{response.city}}, {{response.high_c}} C.'}
  - respond: {text: 'You said: {{text}}'}
`)
}

func newRunner(t *testing.T, app *appdef.App) (*engine.Runner, *session.InMemoryService) {
	t.Helper()
	sessions := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{
		AppName: app.Name, Agent: app.Root, Plugins: app.Plugins, Sessions: sessions, AutoCreateSession: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, sessions
}

// say runs one turn and returns the final text and the authors and kinds
// of its events.
func say(ctx context.Context, r *engine.Runner, user, sess, text string) (string, []string, error) {
	var final string
	var trace []string
	msg := genai.NewContentFromText(text, genai.RoleUser)
	for ev, err := range r.Run(ctx, user, sess, msg, engine.RunConfig{}) {
		if err != nil {
			return final, trace, err
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				trace = append(trace, ev.Author+":call:"+p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				trace = append(trace, ev.Author+":response:"+p.FunctionResponse.Name)
			case p.Text != "":
				trace = append(trace, ev.Author+":text")
				final = p.Text
			}
		}
	}
	return final, trace, nil
}

func TestRoundTrip(t *testing.T) {
	e, mods := env(t)
	app := load(t, "weather_app", weatherApp(mods.digest()), e)
	if len(app.Modules) != 1 || app.Modules[mods.digest()] == nil {
		t.Fatalf("App.Modules = %v, want the weather module once, by digest", app.Modules)
	}
	if mods.n != 1 {
		t.Errorf("ResolveModule called %d times, want once for the three references", mods.n)
	}
	if len(app.Plugins) != 1 || app.Plugins[0].Name() != "weather" {
		t.Errorf("Plugins = %v, want the weather module", app.Plugins)
	}
	r, sessions := newRunner(t, app)
	ctx := context.Background()

	got, trace, err := say(ctx, r, "u1", "s1", "What's the weather in Paris")
	if err != nil {
		t.Fatal(err)
	}
	if want := "It is sunny in Paris, 21 C."; got != want {
		t.Errorf("answer = %q, want %q (trace %v)", got, want, trace)
	}
	wantTrace := []string{"assistant:call:get_weather", "assistant:response:get_weather", "assistant:text"}
	if fmt.Sprint(trace) != fmt.Sprint(wantTrace) {
		t.Errorf("events = %v, want %v", trace, wantTrace)
	}
	got, _, err = say(ctx, r, "u1", "s1", "thanks")
	if err != nil {
		t.Fatal(err)
	}
	if want := "You said: thanks"; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
	// The module's state write went through its grants: user scope.
	s, err := sessions.Get(ctx, &session.GetRequest{AppName: "weather_app", UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.StateValue("user:last_city"); v != "Paris" {
		t.Errorf("user:last_city = %v, want Paris", v)
	}
}

// TestRoundTripConcurrent runs many sessions at once on one app: the
// reactive model answers each by its own turn, and the module's pool
// serves them all.
func TestRoundTripConcurrent(t *testing.T) {
	e, mods := env(t)
	app := load(t, "weather_app_concurrent", weatherApp(mods.digest()), e)
	r, _ := newRunner(t, app)
	cities := []string{"Paris", "Oslo", "Lima", "Rome", "Kyoto", "Quito", "Accra", "Perth"}
	var wg sync.WaitGroup
	errs := make(chan error, len(cities)*2)
	for i, city := range cities {
		for j := range 2 {
			wg.Go(func() {
				sess := fmt.Sprintf("s-%d-%d", i, j)
				got, _, err := say(context.Background(), r, "u", sess, "weather in "+city)
				if err != nil {
					errs <- err
					return
				}
				if want := "It is sunny in " + city + ", 21 C."; got != want {
					errs <- fmt.Errorf("session %s: answer %q, want %q", sess, got, want)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRoundTripWorkflow builds a google-adk workflow from several files: a
// sequential pipeline whose second step is a loop ended by exit_loop.
func TestRoundTripWorkflow(t *testing.T) {
	fs := files(
		"root_agent.yaml", `
agent_class: SequentialAgent
name: pipeline
description: Drafts, then reviews until done.
sub_agents:
  - config_path: agents/writer.yaml
  - config_path: agents/review_loop.yaml
`,
		"agents/writer.yaml", `
name: writer
model: scripted/agents/script.yaml
instruction: Write a haiku about {topic?}.
output_key: draft
`,
		"agents/review_loop.yaml", `
agent_class: LoopAgent
name: review_loop
max_iterations: 3
sub_agents:
  - config_path: critic.yaml
`,
		"agents/critic.yaml", `
name: critic
model: scripted/agents/script.yaml
instruction: 'Critique this draft: {draft}'
include_contents: none
tools:
  - name: exit_loop
`,
		"agents/script.yaml", `
rules:
  - when: {instruction_contains: Write a haiku}
    respond: {text: quiet pond}
  - when: {instruction_contains: 'Critique this draft: quiet pond'}
    respond: {function_calls: [{name: exit_loop}]}
`)
	app := load(t, "workflow", fs, noModules())
	r, sessions := newRunner(t, app)
	ctx := context.Background()
	_, trace, err := say(ctx, r, "u", "s", "go")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"writer:text", "critic:call:exit_loop", "critic:response:exit_loop"}
	if fmt.Sprint(trace) != fmt.Sprint(want) {
		t.Errorf("events = %v, want %v (the loop ends at its first exit_loop)", trace, want)
	}
	s, err := sessions.Get(ctx, &session.GetRequest{AppName: "workflow", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.StateValue("draft"); v != "quiet pond" {
		t.Errorf("draft = %v, want the writer's output", v)
	}
	loop, ok := app.Root.Info().SubAgents[1].(*engine.LoopAgent)
	if !ok || loop.MaxIterations == nil || *loop.MaxIterations != 3 {
		t.Errorf("second step = %#v, want a LoopAgent of 3 iterations", app.Root.Info().SubAgents[1])
	}
	if !strings.HasPrefix(app.Root.Info().Description, "Drafts") {
		t.Errorf("description = %q", app.Root.Info().Description)
	}
}

// TestREADMEExample loads the complete example of README.md, so that it
// stays true, and runs a turn of it.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, _ := strings.Cut(string(readme), "## A complete example")
	fs := map[string][]byte{}
	for _, name := range []string{"root_agent.yaml", "agents/small_talk.yaml", "scripted_model.yaml"} {
		_, rest, ok := strings.Cut(example, "`"+name+"`")
		_, rest, ok2 := strings.Cut(rest, "```yaml\n")
		body, _, ok3 := strings.Cut(rest, "```")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("README example has no block for %s", name)
		}
		fs[name] = []byte(body)
	}
	e, mods := env(t)
	fs["root_agent.yaml"] = []byte(strings.Replace(string(fs["root_agent.yaml"]), "sha256:0f3c…", mods.digest(), 1))
	app := load(t, "readme_app", fs, e)
	r, _ := newRunner(t, app)
	got, _, err := say(context.Background(), r, "u", "s", "weather in Lima")
	if err != nil {
		t.Fatal(err)
	}
	if want := "It is sunny in Lima."; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
}
