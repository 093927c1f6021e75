package engine_test

// Agent lifecycle (before/after agent callbacks) and the workflow agents.

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestBeforeAgentContentSkipsAndEndsAgent(t *testing.T) {
	t.Parallel()
	gate := func(l *hookLog) callbacks.BeforeAgent {
		return func(ctx callbacks.CallbackContext) (*genai.Content, error) {
			l.add(ctx.AgentName() + ".before_agent")
			ctx.State().Set("gate", "closed")
			return modelContent("Closed today."), nil
		}
	}
	t.Run("root LlmAgent", func(t *testing.T) {
		t.Parallel()
		log := &hookLog{}
		m := scripted.New("m", text("unused"))
		a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, OutputKey: "last_reply",
			BeforeAgent: []callbacks.BeforeAgent{gate(log)},
			AfterAgent:  []callbacks.AfterAgent{logAfterAgent(log, "assistant")},
		})
		r, svc := mustRunner(t, a)
		evs := mustRun(t, r, svc, "s", userText("Hello?"), engine.RunConfig{})
		// The callback's state and the output key land on the one event.
		wantEvents(t, "events", evs,
			`{"author":"assistant","content":{"parts":[{"text":"Closed today."}],"role":"model"},"actions":{"stateDelta":{"gate":"closed","last_reply":"Closed today."}}}`)
		if n := len(m.Requests()); n != 0 {
			t.Errorf("model called %d times, want 0", n)
		}
		if got := log.get(); !slices.Equal(got, []string{"assistant.before_agent"}) {
			t.Errorf("hooks = %q, want only before_agent", got)
		}
	})
	t.Run("step of a SequentialAgent", func(t *testing.T) {
		t.Parallel()
		log := &hookLog{}
		m1 := scripted.New("m1", text("unused"))
		m2 := scripted.New("m2", text("two"))
		step1 := newLlm(t, engine.LlmAgentConfig{Name: "step1", Model: m1,
			BeforeAgent: []callbacks.BeforeAgent{gate(log)},
			AfterAgent:  []callbacks.AfterAgent{logAfterAgent(log, "step1")},
		})
		step2 := newLlm(t, engine.LlmAgentConfig{Name: "step2", Model: m2})
		r, svc := mustRunner(t, newSeq(t, "pipeline", step1, step2))
		evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{})
		// Only step1's run ends; the pipeline goes on with step2.
		wantEvents(t, "events", evs,
			`{"author":"step1","content":{"parts":[{"text":"Closed today."}],"role":"model"},"actions":{"stateDelta":{"gate":"closed"}}}`,
			`{"author":"step2","content":{"parts":[{"text":"two"}],"role":"model"}}`)
		if n := len(m1.Requests()); n != 0 {
			t.Errorf("step1 model called %d times, want 0", n)
		}
		if got := log.get(); !slices.Equal(got, []string{"step1.before_agent"}) {
			t.Errorf("hooks = %q, want only step1's before_agent", got)
		}
	})
}

func TestAfterAgentContentAddsFinalEvent(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("Model reply."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, OutputKey: "last_reply",
		AfterAgent: []callbacks.AfterAgent{func(ctx callbacks.CallbackContext) (*genai.Content, error) {
			ctx.State().Set("after_agent_ran", true)
			return modelContent("Note added by after_agent."), nil
		}},
	})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Hello?"), engine.RunConfig{})
	wantEvents(t, "events", evs,
		`{"author":"assistant","content":{"parts":[{"text":"Model reply."}],"role":"model"},"actions":{"stateDelta":{"last_reply":"Model reply."}}}`,
		// Not written to the output key.
		`{"author":"assistant","content":{"parts":[{"text":"Note added by after_agent."}],"role":"model"},"actions":{"stateDelta":{"after_agent_ran":true}}}`)
	if v, _ := loadSession(t, svc, "s").StateValue("last_reply"); v != "Model reply." {
		t.Errorf("last_reply = %v", v)
	}
}

func TestAgentCallbackStateOnlyYieldsActionsEvent(t *testing.T) {
	t.Parallel()
	setState := func(key string) func(ctx callbacks.CallbackContext) (*genai.Content, error) {
		return func(ctx callbacks.CallbackContext) (*genai.Content, error) {
			ctx.State().Set(key, "v")
			return nil, nil
		}
	}
	reply := `{"author":"assistant","content":{"parts":[{"text":"Reply."}],"role":"model"}}`
	tests := []struct {
		name   string
		before bool
		want   []string
	}{
		{name: "before_agent", before: true, want: []string{`{"author":"assistant","actions":{"stateDelta":{"before":"v"}}}`, reply}},
		{name: "after_agent", want: []string{reply, `{"author":"assistant","actions":{"stateDelta":{"after":"v"}}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", text("Reply."))
			cfg := engine.LlmAgentConfig{Name: "assistant", Model: m}
			if tt.before {
				cfg.BeforeAgent = []callbacks.BeforeAgent{setState("before")}
			} else {
				cfg.AfterAgent = []callbacks.AfterAgent{setState("after")}
			}
			r, svc := mustRunner(t, newLlm(t, cfg))
			evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			wantEvents(t, "events", evs, tt.want...)
			if n := len(m.Requests()); n != 1 {
				t.Errorf("model called %d times, want 1", n)
			}
			if n := len(loadSession(t, svc, "s").Events()); n != 3 {
				t.Errorf("stored %d events, want 3", n)
			}
		})
	}
}

func TestParallelAgentBranchesAreIsolated(t *testing.T) {
	t.Parallel()
	mLeft := scripted.New("left-model", text("left says hi"))
	mRight := scripted.New("right-model", text("right says hi"))
	left := newLlm(t, engine.LlmAgentConfig{Name: "left", Model: mLeft, OutputKey: "left_answer"})
	// right starts only once left's answer is in the session, so its request
	// would show it if branches were not isolated.
	right := newLlm(t, engine.LlmAgentConfig{Name: "right", Model: mRight, OutputKey: "right_answer",
		BeforeAgent: []callbacks.BeforeAgent{func(ctx callbacks.CallbackContext) (*genai.Content, error) {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				for _, ev := range ctx.Session().Events() {
					if ev.Author == "left" {
						return nil, nil
					}
				}
				time.Sleep(time.Millisecond)
			}
			return nil, errors.New("left's event never reached the session")
		}},
	})
	fan, err := engine.NewParallelAgent(engine.AgentInfo{Name: "fanout", SubAgents: []engine.Agent{left, right}})
	if err != nil {
		t.Fatal(err)
	}
	r, svc := mustRunner(t, fan)
	evs := mustRun(t, r, svc, "s", userText("Hello both."), engine.RunConfig{})
	wantEvents(t, "events", evs,
		`{"author":"left","branch":"fanout.left","content":{"parts":[{"text":"left says hi"}],"role":"model"},"actions":{"stateDelta":{"left_answer":"left says hi"}}}`,
		`{"author":"right","branch":"fanout.right","content":{"parts":[{"text":"right says hi"}],"role":"model"},"actions":{"stateDelta":{"right_answer":"right says hi"}}}`)
	wantJSON(t, "right's request contents", mRight.Requests()[0].Contents, `[{"parts":[{"text":"Hello both."}],"role":"user"}]`)
	wantJSON(t, "left's request contents", mLeft.Requests()[0].Contents, `[{"parts":[{"text":"Hello both."}],"role":"user"}]`)
}

func TestSequentialAgentRunsInOrder(t *testing.T) {
	t.Parallel()
	var models []*scripted.Model
	var subs []engine.Agent
	for _, n := range []string{"one", "two", "three"} {
		m := scripted.New(n+"-model", text(n+" done"))
		models = append(models, m)
		subs = append(subs, newLlm(t, engine.LlmAgentConfig{Name: n, Model: m}))
	}
	r, svc := mustRunner(t, newSeq(t, "pipeline", subs...))
	evs := mustRun(t, r, svc, "s", userText("Run."), engine.RunConfig{})
	wantEvents(t, "events", evs,
		`{"author":"one","content":{"parts":[{"text":"one done"}],"role":"model"}}`,
		`{"author":"two","content":{"parts":[{"text":"two done"}],"role":"model"}}`,
		`{"author":"three","content":{"parts":[{"text":"three done"}],"role":"model"}}`)
	// Each step sees what the earlier steps said, as another agent's words.
	got := models[2].Requests()[0].Contents
	if len(got) != 3 {
		t.Fatalf("three's request has %d contents: %s", len(got), jsonOf(got))
	}
	for i, who := range []string{"one", "two"} {
		if p := got[i+1].Parts; len(p) != 2 || p[1].Text != "["+who+"] said:\n<<<BEGIN_QUOTED_AGENT_CONTENT>>>\n"+who+" done\n<<<END_QUOTED_AGENT_CONTENT>>>" {
			t.Errorf("content %d = %s", i+1, jsonOf(got[i+1]))
		}
	}
}

func TestLoopAgent(t *testing.T) {
	t.Parallel()
	finish := func(t *testing.T) tool.Tool {
		return newTool(t, "finish", nil, func(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
			ctx.Actions().Escalate = true
			return map[string]any{"done": true}, nil
		})
	}
	tests := []struct {
		name     string
		maxIter  int
		first    []scripted.Step // first sub-agent's model
		second   []scripted.Step // second sub-agent's model
		tools    func(t *testing.T) []tool.Tool
		want     []string
		wantReqs [2]int
	}{
		{
			name:    "max iterations",
			maxIter: 2,
			first:   []scripted.Step{{Response: text("draft 1")}, {Response: text("draft 2")}},
			second:  []scripted.Step{{Response: text("critique 1")}, {Response: text("critique 2")}},
			want: []string{
				`{"author":"first","content":{"parts":[{"text":"draft 1"}],"role":"model"}}`,
				`{"author":"second","content":{"parts":[{"text":"critique 1"}],"role":"model"}}`,
				`{"author":"first","content":{"parts":[{"text":"draft 2"}],"role":"model"}}`,
				`{"author":"second","content":{"parts":[{"text":"critique 2"}],"role":"model"}}`,
			},
			wantReqs: [2]int{2, 2},
		},
		{
			name:    "exit_loop ends the loop at once",
			maxIter: 3,
			first:   []scripted.Step{{Response: calls(fcall("exit_loop", nil))}},
			tools:   func(*testing.T) []tool.Tool { return []tool.Tool{engine.ExitLoopTool{}} },
			want: []string{
				`{"author":"first","content":{"parts":[{"functionCall":{"id":"adk-*","name":"exit_loop"}}],"role":"model"}}`,
				`{"author":"first","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"exit_loop","response":{"result":null}}}],"role":"user"},"actions":{"skipSummarization":true,"escalate":true}}`,
			},
			wantReqs: [2]int{1, 0},
		},
		{
			name:    "escalate lets the agent finish, then ends the loop",
			maxIter: 5,
			first:   []scripted.Step{{Response: text("not done yet")}, {Response: calls(fcall("finish", nil))}, {Response: text("finished")}},
			second:  []scripted.Step{{Response: text("worked once")}},
			tools:   func(t *testing.T) []tool.Tool { return []tool.Tool{finish(t)} },
			want: []string{
				`{"author":"first","content":{"parts":[{"text":"not done yet"}],"role":"model"}}`,
				`{"author":"second","content":{"parts":[{"text":"worked once"}],"role":"model"}}`,
				`{"author":"first","content":{"parts":[{"functionCall":{"id":"adk-*","name":"finish"}}],"role":"model"}}`,
				`{"author":"first","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"finish","response":{"done":true}}}],"role":"user"},"actions":{"escalate":true}}`,
				`{"author":"first","content":{"parts":[{"text":"finished"}],"role":"model"}}`,
			},
			wantReqs: [2]int{3, 1},
		},
		// google-adk: "A value of zero or less runs the sub-agents no times
		// at all"; 0 meant no bound here.
		{name: "max iterations 0 runs no round", maxIter: 0},
		{name: "negative max iterations runs no round", maxIter: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m1 := scripted.FromSteps("m1", tt.first...)
			m2 := scripted.FromSteps("m2", tt.second...)
			var tools []tool.Tool
			if tt.tools != nil {
				tools = tt.tools(t)
			}
			first := newLlm(t, engine.LlmAgentConfig{Name: "first", Model: m1, Tools: tools})
			second := newLlm(t, engine.LlmAgentConfig{Name: "second", Model: m2})
			loop, err := engine.NewLoopAgent(engine.AgentInfo{Name: "loop", SubAgents: []engine.Agent{first, second}}, new(tt.maxIter))
			if err != nil {
				t.Fatal(err)
			}
			r, svc := mustRunner(t, loop)
			evs := mustRun(t, r, svc, "s", userText("Start."), engine.RunConfig{})
			wantEvents(t, "events", evs, tt.want...)
			if got := [2]int{len(m1.Requests()), len(m2.Requests())}; got != tt.wantReqs {
				t.Errorf("model calls = %v, want %v", got, tt.wantReqs)
			}
		})
	}
}

// A LoopAgent without max_iterations whose round yields no event can never
// be ended (only an event escalates): its rounds repeated forever, without
// a model call counted against max_llm_calls, an event stored or a look at
// the context, so a loop of an empty SequentialAgent spun a core after its
// client had gone. The round fails naming the loop; with max_iterations
// the same rounds end.
func TestLoopAgentRoundWithoutEvents(t *testing.T) {
	t.Parallel()
	empty := newSeq(t, "empty")
	loop, err := engine.NewLoopAgent(engine.AgentInfo{Name: "loop", SubAgents: []engine.Agent{empty}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, svc := mustRunner(t, newSeq(t, "root", loop))
	evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{})
	var le *engine.LoopWithoutEventsError
	if !errors.As(err, &le) || le.Agent != "loop" || !strings.Contains(err.Error(), `loop agent "loop": round 1 of its sub-agents yielded no event`) || !strings.Contains(err.Error(), "set max_iterations") {
		t.Fatalf("err = %v (events %d), want a LoopWithoutEventsError for loop", err, len(evs))
	}

	bounded, err := engine.NewLoopAgent(engine.AgentInfo{Name: "loop", SubAgents: []engine.Agent{newSeq(t, "empty")}}, new(3))
	if err != nil {
		t.Fatal(err)
	}
	r, svc = mustRunner(t, bounded)
	if evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{}); len(evs) != 0 {
		t.Errorf("a bounded loop of an empty agent yielded %s", eventsJSON(evs))
	}
}

// A workflow agent at the root has no LlmAgent to record an error event:
// the failure only ends the run (google-adk's legacy path).
func TestWorkflowRootFailureStoresNoErrorEvent(t *testing.T) {
	t.Parallel()
	m := scripted.FromSteps("m", scripted.Step{Err: errors.New("backend down")})
	step := newLlm(t, engine.LlmAgentConfig{Name: "step", Model: m})
	r, svc := mustRunner(t, newSeq(t, "pipeline", step))
	evs, err := run(t, r, svc, "s", userText("Go."), engine.RunConfig{})
	var me *engine.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v, want a ModelError", err)
	}
	if len(evs) != 0 {
		t.Errorf("yielded:%s", eventsJSON(evs))
	}
	if stored := loadSession(t, svc, "s").Events(); len(stored) != 1 {
		t.Errorf("stored:%s\nwant only the user event", eventsJSON(stored))
	}
}

func TestSequentialRootHookOrder(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	named := func(hook string) func(ctx callbacks.CallbackContext) (*genai.Content, error) {
		return func(ctx callbacks.CallbackContext) (*genai.Content, error) {
			log.add(hook + " " + ctx.AgentName())
			return nil, nil
		}
	}
	p := &testPlugin{name: "observer",
		beforeRun: func(callbacks.ReadonlyContext) (*genai.Content, error) {
			log.add("observer.before_run")
			return nil, nil
		},
		afterRun:    func(callbacks.ReadonlyContext) error { log.add("observer.after_run"); return nil },
		beforeAgent: named("observer.before_agent"),
		afterAgent:  named("observer.after_agent"),
		beforeModel: func(ctx callbacks.CallbackContext, _ *model.Request) (*model.Response, error) {
			log.add("observer.before_model " + ctx.AgentName())
			return nil, nil
		},
		onEvent: func(_ callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
			log.add("observer.on_event " + e.Author)
			return nil, nil
		},
	}
	m1 := scripted.New("m1", text("one"))
	m2 := scripted.New("m2", text("two"))
	first := newLlm(t, engine.LlmAgentConfig{Name: "first_step", Model: m1,
		BeforeAgent: []callbacks.BeforeAgent{named("agent.before_agent")},
		AfterAgent:  []callbacks.AfterAgent{named("agent.after_agent")},
	})
	second := newLlm(t, engine.LlmAgentConfig{Name: "second_step", Model: m2})
	pipeline, err := engine.NewSequentialAgent(engine.AgentInfo{Name: "pipeline", SubAgents: []engine.Agent{first, second},
		BeforeAgent: []callbacks.BeforeAgent{named("agent.before_agent")},
		AfterAgent:  []callbacks.AfterAgent{named("agent.after_agent")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, svc := mustRunner(t, pipeline, p)
	mustRun(t, r, svc, "s", userText("Run the pipeline."), engine.RunConfig{})
	want := []string{
		"observer.before_run",
		"observer.before_agent pipeline", "agent.before_agent pipeline",
		"observer.before_agent first_step", "agent.before_agent first_step",
		"observer.before_model first_step",
		"observer.on_event first_step",
		"observer.after_agent first_step", "agent.after_agent first_step",
		"observer.before_agent second_step",
		"observer.before_model second_step",
		"observer.on_event second_step",
		"observer.after_agent second_step",
		"observer.after_agent pipeline", "agent.after_agent pipeline",
		"observer.after_run",
	}
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("hooks:\ngot  %q\nwant %q", got, want)
	}
}

// Under an LlmAgent root (google-adk 2.13's node runtime) an agent's run
// ends at its transfer: its after_agent callbacks do not run, and a
// resumable app checkpoints it as ended before the target runs. Inside a
// workflow root the target runs within the transferring agent's run, whose
// after_agent runs once the target is done.
func TestTransferEndsTransferringAgentRun(t *testing.T) {
	t.Parallel()
	after := func(name string) []callbacks.AfterAgent {
		return []callbacks.AfterAgent{func(callbacks.CallbackContext) (*genai.Content, error) {
			return modelContent(name + " after"), nil
		}}
	}
	tree := func(t *testing.T) *engine.LlmAgent {
		sub := newLlm(t, engine.LlmAgentConfig{Name: "sub", Description: "Sub.", Model: scripted.New("sub-m", text("Sub reply."))})
		return newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("root-m", calls(transferCall("sub"))),
			SubAgents: []engine.Agent{sub}, AfterAgent: after("root")})
	}
	call := `{"author":"root","content":{"parts":[{"functionCall":{"args":{"agent_name":"sub"},"id":"adk-*","name":"transfer_to_agent"}}],"role":"model"}}`
	resp := `{"author":"root","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"transfer_to_agent","response":{"result":null}}}],"role":"user"},"actions":{"transferToAgent":"sub"}}`
	reply := `{"author":"sub","content":{"parts":[{"text":"Sub reply."}],"role":"model"}}`
	t.Run("node runtime", func(t *testing.T) {
		t.Parallel()
		r, svc := mustRunner(t, tree(t))
		wantEvents(t, "events", mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{}), call, resp, reply)
	})
	t.Run("node runtime, resumable", func(t *testing.T) {
		t.Parallel()
		r, svc := resumableRunner(t, tree(t))
		wantEvents(t, "events", mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{}), call, resp,
			`{"author":"root","actions":{"endOfAgent":true}}`, reply, `{"author":"sub","actions":{"endOfAgent":true}}`)
	})
	t.Run("node runtime, transfer set by a callback", func(t *testing.T) {
		t.Parallel()
		// Any event of the agent's own that transfers ends its run, here a
		// text answer an after_model callback marked.
		sub := newLlm(t, engine.LlmAgentConfig{Name: "sub", Description: "Sub.", Model: scripted.New("sub-m", text("Sub reply."))})
		root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: scripted.New("root-m", text("Root reply.")), SubAgents: []engine.Agent{sub},
			AfterModel: []callbacks.AfterModel{func(ctx callbacks.CallbackContext, _ *model.Response) (*model.Response, error) {
				ctx.Actions().TransferToAgent = "sub"
				return nil, nil
			}}, AfterAgent: after("root")})
		r, svc := mustRunner(t, root)
		wantEvents(t, "events", mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{}),
			`{"author":"root","content":{"parts":[{"text":"Root reply."}],"role":"model"},"actions":{"transferToAgent":"sub"}}`, reply)
	})
	t.Run("workflow root", func(t *testing.T) {
		t.Parallel()
		r, svc := mustRunner(t, newSeq(t, "pipe", tree(t)))
		wantEvents(t, "events", mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{}), call, resp, reply,
			`{"author":"root","content":{"parts":[{"text":"root after"}],"role":"model"}}`)
	})
}
