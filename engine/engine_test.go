package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func text(s string) *model.Response {
	return &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: s}}}}
}

func calls(fcs ...*genai.FunctionCall) *model.Response {
	c := &genai.Content{Role: "model"}
	for _, fc := range fcs {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc})
	}
	return &model.Response{Content: c}
}

func userText(s string) *genai.Content {
	return &genai.Content{Role: "user", Parts: []*genai.Part{{Text: s}}}
}

// run runs one turn and returns the events and the error that ended it.
func run(t *testing.T, r *engine.Runner, sessions session.Service, sid string, msg *genai.Content, cfg engine.RunConfig) ([]*session.Event, error) {
	t.Helper()
	ctx := context.Background()
	if _, err := sessions.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: sid}); err != nil {
		if _, err := sessions.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: sid}); err != nil {
			t.Fatal(err)
		}
	}
	var evs []*session.Event
	for ev, err := range r.Run(ctx, "u", sid, msg, cfg) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func mustRunner(t *testing.T, root engine.Agent, plugins ...callbacks.Plugin) (*engine.Runner, session.Service) {
	t.Helper()
	svc := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: root, Sessions: svc, Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	return r, svc
}

func weatherTool(t *testing.T) tool.Tool {
	t.Helper()
	w, err := tool.NewFunction(tool.FunctionConfig{
		Name: "get_weather", Description: "Returns the weather.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			ctx.State().Set("last_city", args["city"])
			return map[string]any{"temp": 21}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestOneToolTurn(t *testing.T) {
	m := scripted.New("m", calls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}), text("21 in Paris."))
	a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: m, Instruction: "Be brief.", Tools: []tool.Tool{weatherTool(t)}})
	if err != nil {
		t.Fatal(err)
	}
	r, svc := mustRunner(t, a)
	evs, err := run(t, r, svc, "s1", userText("Weather in Paris?"), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3: %s", len(evs), jsonOf(evs))
	}
	fc := evs[0].FunctionCalls()
	if len(fc) != 1 || fc[0].ID == "" || fc[0].ID[:4] != "adk-" {
		t.Fatalf("call event: %s", jsonOf(evs[0]))
	}
	fr := evs[1].FunctionResponses()
	if len(fr) != 1 || fr[0].ID != fc[0].ID || jsonOf(fr[0].Response) != `{"temp":21}` || evs[1].Content.Role != "user" {
		t.Fatalf("response event: %s", jsonOf(evs[1]))
	}
	if got := evs[1].Actions.StateDelta["last_city"]; got != "Paris" {
		t.Fatalf("state delta = %v", evs[1].Actions.StateDelta)
	}
	if !evs[2].IsFinalResponse() || evs[2].Content.Parts[0].Text != "21 in Paris." {
		t.Fatalf("final event: %s", jsonOf(evs[2]))
	}
	for _, ev := range evs {
		if ev.InvocationID != evs[0].InvocationID || ev.InvocationID[:2] != "e-" || ev.Author != "assistant" {
			t.Fatalf("event identity: %s", jsonOf(ev))
		}
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests", len(reqs))
	}
	if got, want := reqs[0].SystemInstructionText(), "Be brief.\n\nYou are an agent. Your internal name is \"assistant\"."; got != want {
		t.Fatalf("system instruction = %q, want %q", got, want)
	}
	if got := jsonOf(reqs[1].Contents); got != `[{"parts":[{"text":"Weather in Paris?"}],"role":"user"},{"parts":[{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}],"role":"user"}]` {
		t.Fatalf("second request contents = %s", got)
	}
	s, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Events()); n != 4 {
		t.Fatalf("stored %d events, want 4 (user + 3)", n)
	}
	if v, _ := s.StateValue("last_city"); v != "Paris" {
		t.Fatalf("stored state last_city = %v", v)
	}
}
