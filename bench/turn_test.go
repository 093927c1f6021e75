package bench

import (
	"context"
	"reflect"
	"testing"
)

// TestTurn checks that a timed turn does what the benchmark claims, for
// every runtime and history size: the model asks for get_weather, the tool
// answers, the model gives the final text, and nothing else is yielded.
func TestTurn(t *testing.T) {
	ctx := context.Background()
	for _, r := range runtimes {
		for _, h := range historyTurns {
			rt, err := r.new(ctx, h)
			if err != nil {
				t.Fatalf("%s history=%d: %v", r.name, h, err)
			}
			// Two turns on two fresh sessions: each starts from the same
			// history and gives the same events.
			for _, id := range []string{"check1", "check2"} {
				if err := rt.prepare(ctx, id); err != nil {
					t.Fatal(err)
				}
				calls := rt.fake().calls.Load()
				var got []turnEvent
				if err := rt.turn(ctx, id, func(e turnEvent) { got = append(got, e) }); err != nil {
					t.Fatalf("%s history=%d: %v", r.name, h, err)
				}
				want := []turnEvent{
					{author: agentName, functionCall: toolName},
					{author: agentName, functionResp: weather("Paris")},
					{author: agentName, text: finalText},
				}
				t.Logf("%s history=%d %s: %v", r.name, h, id, got)
				if !sameEvents(got, want) {
					t.Errorf("%s history=%d: events\n got %v\nwant %v", r.name, h, got, want)
				}
				// The final call sees the history plus this turn's user
				// message, function call and function response.
				if n := rt.fake().calls.Load() - calls; n != 2 {
					t.Errorf("%s history=%d: the turn made %d model calls, want 2", r.name, h, n)
				}
				if got, want := rt.fake().lastContents.Load(), int64(4*h+3); got != want {
					t.Errorf("%s history=%d: the model's last request had %d contents, want %d", r.name, h, got, want)
				}
				if err := rt.drop(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// sameEvents compares summaries, treating numbers of any Go type as equal
// when their values are (a runtime may round-trip results through JSON).
func sameEvents(got, want []turnEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.author != w.author || g.functionCall != w.functionCall || g.text != w.text || g.partial != w.partial {
			return false
		}
		if len(g.functionResp) != len(w.functionResp) {
			return false
		}
		for k, wv := range w.functionResp {
			gv := g.functionResp[k]
			if reflect.DeepEqual(gv, wv) {
				continue
			}
			gf, gok := number(gv)
			wf, wok := number(wv)
			if !gok || !wok || gf != wf {
				return false
			}
		}
	}
	return true
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
