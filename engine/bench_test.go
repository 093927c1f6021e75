package engine_test

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// cannedModel alternates a function call and a text answer, copying
// nothing, so the benchmark measures the engine, not the fake.
type cannedModel struct{ n atomic.Int64 }

func (m *cannedModel) Name() string { return "canned" }

func (m *cannedModel) GenerateContent(_ context.Context, _ *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if m.n.Add(1)%2 == 1 {
			yield(calls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}), nil)
			return
		}
		yield(text("It is 21 degrees in Paris."), nil)
	}
}

func BenchmarkTurn(b *testing.B) {
	for _, history := range []int{0, 10} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			w, _ := tool.NewFunction(tool.FunctionConfig{
				Name: "get_weather", Description: "Weather.",
				Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
				Fn:         func(_ callbacks.ToolContext, _ map[string]any) (any, error) { return map[string]any{"temp": 21}, nil },
			})
			a, _ := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: &cannedModel{}, Instruction: "Be brief.", Tools: []tool.Tool{w}})
			svc := session.NewInMemoryService()
			r, _ := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: a, Sessions: svc})
			ctx := context.Background()
			msg := userText("Weather in Paris?")
			turn := func(sid string) {
				for _, err := range r.Run(ctx, "u", sid, msg, engine.RunConfig{}) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				sid := fmt.Sprint("s", i)
				if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: sid}); err != nil {
					b.Fatal(err)
				}
				for range history {
					turn(sid)
				}
				b.StartTimer()
				turn(sid)
				b.StopTimer()
				// Keep the heap to one session, so GC work does not grow
				// with the number of iterations.
				if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: sid}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkTurnHistory measures one turn on a session holding at least 10
// or 1,000 earlier events (whole turns of the same kind), so the ratio of
// the two shows how a turn's engine work grows with the history. The
// history is copied from a template session, then one untimed turn warms
// the runner's request-contents cache for the session, as the previous
// turn of a live session would; the next turn is timed.
func BenchmarkTurnHistory(b *testing.B) {
	for _, resumable := range []bool{false, true} {
		for _, events := range []int{10, 1000} {
			b.Run(fmt.Sprintf("resumable=%v/events=%d", resumable, events), func(b *testing.B) {
				benchTurnHistory(b, resumable, events)
			})
		}
	}
}

func benchTurnHistory(b *testing.B, resumable bool, minEvents int) {
	w, _ := tool.NewFunction(tool.FunctionConfig{
		Name: "get_weather", Description: "Weather.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Fn:         func(_ callbacks.ToolContext, _ map[string]any) (any, error) { return map[string]any{"temp": 21}, nil },
	})
	a, _ := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "assistant", Model: &cannedModel{}, Instruction: "Be brief.", Tools: []tool.Tool{w}})
	svc := session.NewInMemoryService()
	r, _ := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: a, Sessions: svc, Resumable: resumable})
	ctx := context.Background()
	msg := userText("Weather in Paris?")
	turn := func(sid string) {
		for _, err := range r.Run(ctx, "u", sid, msg, engine.RunConfig{}) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	get := func(sid string) *session.Session {
		s, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: sid})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "template"}); err != nil {
		b.Fatal(err)
	}
	for len(get("template").Events()) < minEvents {
		turn("template")
	}
	history := get("template").Events()
	b.ReportMetric(float64(len(history)), "events")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		sid := fmt.Sprint("s", i)
		s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: sid})
		if err != nil {
			b.Fatal(err)
		}
		// The template's events are stored as they are: AppendEvent only
		// fills an event's id and timestamp when they are unset.
		for _, ev := range history {
			if err := svc.AppendEvent(ctx, s, ev); err != nil {
				b.Fatal(err)
			}
		}
		turn(sid)
		b.StartTimer()
		turn(sid)
		b.StopTimer()
		if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: sid}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
