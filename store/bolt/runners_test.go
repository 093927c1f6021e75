package bolt_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// gateModel answers each call with the text of the user message it sees
// last, after the test lets the call through, so a test can hold two runs
// between reading the session and storing the answer.
type gateModel struct {
	arrived chan string // the last user text of each call, on arrival
	release map[string]chan struct{}
}

func (m *gateModel) Name() string { return "gate" }

func (m *gateModel) GenerateContent(ctx context.Context, req *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		last := ""
		for _, c := range req.Contents {
			if c.Role == "user" && len(c.Parts) > 0 {
				last = c.Parts[0].Text
			}
		}
		m.arrived <- last
		select {
		case <-m.release[last]:
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
		yield(&model.Response{Content: genai.NewContentFromText("answer to "+last, "model")}, nil)
	}
}

// TestTwoRunnersOneSession runs two invocations on the same session at once,
// through two runners sharing one store. Run A reads the session and stores
// its user message; run B then does the same; A's answer is refused as
// stale (B appended since A read the session), B's is stored. Nothing is
// lost: both user messages and B's answer are stored, state keys from both
// are there, and A succeeds once it runs again.
func TestTwoRunnersOneSession(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	svc := db.Sessions()
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	m := &gateModel{arrived: make(chan string), release: map[string]chan struct{}{
		"from A": make(chan struct{}), "from B": make(chan struct{}), "A again": make(chan struct{}),
	}}
	newRunner := func() *engine.Runner {
		agent, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: m, OutputKey: "answer"})
		if err != nil {
			t.Fatal(err)
		}
		r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: agent, Sessions: svc})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	runnerA, runnerB := newRunner(), newRunner()
	run := func(r *engine.Runner, text string, delta map[string]any) <-chan error {
		done := make(chan error, 1)
		go func() {
			var err error
			for _, e := range r.Run(ctx, "u", "s", genai.NewContentFromText(text, "user"), engine.RunConfig{StateDelta: delta}) {
				if e != nil {
					err = e
				}
			}
			done <- err
		}()
		return done
	}

	doneA := run(runnerA, "from A", map[string]any{"a": 1})
	if got := <-m.arrived; got != "from A" {
		t.Fatalf("first model call saw %q", got)
	}
	doneB := run(runnerB, "from B", map[string]any{"b": 1})
	if got := <-m.arrived; got != "from B" {
		t.Fatalf("second model call saw %q", got)
	}
	close(m.release["from A"])
	errA := <-doneA
	if !errors.Is(errA, session.ErrStale) {
		t.Fatalf("run A: err = %v, want ErrStale (B appended after A read the session)", errA)
	}
	close(m.release["from B"])
	if err := <-doneB; err != nil {
		t.Fatalf("run B: %v", err)
	}

	g, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range g.Events() {
		if e.Content != nil && len(e.Content.Parts) > 0 {
			texts = append(texts, e.Content.Parts[0].Text)
		}
	}
	if want := []string{"from A", "from B", "answer to from B"}; !slices.Equal(texts, want) {
		t.Fatalf("stored events %q, want %q", texts, want)
	}
	st := g.State()
	if st["a"] == nil || st["b"] == nil || st["answer"] != "answer to from B" {
		t.Errorf("state %v: want a and b from both user messages and B's answer", st)
	}

	// A reloads (a new run reads the session afresh) and goes through.
	doneA = run(runnerA, "A again", nil)
	if got := <-m.arrived; got != "A again" {
		t.Fatalf("third model call saw %q", got)
	}
	close(m.release["A again"])
	if err := <-doneA; err != nil {
		t.Fatalf("run A again: %v", err)
	}
	g, err = svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Events()); n != 5 {
		t.Errorf("%d events at the end, want 5", n)
	}
	if g.State()["answer"] != "answer to A again" {
		t.Errorf("answer = %v", g.State()["answer"])
	}
}
