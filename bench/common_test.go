package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"
)

// The scenario shared by both runtimes.
const (
	appName     = "bench"
	userID      = "user"
	agentName   = "weather_agent"
	modelName   = "scripted-model"
	toolName    = "get_weather"
	instruction = "You answer questions about the weather. Use get_weather."
	userText    = "What is the weather in Paris?"
	finalText   = "It is sunny and 21 degrees in Paris."
)

// weather is the tool's Go function, the same for both runtimes.
func weather(city string) map[string]any {
	return map[string]any{"city": city, "forecast": "sunny", "temperature_c": 21}
}

// script is the state both fake models share: it counts calls and answers
// odd calls (the first of a turn) with a get_weather call and even calls
// with the final text. Each answer is a freshly built canned content: no
// recording, no copying of requests, so both fakes cost the same and no
// runtime can alter a response another call returns.
//
// lastContents is the number of contents in the latest request, which the
// test uses to check that the history reaches the model.
type script struct{ calls, lastContents atomic.Int64 }

func (s *script) next(contents int) *genai.Content {
	s.lastContents.Store(int64(contents))
	if s.calls.Add(1)%2 == 1 {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{
			FunctionCall: &genai.FunctionCall{Name: toolName, Args: map[string]any{"city": "Paris"}},
		}}}
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: finalText}}}
}

func userMessage() *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: userText}}}
}

// runtimeUnderTest is one runtime wired to the scenario.
type runtimeUnderTest interface {
	// prepare creates session id holding a copy of the recorded history.
	prepare(ctx context.Context, id string) error
	// drop deletes session id.
	drop(ctx context.Context, id string) error
	// turn runs one user turn on session id, consuming every event, and
	// reports the events it saw.
	turn(ctx context.Context, id string, seen func(turnEvent)) error
	// fake is the runtime's scripted model state.
	fake() *script
}

// turnEvent is the runtime-neutral summary of an event used by the test.
type turnEvent struct {
	author       string
	functionCall string // name of a function call part
	functionResp map[string]any
	text         string
	partial      bool
}

func (e turnEvent) String() string {
	return fmt.Sprintf("{author=%s call=%q resp=%v text=%q partial=%v}", e.author, e.functionCall, e.functionResp, e.text, e.partial)
}

func summarize(author string, c *genai.Content, partial bool) turnEvent {
	ev := turnEvent{author: author, partial: partial}
	if c == nil {
		return ev
	}
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			ev.functionCall = p.FunctionCall.Name
		case p.FunctionResponse != nil:
			ev.functionResp = p.FunctionResponse.Response
		case p.Text != "":
			ev.text += p.Text
		}
	}
	return ev
}

// historyTurns are the variants: earlier turns in the session before the
// timed one.
var historyTurns = []int{0, 10}

// batch is how many sessions are prepared per stop of the timer: preparing
// them one by one would stop the world (ReadMemStats) twice per iteration.
const batch = 64

// benchTurn times one turn per iteration, each on its own fresh session
// into which the earlier turns were first run through the same runtime, as
// in a live conversation, so every iteration starts from the same history.
// Preparing the session, the earlier turns and deleting the session happen
// with the timer stopped.
//
// Besides ns/op (wall time) it reports cpu-ns/op: the process's user+system
// CPU time over the timed sections only, which includes work on other
// goroutines and the garbage collector's background marking, so a runtime
// that spreads a turn over several goroutines shows it.
func benchTurn(b *testing.B, rt runtimeUnderTest, history int) {
	ctx := context.Background()
	ids := make([]string, batch)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
	}
	ignore := func(turnEvent) {}
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		b.StopTimer()
		for _, id := range ids[:n] {
			if err := rt.prepare(ctx, id); err != nil {
				b.Fatal(err)
			}
			for range history {
				if err := rt.turn(ctx, id, ignore); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		c0 := cpuTime()
		for _, id := range ids[:n] {
			if err := rt.turn(ctx, id, ignore); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - c0
		b.StopTimer()
		for _, id := range ids[:n] {
			if err := rt.drop(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		done += n
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user+system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runtimes lists the runtimes under test; each constructor builds a runtime
// whose recorded history holds the given number of turns.
var runtimes = []struct {
	name string
	new  func(ctx context.Context, history int) (runtimeUnderTest, error)
}{
	{"adkhost", newAdkhost},
	{"adkgo", newAdkgo},
}

func BenchmarkTurn(b *testing.B) {
	for _, r := range runtimes {
		b.Run(r.name, func(b *testing.B) {
			for _, h := range historyTurns {
				b.Run("history="+strconv.Itoa(h), func(b *testing.B) {
					rt, err := r.new(context.Background(), 0)
					if err != nil {
						b.Fatal(err)
					}
					benchTurn(b, rt, h)
				})
			}
		})
	}
}
