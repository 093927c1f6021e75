package bench

// ParallelAgent fan-out (issue 6): 8 LlmAgents under a ParallelAgent, each
// calling one tool, against a model that takes modelLatency per call. The
// figure is the wall time of the whole fan-out over the wall time of the
// slowest branch run alone: how close concurrent branches come to the
// ideal of 1.

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

const (
	parallelBranches = 8
	modelLatency     = 10 * time.Millisecond
)

// latencyModel answers like a remote model: after modelLatency, a call of
// the branch's tool, then, once the response is in, a text.
type latencyModel struct{}

func (latencyModel) Name() string { return modelName }

func (latencyModel) GenerateContent(ctx context.Context, req *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		select {
		case <-time.After(modelLatency):
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
		last := req.Contents[len(req.Contents)-1]
		part := &genai.Part{FunctionCall: &genai.FunctionCall{Name: toolName, Args: map[string]any{"city": "Paris"}}}
		if last.Parts[0].FunctionResponse != nil {
			part = &genai.Part{Text: "It is sunny."}
		}
		yield(&model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{part}}, TurnComplete: true}, nil)
	}
}

func branchAgent(i int) (engine.Agent, error) {
	t, err := tool.NewFunction(tool.FunctionConfig{
		Name: toolName, Description: "Returns the current weather in a city.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			city, _ := args["city"].(string)
			return weather(city), nil
		},
	})
	if err != nil {
		return nil, err
	}
	return engine.NewLlmAgent(engine.LlmAgentConfig{Name: fmt.Sprintf("branch%d", i), Model: latencyModel{}, Instruction: instruction, Tools: []tool.Tool{t}})
}

// fanOut runs root for one turn on a fresh session; it checks that every
// branch answered.
func fanOut(b *testing.B, root engine.Agent, wantAnswers int) {
	ctx := context.Background()
	svc := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: appName, Agent: root, Sessions: svc, AutoCreateSession: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		answers := 0
		for ev, err := range r.Run(ctx, userID, fmt.Sprint("s", i), userMessage(), engine.RunConfig{}) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Content != nil && len(ev.Content.Parts) > 0 && ev.Content.Parts[0].Text != "" {
				answers++
			}
		}
		if answers != wantAnswers {
			b.Fatalf("%d answers, want %d", answers, wantAnswers)
		}
	}
}

// BenchmarkParallelAgent: "fanout" is the ParallelAgent of all branches,
// "branch" one branch alone (all branches are alike, so it is the slowest).
func BenchmarkParallelAgent(b *testing.B) {
	b.Run("fanout", func(b *testing.B) {
		var subs []engine.Agent
		for i := range parallelBranches {
			a, err := branchAgent(i)
			if err != nil {
				b.Fatal(err)
			}
			subs = append(subs, a)
		}
		root, err := engine.NewParallelAgent(engine.AgentInfo{Name: "fanout", SubAgents: subs})
		if err != nil {
			b.Fatal(err)
		}
		fanOut(b, root, parallelBranches)
	})
	b.Run("branch", func(b *testing.B) {
		a, err := branchAgent(0)
		if err != nil {
			b.Fatal(err)
		}
		fanOut(b, a, 1)
	})
}
