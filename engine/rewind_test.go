package engine_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestRewindRestoresStateAndHidesLaterTurns(t *testing.T) {
	set, err := tool.NewFunction(tool.FunctionConfig{
		Name: "set", Description: "Sets state.",
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			for k, v := range args {
				ctx.State().Set(k, v)
			}
			return map[string]any{"ok": true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New("m",
		calls(&genai.FunctionCall{Name: "set", Args: map[string]any{"k": "first", "user:u": "shared"}}), text("Set k."),
		calls(&genai.FunctionCall{Name: "set", Args: map[string]any{"k": "second", "j": "new"}}), text("Set k and j."),
		text("After the rewind."),
	)
	a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{set}})
	if err != nil {
		t.Fatal(err)
	}
	r, svc := mustRunner(t, a)
	if _, err := run(t, r, svc, "s", userText("one"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	second, err := run(t, r, svc, "s", userText("two"), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Rewind(ctx, "u", "s", second[0].InvocationID); err != nil {
		t.Fatal(err)
	}
	s, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	evs := s.Events()
	rw := evs[len(evs)-1]
	if rw.Author != "user" || rw.Actions.RewindBeforeInvocationID != second[0].InvocationID {
		t.Fatalf("rewind event = %s", jsonOf(rw))
	}
	if got := jsonOf(rw.Actions.StateDelta); got != `{"j":null,"k":"first"}` {
		t.Fatalf("rewind state delta = %s, want k back to its value and j removed (user: state untouched)", got)
	}
	if v, _ := s.StateValue("k"); v != "first" {
		t.Fatalf("state k = %v after rewind", v)
	}
	if v, _ := s.StateValue("user:u"); v != "shared" {
		t.Fatalf("user-scoped state changed by rewind: %v", v)
	}

	if _, err := run(t, r, svc, "s", userText("three"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	for _, c := range last.Contents {
		for _, p := range c.Parts {
			if p.Text == "two" || p.Text == "Set k and j." {
				t.Fatalf("the rewound turn is still sent to the model: %s", jsonOf(last.Contents))
			}
		}
	}
	if len(last.Contents) != 5 {
		t.Fatalf("request after rewind has %d contents, want 5 (turn one: 4, turn three: 1): %s", len(last.Contents), jsonOf(last.Contents))
	}

	err = r.Rewind(ctx, "u", "s", "e-missing")
	var nf *engine.InvocationNotFoundError
	if !errors.As(err, &nf) || err.Error() != "Invocation ID not found: e-missing" {
		t.Fatalf("rewind to an unknown invocation: %v", err)
	}
}

func TestRewindRestoresArtifacts(t *testing.T) {
	write, err := tool.NewFunction(tool.FunctionConfig{
		Name: "write", Description: "Saves artifacts.",
		Fn: func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
			for name, text := range args {
				if _, err := ctx.SaveArtifact(name, &genai.Part{Text: text.(string)}); err != nil {
					return nil, err
				}
			}
			return map[string]any{"ok": true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New("m",
		calls(&genai.FunctionCall{Name: "write", Args: map[string]any{"report.txt": "v0"}}), text("Saved."),
		calls(&genai.FunctionCall{Name: "write", Args: map[string]any{"report.txt": "v1", "new.txt": "n0", "user:prefs": "p"}}), text("Saved more."),
	)
	a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{write}})
	if err != nil {
		t.Fatal(err)
	}
	svc, arts := session.NewInMemoryService(), artifact.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: a, Sessions: svc, Artifacts: arts, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, r, svc, "s", userText("one"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	second, err := run(t, r, svc, "s", userText("two"), engine.RunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Rewind(ctx, "u", "s", second[0].InvocationID); err != nil {
		t.Fatal(err)
	}
	s, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	evs := s.Events()
	if got := jsonOf(evs[len(evs)-1].Actions.ArtifactDelta); got != `{"new.txt":1,"report.txt":2}` {
		t.Fatalf("rewind artifact delta = %s", got)
	}
	key := func(name string) artifact.Key {
		return artifact.Key{AppName: "app", UserID: "u", SessionID: "s", Name: name}
	}
	if p, err := arts.Load(ctx, key("report.txt"), artifact.Latest); err != nil || p.Text != "v0" {
		t.Fatalf("report.txt after rewind = %+v, %v; want v0 again", p, err)
	}
	if _, err := arts.Load(ctx, key("new.txt"), artifact.Latest); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("new.txt after rewind: err = %v, want ErrNotFound", err)
	}
	if p, err := arts.Load(ctx, key("user:prefs"), artifact.Latest); err != nil || p.Text != "p" {
		t.Fatalf("user:prefs after rewind = %+v, %v; user artifacts are not rewound", p, err)
	}
}
