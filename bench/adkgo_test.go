package bench

import (
	"context"
	"fmt"
	"iter"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
)

// adkgoModel is the scripted model for adk-go (model.LLM).
type adkgoModel struct{ script }

func (m *adkgoModel) Name() string { return modelName }

func (m *adkgoModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: m.next(len(req.Contents)), TurnComplete: true}, nil)
	}
}

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city to get the weather for"`
}

type adkgo struct {
	model    *adkgoModel
	runner   *runner.Runner
	sessions session.Service
	history  []*session.Event
}

func newAdkgo(ctx context.Context, history int) (runtimeUnderTest, error) {
	getWeather, err := functiontool.New(functiontool.Config{
		Name:        toolName,
		Description: "Returns the current weather in a city.",
	}, func(_ agent.Context, args weatherArgs) (map[string]any, error) {
		return weather(args.City), nil
	})
	if err != nil {
		return nil, err
	}
	rt := &adkgo{model: &adkgoModel{}, sessions: session.InMemoryService()}
	a, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Description: "Answers weather questions.",
		Model:       rt.model,
		Instruction: instruction,
		Tools:       []tool.Tool{getWeather},
	})
	if err != nil {
		return nil, err
	}
	rt.runner, err = runner.New(runner.Config{AppName: appName, Agent: a, SessionService: rt.sessions})
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
	for ev := range got.Session.Events().All() {
		rt.history = append(rt.history, ev)
	}
	if want := 4 * history; len(rt.history) != want {
		return nil, fmt.Errorf("adkgo: %d turns recorded %d events, want %d", history, len(rt.history), want)
	}
	return rt, nil
}

func (rt *adkgo) fake() *script { return &rt.model.script }

func (rt *adkgo) prepare(ctx context.Context, id string) error {
	created, err := rt.sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id})
	if err != nil {
		return err
	}
	for _, ev := range rt.history {
		cp := *ev
		if err := rt.sessions.AppendEvent(ctx, created.Session, &cp); err != nil {
			return err
		}
	}
	return nil
}

func (rt *adkgo) drop(ctx context.Context, id string) error {
	return rt.sessions.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: id})
}

func (rt *adkgo) turn(ctx context.Context, id string, seen func(turnEvent)) error {
	for ev, err := range rt.runner.Run(ctx, userID, id, userMessage(), agent.RunConfig{}) {
		if err != nil {
			return err
		}
		seen(summarize(ev.Author, ev.Content, ev.Partial))
	}
	return nil
}
