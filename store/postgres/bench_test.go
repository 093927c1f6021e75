package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// BenchmarkTurn is a turn's store work on a session of up to 40 events:
// a Get of the whole history, then four appends (a user message, a
// function call, its response, an answer), as the runner does.
func BenchmarkTurn(b *testing.B) {
	svc := open(b).Sessions()
	ctx := b.Context()
	t0 := time.Now()
	var s *session.Session
	for i := range b.N {
		id := fmt.Sprintf("s%d", i/10)
		if i%10 == 0 {
			if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id}); err != nil {
				b.Fatal(err)
			}
		}
		var err error
		if s, err = svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: id}); err != nil {
			b.Fatal(err)
		}
		for j, p := range []*genai.Part{
			{Text: "What's the weather in Paris?"},
			{FunctionCall: &genai.FunctionCall{ID: "c", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
			{FunctionResponse: &genai.FunctionResponse{ID: "c", Name: "get_weather", Response: map[string]any{"city": "Paris", "condition": "sunny"}}},
			{Text: "It is sunny in Paris."},
		} {
			e := session.NewEvent("inv", "agent", "")
			e.Timestamp = t0.Add(time.Duration(i*4+j) * time.Millisecond)
			e.Response = model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{p}}}
			e.Actions.StateDelta = map[string]any{"turn": i}
			if err := svc.AppendEvent(ctx, s, e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
