package bench

import (
	"context"
	"fmt"
	"iter"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// adkhostModel is the scripted model for adkhost (model.Model).
type adkhostModel struct{ script }

func (m *adkhostModel) Name() string { return modelName }

func (m *adkhostModel) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		yield(&model.Response{Content: m.next(len(req.Contents)), TurnComplete: true}, nil)
	}
}

type adkhost struct {
	model    *adkhostModel
	runner   *engine.Runner
	sessions *session.InMemoryService
	history  []*session.Event
}

func newAdkhost(ctx context.Context, history int) (runtimeUnderTest, error) {
	getWeather, err := tool.NewFunction(tool.FunctionConfig{
		Name:        toolName,
		Description: "Returns the current weather in a city.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string", "description": "the city to get the weather for"},
			},
			"required": []string{"city"},
		},
		Fn: func(_ callbacks.ToolContext, args map[string]any) (any, error) {
			city, _ := args["city"].(string)
			return weather(city), nil
		},
	})
	if err != nil {
		return nil, err
	}
	rt := &adkhost{model: &adkhostModel{}, sessions: session.NewInMemoryService()}
	a, err := engine.NewLlmAgent(engine.LlmAgentConfig{
		Name:        agentName,
		Description: "Answers weather questions.",
		Model:       rt.model,
		Instruction: instruction,
		Tools:       []tool.Tool{getWeather},
	})
	if err != nil {
		return nil, err
	}
	rt.runner, err = engine.NewRunner(engine.RunnerConfig{AppName: appName, Agent: a, Sessions: rt.sessions})
	if err != nil {
		return nil, err
	}
	// Record the history by running real turns on a template session.
	const tmpl = "template"
	if _, err := rt.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: tmpl}); err != nil {
		return nil, err
	}
	for range history {
		if err := rt.turn(ctx, tmpl, func(turnEvent) {}); err != nil {
			return nil, err
		}
	}
	got, err := rt.sessions.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: tmpl})
	if err != nil {
		return nil, err
	}
	rt.history = got.Events()
	if want := 4 * history; len(rt.history) != want {
		return nil, fmt.Errorf("adkhost: %d turns recorded %d events, want %d", history, len(rt.history), want)
	}
	return rt, nil
}

func (rt *adkhost) fake() *script { return &rt.model.script }

func (rt *adkhost) prepare(ctx context.Context, id string) error {
	s, err := rt.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id})
	if err != nil {
		return err
	}
	for _, ev := range rt.history {
		cp := *ev
		if err := rt.sessions.AppendEvent(ctx, s, &cp); err != nil {
			return err
		}
	}
	return nil
}

func (rt *adkhost) drop(ctx context.Context, id string) error {
	return rt.sessions.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: id})
}

func (rt *adkhost) turn(ctx context.Context, id string, seen func(turnEvent)) error {
	for ev, err := range rt.runner.Run(ctx, userID, id, userMessage(), engine.RunConfig{}) {
		if err != nil {
			return err
		}
		seen(summarize(ev.Author, ev.Content, ev.Partial))
	}
	return nil
}
