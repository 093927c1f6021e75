package engine_test

// What a hostile model response, callback or app definition could grow
// inside one invocation: its events (RunConfig.MaxEvents, shared with the
// runs of agent tools) and the function calls of one response
// (RunConfig.MaxFunctionCalls).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// answersForModel is a before_model callback that answers every request
// itself, with a call of tool "step": the agent's ReAct loop never ends
// and never calls the model, so MaxLLMCalls never stops it. It stored
// events without end (about 10,000 a second), and a /run client waiting
// for the answer held them all in memory.
func answersForModel(callback callbacks.CallbackContext, _ *model.Request) (*model.Response, error) {
	return calls(fcall("step", nil)), nil
}

func stepTool(t *testing.T, n *atomic.Int64) tool.Tool {
	return newTool(t, "step", nil, func(callbacks.ToolContext, map[string]any) (any, error) {
		n.Add(1)
		return map[string]any{"ok": true}, nil
	})
}

func TestMaxEvents(t *testing.T) {
	t.Parallel()
	looping := func(name string, steps *atomic.Int64) *engine.LlmAgent {
		return newLlm(t, engine.LlmAgentConfig{Name: name, Model: scripted.FromSteps("m"), Tools: []tool.Tool{stepTool(t, steps)},
			BeforeModel: []callbacks.BeforeModel{answersForModel}})
	}
	t.Run("a callback answering for the model", func(t *testing.T) {
		t.Parallel()
		r, svc := mustRunner(t, looping("a", new(atomic.Int64)))
		evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxEvents: 7})
		var le *engine.EventsLimitExceededError
		if !errors.As(err, &le) || le.Limit != 7 || le.Agent != "a" || !strings.Contains(err.Error(), "limit of 7 events (RunConfig.MaxEvents, adkhost serve --max-events") {
			t.Fatalf("err = %v, want an EventsLimitExceededError of 7", err)
		}
		if len(evs) != 7 {
			t.Errorf("yielded %d events, want 7", len(evs))
		}
		// The user's message and the 7 events; the refused one is not stored.
		if n := len(loadSession(t, svc, "s").Events()); n != 8 {
			t.Errorf("stored %d events, want 8", n)
		}
	})
	t.Run("the default", func(t *testing.T) {
		t.Parallel()
		r, svc := mustRunner(t, looping("a", new(atomic.Int64)))
		evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{})
		var le *engine.EventsLimitExceededError
		if !errors.As(err, &le) || le.Limit != engine.DefaultMaxEvents || len(evs) != engine.DefaultMaxEvents {
			t.Fatalf("err = %v after %d events, want an EventsLimitExceededError of %d", err, len(evs), engine.DefaultMaxEvents)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		t.Parallel()
		// An after_model callback ends the loop at the 12th step: past a
		// limit of 10, with none.
		var n atomic.Int64
		a := newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{stepTool(t, new(atomic.Int64))},
			BeforeModel: []callbacks.BeforeModel{func(cc callbacks.CallbackContext, r *model.Request) (*model.Response, error) {
				if n.Add(1) == 12 {
					return text("done"), nil
				}
				return answersForModel(cc, r)
			}}})
		r, svc := mustRunner(t, a)
		if evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxEvents: -1}); len(evs) != 23 {
			t.Errorf("yielded %d events, want 23", len(evs))
		}
	})
	t.Run("shared with the runs of agent tools", func(t *testing.T) {
		t.Parallel()
		// The root calls its agent tool twice at once; each run of the
		// tool's agent loops. Each nested run counted its own events, so
		// nested tools multiplied the bound at every level.
		var toolRuns atomic.Int64
		var steps atomic.Int64
		inner := looping("inner", &steps)
		root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("m", calls(fcall("inner", map[string]any{"request": "x"}), fcall("inner", map[string]any{"request": "y"}))),
			Tools: []tool.Tool{&engine.AgentTool{Agent: inner}},
			BeforeTool: []callbacks.BeforeTool{func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
				toolRuns.Add(1)
				return nil, nil
			}}})
		r, svc := mustRunner(t, root)
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxEvents: 41})
		var le *engine.EventsLimitExceededError
		if !errors.As(err, &le) || le.Limit != 41 {
			t.Fatalf("err = %v, want an EventsLimitExceededError of 41", err)
		}
		// The root stored its call first, leaving 40 events. A nested step
		// runs its tool once its call event is stored, and stores the
		// response after: with c calls stored, at least c-2 responses were
		// (each of the two runs may have one refused), so 2c-2 <= 40. Each
		// nested run counting its own 41 made up to 40 steps.
		if n := steps.Load(); n > 21 {
			t.Errorf("the nested runs made %d steps, want at most 21 together", n)
		}
	})
}

// An agent tool's run copies the caller's RunConfig; "no limit" on model
// calls became 0 there, which the nested run read as the default of 500.
func TestAgentToolKeepsNoLLMCallsLimit(t *testing.T) {
	t.Parallel()
	var steps []scripted.Step
	for range engine.DefaultMaxLLMCalls + 1 {
		steps = append(steps, scripted.Step{Response: calls(fcall("step", nil))})
	}
	steps = append(steps, scripted.Step{Response: text("done")})
	var n atomic.Int64
	inner := newLlm(t, engine.LlmAgentConfig{Name: "inner", Model: scripted.FromSteps("inner-model", steps...), Tools: []tool.Tool{stepTool(t, &n)}})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("m", calls(fcall("inner", map[string]any{"request": "x"})), text("ok")),
		Tools: []tool.Tool{&engine.AgentTool{Agent: inner}}})
	r, svc := mustRunner(t, root)
	evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxLLMCalls: -1, MaxEvents: -1})
	if got := evs[1].FunctionResponses(); len(got) != 1 || jsonOf(got[0].Response) != `{"result":"done"}` {
		t.Errorf("agent tool answered %s, want done", eventsJSON(evs[1:2]))
	}
	if n.Load() != engine.DefaultMaxLLMCalls+1 {
		t.Errorf("nested steps = %d", n.Load())
	}
}

// A model response asking for thousands of calls ran them all at once: a
// goroutine, a Wasm instance's turn and a held result each (up to a
// module's max_output_bytes), stored together as one event.
func TestMaxFunctionCalls(t *testing.T) {
	t.Parallel()
	many := func(n int) *model.Response {
		var fcs []*genai.FunctionCall
		for range n {
			fcs = append(fcs, fcall("step", nil))
		}
		return calls(fcs...)
	}
	for _, tc := range []struct {
		name        string
		calls, max  int
		wantLimit   int
		wantRunning int64
	}{
		{"over the limit", 5, 4, 4, 0},
		{"at the limit", 4, 4, 0, 4},
		{"over the default", engine.DefaultMaxFunctionCalls + 1, 0, engine.DefaultMaxFunctionCalls, 0},
		{"no limit", engine.DefaultMaxFunctionCalls + 1, -1, 0, engine.DefaultMaxFunctionCalls + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Int64
			m := scripted.New("m", many(tc.calls), text("done"))
			r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "a", Model: m, Tools: []tool.Tool{stepTool(t, &ran)}}))
			evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxFunctionCalls: tc.max})
			if ran.Load() != tc.wantRunning {
				t.Errorf("%d calls ran, want %d", ran.Load(), tc.wantRunning)
			}
			if tc.wantLimit == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var te *engine.TooManyFunctionCallsError
			if !errors.As(err, &te) || te.Limit != tc.wantLimit || te.Calls != tc.calls || !strings.Contains(err.Error(), "none was run") {
				t.Fatalf("err = %v, want a TooManyFunctionCallsError", err)
			}
			// The response is not stored: a call without its response
			// would break the next request's history. The failure is.
			for _, ev := range evs {
				if len(ev.FunctionCalls()) > 0 {
					t.Errorf("a call event was yielded: %s", eventsJSON([]*session.Event{ev}))
				}
			}
			if len(evs) != 1 || evs[0].ErrorMessage == "" {
				t.Errorf("events:%s, want the error event", eventsJSON(evs))
			}
		})
	}
}

// An agent's name is in every event it authors and in every node path
// below it: a 1 MiB name made each event a megabyte. Names and the depth
// of the tree are bounded when the runner is made.
func TestAgentTreeBounds(t *testing.T) {
	t.Parallel()
	m := scripted.FromSteps("m")
	mk := func(name string, subs ...engine.Agent) engine.Agent {
		a, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: name, Model: m, SubAgents: subs})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	chain := func(depth int) engine.Agent {
		a := mk(fmt.Sprintf("a%d", depth))
		for i := depth - 1; i >= 0; i-- {
			a = mk(fmt.Sprintf("a%d", i), a)
		}
		return a
	}
	for _, tc := range []struct {
		name string
		root engine.Agent
		want string
	}{
		{"long name", mk(strings.Repeat("n", engine.MaxAgentNameBytes+1)), "an agent's name is 129 bytes"},
		{"name at the limit", mk(strings.Repeat("n", engine.MaxAgentNameBytes)), ""},
		{"deep tree", chain(engine.MaxAgentDepth + 1), `agent "a33" is 33 levels below the root, over the limit of 32`},
		{"tree at the limit", chain(engine.MaxAgentDepth), ""},
	} {
		_, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: tc.root, Sessions: session.NewInMemoryService()})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// An agent tool whose agent calls the tool again (the engine's API lets a
// tool wrap one of its callers) nested runs until the stack ran out, or,
// without an events limit, for good. The nesting stops at MaxAgentDepth.
func TestAgentToolNestingBounded(t *testing.T) {
	t.Parallel()
	// Named like the agent it will wrap, which needs the tool to be made.
	self := &engine.AgentTool{Agent: newSeq(t, "again")}
	m, err := scripted.NewReactive("m", scripted.Rule{Respond: scripted.ResponseSpec{FunctionCalls: []scripted.FunctionCallSpec{{Name: "again", Args: map[string]any{"request": "x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	again := newLlm(t, engine.LlmAgentConfig{Name: "again", Model: m, Tools: []tool.Tool{self}})
	self.Agent = again
	r, svc := mustRunner(t, again)
	_, err = run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxEvents: -1})
	if err == nil || !strings.Contains(err.Error(), `AgentTool "again": agents run as tools inside each other more than 32 deep`) {
		t.Fatalf("err = %v, want the nesting bound", err)
	}
}

// storedBytes is what a session's events hold, by session.EventSize.
func storedBytes(t *testing.T, svc session.Service, sid string) int64 {
	var n int64
	for _, ev := range loadSession(t, svc, sid).Events() {
		n += session.EventSize(ev)
	}
	return n
}

// bigTool returns size bytes of text at every call.
func bigTool(t *testing.T, name string, size int, n *atomic.Int64) tool.Tool {
	return newTool(t, name, nil, func(callbacks.ToolContext, map[string]any) (any, error) {
		n.Add(1)
		return map[string]any{"data": strings.Repeat("x", size)}, nil
	})
}

// A run had no bound on the bytes it produced: 256 calls of one response
// returning 4 MiB each were held together (1 GiB), and 10,000 events of a
// callback's 4 MiB outputs stored 40 GB, all held in the run's session.
func TestMaxBytes(t *testing.T) {
	t.Parallel()
	const kib = 1 << 10
	wantLimit := func(t *testing.T, err error, limit int64, what string) {
		t.Helper()
		var be *engine.BytesLimitExceededError
		if !errors.As(err, &be) || be.Limit != limit || !strings.Contains(be.What, what) ||
			!strings.Contains(err.Error(), fmt.Sprintf("limit of %d bytes", limit)) || !strings.Contains(err.Error(), "adkhost serve --max-run-bytes") {
			t.Fatalf("err = %v, want a BytesLimitExceededError of %d for %s", err, limit, what)
		}
	}
	t.Run("the results of one response", func(t *testing.T) {
		t.Parallel()
		var fcs []*genai.FunctionCall
		for range 16 {
			fcs = append(fcs, fcall("big", nil))
		}
		var ran atomic.Int64
		r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.New("m", calls(fcs...), text("done")),
			Tools: []tool.Tool{bigTool(t, "big", 512*kib, &ran)}}))
		evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 2 << 20})
		wantLimit(t, err, 2<<20, `the result of tool "big"`)
		if n := storedBytes(t, svc, "s"); n > 2<<20 {
			t.Errorf("the session holds %d bytes, over the limit", n)
		}
		if last := evs[len(evs)-1]; !strings.Contains(last.ErrorMessage, "RunConfig.MaxBytes") {
			t.Errorf("the last event is %s, want the error", eventsJSON(evs[len(evs)-1:]))
		}
	})
	t.Run("a callback's events", func(t *testing.T) {
		t.Parallel()
		var steps atomic.Int64
		a := newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{bigTool(t, "step", 64*kib, &steps)},
			BeforeModel: []callbacks.BeforeModel{answersForModel}})
		r, svc := mustRunner(t, a)
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 1 << 20, MaxEvents: -1})
		wantLimit(t, err, 1<<20, "tool")
		if n := steps.Load(); n < 14 || n > 17 {
			t.Errorf("%d steps of 64 KiB ran, want 16", n)
		}
		if n := storedBytes(t, svc, "s"); n > 1<<20+64*kib {
			t.Errorf("the session holds %d bytes, over the limit", n)
		}
	})
	t.Run("shared with the runs of agent tools", func(t *testing.T) {
		t.Parallel()
		var steps atomic.Int64
		inner := newLlm(t, engine.LlmAgentConfig{Name: "inner", Model: scripted.FromSteps("m"), Tools: []tool.Tool{bigTool(t, "step", 64*kib, &steps)},
			BeforeModel: []callbacks.BeforeModel{answersForModel}})
		root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("m", calls(fcall("inner", map[string]any{"request": "x"}), fcall("inner", map[string]any{"request": "y"}))),
			Tools: []tool.Tool{&engine.AgentTool{Agent: inner}}})
		r, svc := mustRunner(t, root)
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 1 << 20, MaxEvents: -1})
		wantLimit(t, err, 1<<20, "")
		// Each nested run counting its own megabyte made 32 steps.
		if n := steps.Load(); n > 18 {
			t.Errorf("the nested runs made %d steps of 64 KiB, want at most 18 together", n)
		}
	})
	t.Run("an on_event replacement", func(t *testing.T) {
		t.Parallel()
		var steps atomic.Int64
		a := newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{bigTool(t, "step", 10, &steps)},
			BeforeModel: []callbacks.BeforeModel{answersForModel}})
		grow := &testPlugin{name: "grow", log: &hookLog{}, onEvent: func(_ callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
			return &session.Event{Response: model.Response{CustomMetadata: map[string]any{"pad": strings.Repeat("p", 128*kib)}}}, nil
		}}
		r, svc := mustRunner(t, a, grow)
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 1 << 20, MaxEvents: -1})
		wantLimit(t, err, 1<<20, "on_event plugin's replacement")
		if n := storedBytes(t, svc, "s"); n > 1<<20+128*kib {
			t.Errorf("the session holds %d bytes, over the limit", n)
		}
	})
	t.Run("artifacts", func(t *testing.T) {
		t.Parallel()
		// A tool saving 256 KiB artifacts under new names in a loop: each
		// stored for good, with nothing bounding their count or bytes.
		for _, nested := range []bool{false, true} {
			var saves atomic.Int64
			saver := newTool(t, "step", nil, func(tc callbacks.ToolContext, _ map[string]any) (any, error) {
				n := saves.Add(1)
				if _, err := tc.SaveArtifact(fmt.Sprintf("a%d.bin", n), &genai.Part{InlineData: &genai.Blob{MIMEType: "application/octet-stream", Data: make([]byte, 256*kib)}}); err != nil {
					return nil, err
				}
				return map[string]any{"ok": true}, nil
			})
			var root engine.Agent = newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{saver},
				BeforeModel: []callbacks.BeforeModel{answersForModel}})
			if nested {
				// Also counted once when an agent tool's saves reach the caller.
				root = newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("m", calls(fcall("a", map[string]any{"request": "x"}))),
					Tools: []tool.Tool{&engine.AgentTool{Agent: root.(*engine.LlmAgent)}}})
			}
			svc := session.NewInMemoryService()
			arts := artifact.NewInMemoryService()
			r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: root, Sessions: svc, Artifacts: arts})
			if err != nil {
				t.Fatal(err)
			}
			_, err = run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 2 << 20, MaxEvents: -1})
			var be *engine.BytesLimitExceededError
			if !errors.As(err, &be) || !strings.Contains(be.What, "artifact") {
				t.Fatalf("nested %v: err = %v, want the bytes limit", nested, err)
			}
			// 256 KiB of data is 341 KiB of base64 JSON: the 6th is refused.
			if n := saves.Load(); n != 6 {
				t.Errorf("nested %v: %d saves of 256 KiB were tried, want 6 (the 6th refused)", nested, n)
			}
		}
	})
	t.Run("agent tools' copies of the caller's state", func(t *testing.T) {
		t.Parallel()
		// Each agent tool run copies the caller's state into its session
		// and holds it while it runs: a state of 200,000 small keys (2.4
		// MB of JSON) took about 90 MB per run, and 64 parallel calls
		// peaked at 2.7 GB. Here two copies fit the bound at once, a third
		// does not: the runs that hold theirs wait for each other.
		state := map[string]any{}
		for i := range 2000 {
			state[fmt.Sprintf("k%d", i)] = 1.0
		}
		// The runs that got their copy wait until the third call is
		// refused (or, without the bound, has started too).
		var running, refused atomic.Int64
		inner := newLlm(t, engine.LlmAgentConfig{Name: "inner", Model: scripted.FromSteps("im"),
			BeforeModel: []callbacks.BeforeModel{func(cc callbacks.CallbackContext, _ *model.Request) (*model.Response, error) {
				running.Add(1)
				for running.Load() < 3 && refused.Load() == 0 {
					runtime.Gosched()
				}
				return text("ok"), nil
			}}})
		root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("m", calls(fcall("inner", map[string]any{"request": "a"}),
			fcall("inner", map[string]any{"request": "b"}), fcall("inner", map[string]any{"request": "c"})), text("done")),
			Tools: []tool.Tool{&engine.AgentTool{Agent: inner}},
			OnToolError: []callbacks.OnToolError{func(_ callbacks.ToolContext, _ callbacks.Tool, _ map[string]any, err error) (map[string]any, error) {
				refused.Add(1)
				return nil, nil
			}}})
		r, svc := mustRunner(t, root)
		if _, err := svc.Create(context.Background(), &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s", State: state}); err != nil {
			t.Fatal(err)
		}
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: 1_200_000})
		wantLimit(t, err, 1_200_000, "copy of the caller's state")
		if n := running.Load(); n != 2 {
			t.Errorf("%d agent tool runs started, want 2", n)
		}
	})
	t.Run("the default", func(t *testing.T) {
		t.Parallel()
		var steps atomic.Int64
		a := newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{bigTool(t, "step", 1<<20, &steps)},
			BeforeModel: []callbacks.BeforeModel{answersForModel}})
		r, svc := mustRunner(t, a)
		_, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{})
		wantLimit(t, err, engine.DefaultMaxBytes, "tool")
		if n := steps.Load(); n > engine.DefaultMaxBytes>>20+1 {
			t.Errorf("%d steps of 1 MiB ran", n)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int64
		a := newLlm(t, engine.LlmAgentConfig{Name: "a", Model: scripted.FromSteps("m"), Tools: []tool.Tool{bigTool(t, "step", 64*kib, new(atomic.Int64))},
			BeforeModel: []callbacks.BeforeModel{func(cc callbacks.CallbackContext, r *model.Request) (*model.Response, error) {
				if n.Add(1) == 20 {
					return text("done"), nil
				}
				return answersForModel(cc, r)
			}}})
		r, svc := mustRunner(t, a)
		mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{MaxBytes: -1})
		if got := storedBytes(t, svc, "s"); got < 19*64*kib {
			t.Errorf("stored %d bytes", got)
		}
	})
}
