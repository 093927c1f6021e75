// Package testkit holds what the tests of several packages share: World,
// one engine runner over the scripted model, in which host's and the
// examples' tests run a module's tools and callbacks end to end. It is for
// tests only.
package testkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
)

// World is one runner, with an LlmAgent named "root" on the scripted
// model, over fresh in-memory session and artifact services. Its turns are
// user "u"'s in session "s1".
type World struct {
	T        *testing.T
	Runner   *engine.Runner
	Sessions *session.InMemoryService
	Model    *scripted.Model
	// Memory is the runner's memory service, nil unless Options gave one.
	Memory memory.Service
}

// Options add services to a World's runner.
type Options struct {
	// Memory is the runner's memory service; nil for none, as NewWorld has.
	Memory memory.Service
}

// NewWorld builds a World whose root agent is cfg (its name and model set
// by NewWorld) answering with script.
func NewWorld(t *testing.T, cfg engine.LlmAgentConfig, plugins []callbacks.Plugin, script ...scripted.Step) *World {
	t.Helper()
	return NewWorldWith(t, Options{}, cfg, plugins, script...)
}

// NewWorldWith is NewWorld with the services of opts.
func NewWorldWith(t *testing.T, opts Options, cfg engine.LlmAgentConfig, plugins []callbacks.Plugin, script ...scripted.Step) *World {
	t.Helper()
	w := &World{T: t, Sessions: session.NewInMemoryService(), Model: scripted.FromSteps("scripted-model", script...), Memory: opts.Memory}
	cfg.Name = "root"
	cfg.Model = w.Model
	a, err := engine.NewLlmAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Runner, err = engine.NewRunner(engine.RunnerConfig{
		AppName: "app", Agent: a, Sessions: w.Sessions, Artifacts: artifact.NewInMemoryService(),
		Plugins: plugins, AutoCreateSession: true, Memory: opts.Memory,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Turn runs one user message and returns the events and the run's error.
func (w *World) Turn(text string) ([]*session.Event, error) {
	var evs []*session.Event
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: text}}}
	for ev, err := range w.Runner.Run(context.Background(), "u", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// MustTurn is Turn for a turn that must succeed.
func (w *World) MustTurn(text string) []*session.Event {
	w.T.Helper()
	evs, err := w.Turn(text)
	if err != nil {
		w.T.Fatalf("turn %q: %v\nevents: %s", text, err, Views(evs))
	}
	return evs
}

// Session returns the session as stored.
func (w *World) Session() *session.Session {
	w.T.Helper()
	s, err := w.Sessions.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		w.T.Fatal(err)
	}
	return s
}

// Requests is the JSON of the requests the model received.
func (w *World) Requests() string {
	b, _ := json.Marshal(w.Model.Requests())
	return string(b)
}

// Views are events' JSON, one a line, without what is random: ids and
// timestamps.
func Views(evs []*session.Event) string {
	var out []string
	for _, ev := range evs {
		b, _ := json.Marshal(ev)
		var m map[string]any
		json.Unmarshal(b, &m)
		delete(m, "id")
		delete(m, "invocationId")
		delete(m, "timestamp")
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// Reply is a model step answering text.
func Reply(text string) scripted.Step {
	return scripted.Step{Response: &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: text}}}}}
}

// Calls is a model step making function calls.
func Calls(fcs ...*genai.FunctionCall) scripted.Step {
	c := &genai.Content{Role: "model"}
	for _, fc := range fcs {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc})
	}
	return scripted.Step{Response: &model.Response{Content: c}}
}

// Call is a function call.
func Call(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

// TextOf is the text of an event's parts.
func TextOf(ev *session.Event) string {
	if ev == nil || ev.Content == nil {
		return ""
	}
	var s strings.Builder
	for _, p := range ev.Content.Parts {
		s.WriteString(p.Text)
	}
	return s.String()
}
