package engine_test

// Runner behaviour: the user event, storage of events, run metadata,
// invocation ids, sessions, the agent that answers the next turn, and the
// run-level plugin hooks.

import (
	"context"
	"errors"
	"regexp"
	"slices"
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

func TestRunnerStoresUserEventWithStateDelta(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("Hi."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Instruction: "Greet with {greeting}."})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Hello"), engine.RunConfig{StateDelta: map[string]any{"greeting": "hola", "n": 1}})

	// The user event is stored, not yielded.
	wantEvents(t, "yielded", evs, `{"author":"assistant","content":{"parts":[{"text":"Hi."}],"role":"model"}}`)
	s := loadSession(t, svc, "s")
	wantEvents(t, "stored", s.Events(),
		`{"author":"user","content":{"parts":[{"text":"Hello"}],"role":"user"},"actions":{"stateDelta":{"greeting":"hola","n":1}}}`,
		`{"author":"assistant","content":{"parts":[{"text":"Hi."}],"role":"model"}}`)
	if got := s.Events()[0].InvocationID; got != evs[0].InvocationID {
		t.Errorf("user event invocation id %q, want the turn's %q", got, evs[0].InvocationID)
	}
	if v, _ := s.StateValue("greeting"); v != "hola" {
		t.Errorf("state greeting = %v, want hola", v)
	}
	// The delta is applied before the agent runs.
	if got, want := m.Requests()[0].SystemInstructionText(), "Greet with hola.\n\n"+identity("assistant"); got != want {
		t.Errorf("system instruction = %q, want %q", got, want)
	}
}

func TestRunnerStreamingPartialEventsYieldedNotStored(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("Hello, world"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "streamer", Model: m})
	svc := &appendRecorder{InMemoryService: session.NewInMemoryService()}
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: a, Sessions: svc})
	if err != nil {
		t.Fatal(err)
	}
	evs := mustRun(t, r, svc, "s", userText("Say hello."), engine.RunConfig{StreamingMode: engine.StreamingModeSSE})
	wantEvents(t, "yielded", evs,
		`{"author":"streamer","content":{"parts":[{"text":"Hello, "}],"role":"model"},"partial":true}`,
		`{"author":"streamer","content":{"parts":[{"text":"world"}],"role":"model"},"partial":true}`,
		// The aggregated final response: google-adk's explicit partial=False.
		`{"author":"streamer","content":{"parts":[{"text":"Hello, world"}],"role":"model"},"partial":false}`)
	if len(evs) == 3 && (evs[0].ID != evs[2].ID || evs[1].ID != evs[2].ID) {
		t.Errorf("partial events and the final event must share one id, got %q %q %q", evs[0].ID, evs[1].ID, evs[2].ID)
	}
	stored := loadSession(t, svc, "s").Events()
	wantEvents(t, "stored", stored,
		`{"author":"user","content":{"parts":[{"text":"Say hello."}],"role":"user"}}`,
		`{"author":"streamer","content":{"parts":[{"text":"Hello, world"}],"role":"model"},"partial":false}`)
	// The runner itself never hands a partial event to the service.
	if n := svc.partials.Load(); n != 0 {
		t.Errorf("%d partial events were passed to AppendEvent", n)
	}
}

// appendRecorder counts the partial events a runner asks it to append.
type appendRecorder struct {
	*session.InMemoryService
	partials atomic.Int32
}

func (a *appendRecorder) AppendEvent(ctx context.Context, s *session.Session, e *session.Event) error {
	if e.Partial {
		a.partials.Add(1)
	}
	return a.InMemoryService.AppendEvent(ctx, s, e)
}

func TestRunnerCustomMetadataOnEveryEvent(t *testing.T) {
	t.Parallel()
	final := text("Done.")
	final.CustomMetadata = map[string]any{"k": "model"}
	m := scripted.New("m", calls(fcall("get_weather", map[string]any{"city": "Paris"})), final)
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{weatherTool(t)}})
	r, svc := mustRunner(t, a)
	// Keys with google-adk's internal prefix are not the caller's to set.
	cfg := engine.RunConfig{CustomMetadata: map[string]any{"run": "r1", "k": "run", engine.InternalMetadataPrefix + "x": "dropped"}}
	evs := mustRun(t, r, svc, "s", userText("Weather?"), cfg)
	wantEvents(t, "yielded", evs,
		`{"author":"assistant","content":{"parts":[{"functionCall":{"args":{"city":"Paris"},"id":"adk-*","name":"get_weather"}}],"role":"model"},"customMetadata":{"k":"run","run":"r1"}}`,
		`{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"get_weather","response":{"temp":21}}}],"role":"user"},"actions":{"stateDelta":{"last_city":"Paris"}},"customMetadata":{"k":"run","run":"r1"}}`,
		// The event's own metadata wins over the run's.
		`{"author":"assistant","content":{"parts":[{"text":"Done."}],"role":"model"},"customMetadata":{"k":"model","run":"r1"}}`)
	user := loadSession(t, svc, "s").Events()[0]
	wantEvents(t, "stored user event", []*session.Event{user},
		`{"author":"user","content":{"parts":[{"text":"Weather?"}],"role":"user"},"customMetadata":{"k":"run","run":"r1"}}`)
}

var invocationIDPattern = regexp.MustCompile(`^e-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestRunnerInvocationIDSharedByTurn(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", calls(fcall("get_weather", map[string]any{"city": "Oslo"})), text("Cold."), text("Bye."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{weatherTool(t)}})
	r, svc := mustRunner(t, a)
	turn1 := mustRun(t, r, svc, "s", userText("Weather?"), engine.RunConfig{})
	turn2 := mustRun(t, r, svc, "s", userText("Thanks."), engine.RunConfig{})
	if len(turn1) != 3 || len(turn2) != 1 {
		t.Fatalf("got %d and %d events:%s%s", len(turn1), len(turn2), eventsJSON(turn1), eventsJSON(turn2))
	}
	id1, id2 := turn1[0].InvocationID, turn2[0].InvocationID
	if !invocationIDPattern.MatchString(id1) || !invocationIDPattern.MatchString(id2) {
		t.Fatalf("invocation ids %q, %q are not e-<uuid>", id1, id2)
	}
	if id1 == id2 {
		t.Fatalf("two turns share invocation id %q", id1)
	}
	stored := loadSession(t, svc, "s").Events()
	want := []string{id1, id1, id1, id1, id2, id2}
	var got []string
	for _, ev := range stored {
		got = append(got, ev.InvocationID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("stored invocation ids = %q, want %q", got, want)
	}
	if ids := map[string]bool{}; true {
		for _, ev := range stored {
			if ids[ev.ID] {
				t.Errorf("duplicate event id %q", ev.ID)
			}
			ids[ev.ID] = true
		}
	}
}

func TestRunnerAutoCreateSession(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		auto       bool
		wantErr    bool
		wantStored int
	}{
		{name: "off: missing session is an error", auto: false, wantErr: true},
		{name: "on: missing session is created", auto: true, wantStored: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", text("Hi."))
			svc := session.NewInMemoryService()
			r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: newLlm(t, engine.LlmAgentConfig{Name: "a", Model: m}), Sessions: svc, AutoCreateSession: tt.auto})
			if err != nil {
				t.Fatal(err)
			}
			var evs []*session.Event
			var runErr error
			for ev, err := range r.Run(context.Background(), "u", "missing", userText("Hi"), engine.RunConfig{}) {
				if err != nil {
					runErr = err
					break
				}
				evs = append(evs, ev)
			}
			if tt.wantErr {
				if !errors.Is(runErr, session.ErrNotFound) {
					t.Fatalf("error = %v, want one wrapping session.ErrNotFound", runErr)
				}
				if len(evs) != 0 || len(m.Requests()) != 0 {
					t.Fatalf("got %d events and %d model calls, want none", len(evs), len(m.Requests()))
				}
				if _, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "missing"}); !errors.Is(err, session.ErrNotFound) {
					t.Fatalf("the session was created: %v", err)
				}
				return
			}
			if runErr != nil {
				t.Fatal(runErr)
			}
			wantEvents(t, "yielded", evs, `{"author":"a","content":{"parts":[{"text":"Hi."}],"role":"model"}}`)
			if n := len(loadSession(t, svc, "missing").Events()); n != tt.wantStored {
				t.Fatalf("stored %d events, want %d", n, tt.wantStored)
			}
		})
	}
}

func TestRunnerNextTurnAgentSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		disallowToParent bool
		// turn-2 responder and the number of calls each model gets.
		wantTurn2Author string
		wantRoot        int
		wantBilling     int
	}{
		{name: "the transferred-to sub-agent keeps the conversation", wantTurn2Author: "billing", wantRoot: 1, wantBilling: 2},
		{name: "a sub-agent that cannot transfer to its parent hands it back to the root", disallowToParent: true, wantTurn2Author: "root", wantRoot: 2, wantBilling: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mRoot := scripted.New("root-model", calls(transferCall("billing")), text("root again"))
			mBill := scripted.New("billing-model", text("billing here"), text("billing again"))
			billing := newLlm(t, engine.LlmAgentConfig{Name: "billing", Description: "Billing.", Model: mBill, DisallowTransferToParent: tt.disallowToParent})
			root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: mRoot, SubAgents: []engine.Agent{billing}})
			r, svc := mustRunner(t, root)
			turn1 := mustRun(t, r, svc, "s", userText("Invoice?"), engine.RunConfig{})
			wantEvents(t, "turn 1", turn1,
				`{"author":"root","content":{"parts":[{"functionCall":{"args":{"agent_name":"billing"},"id":"adk-*","name":"transfer_to_agent"}}],"role":"model"}}`,
				`{"author":"root","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"transfer_to_agent","response":{"result":null}}}],"role":"user"},"actions":{"transferToAgent":"billing"}}`,
				`{"author":"billing","content":{"parts":[{"text":"billing here"}],"role":"model"}}`)
			turn2 := mustRun(t, r, svc, "s", userText("And now?"), engine.RunConfig{})
			if len(turn2) != 1 || turn2[0].Author != tt.wantTurn2Author {
				t.Fatalf("turn 2 events:%s\nwant one by %s", eventsJSON(turn2), tt.wantTurn2Author)
			}
			if n := len(mRoot.Requests()); n != tt.wantRoot {
				t.Errorf("root model called %d times, want %d", n, tt.wantRoot)
			}
			if n := len(mBill.Requests()); n != tt.wantBilling {
				t.Errorf("billing model called %d times, want %d", n, tt.wantBilling)
			}
		})
	}
}

func TestRunnerFunctionResponseResumesCallingAgent(t *testing.T) {
	t.Parallel()
	mRoot := scripted.New("root-model", calls(transferCall("worker")))
	mWork := scripted.New("worker-model", calls(fcallID("call-1", "approve", nil)), text("Approved, done."))
	approve := newLongTool(t, "approve", func(callbacks.ToolContext, map[string]any) (any, error) { return nil, nil })
	// The worker cannot transfer back to its parent, so without the function
	// response routing the root would answer the second turn.
	worker := newLlm(t, engine.LlmAgentConfig{Name: "worker", Model: mWork, Tools: []tool.Tool{approve}, DisallowTransferToParent: true})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: mRoot, SubAgents: []engine.Agent{worker}})
	r, svc := mustRunner(t, root)

	turn1 := mustRun(t, r, svc, "s", userText("Do the job."), engine.RunConfig{})
	if len(turn1) != 3 {
		t.Fatalf("turn 1:%s", eventsJSON(turn1))
	}
	wantEvents(t, "turn 1 last event", turn1[2:],
		`{"author":"worker","content":{"parts":[{"functionCall":{"id":"call-1","name":"approve"}}],"role":"model"},"longRunningToolIds":["call-1"]}`)

	turn2 := mustRun(t, r, svc, "s", userFuncResponse("call-1", "approve", map[string]any{"ok": true}), engine.RunConfig{})
	wantEvents(t, "turn 2", turn2, `{"author":"worker","content":{"parts":[{"text":"Approved, done."}],"role":"model"}}`)
	inv := turn1[0].InvocationID
	if turn2[0].InvocationID != inv {
		t.Errorf("turn 2 invocation id %q, want the call's %q", turn2[0].InvocationID, inv)
	}
	stored := loadSession(t, svc, "s").Events()
	user := stored[len(stored)-2]
	if user.Author != "user" || user.InvocationID != inv {
		t.Errorf("stored function response event: %s, invocation %q, want %q", evView(user), user.InvocationID, inv)
	}
	if n := len(mRoot.Requests()); n != 1 {
		t.Errorf("root model called %d times, want 1", n)
	}
	reqs := mWork.Requests()
	if len(reqs) != 2 {
		t.Fatalf("worker model called %d times, want 2", len(reqs))
	}
	last := reqs[1].Contents[len(reqs[1].Contents)-1]
	wantJSON(t, "last content of the worker's second request", last,
		`{"parts":[{"functionResponse":{"id":"call-1","name":"approve","response":{"ok":true}}}],"role":"user"}`)
}

func TestRunnerBeforeRunContentEndsRun(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	m := scripted.New("m", text("unused"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, BeforeAgent: []callbacks.BeforeAgent{logBeforeAgent(log, "assistant")}})
	p := &testPlugin{name: "gate", log: log, beforeRun: func(callbacks.ReadonlyContext) (*genai.Content, error) {
		return modelContent("Closed today."), nil
	}}
	r, svc := mustRunner(t, a, p)
	evs := mustRun(t, r, svc, "s", userText("Open?"), engine.RunConfig{})
	wantEvents(t, "yielded", evs, `{"author":"model","content":{"parts":[{"text":"Closed today."}],"role":"model"}}`)
	wantEvents(t, "stored", loadSession(t, svc, "s").Events(),
		`{"author":"user","content":{"parts":[{"text":"Open?"}],"role":"user"}}`,
		`{"author":"model","content":{"parts":[{"text":"Closed today."}],"role":"model"}}`)
	if n := len(m.Requests()); n != 0 {
		t.Errorf("model called %d times, want 0", n)
	}
	want := []string{"gate.on_user_message", "gate.before_run", "gate.on_event", "gate.after_run"}
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("hooks = %q, want %q", got, want)
	}
}

func TestRunnerOnUserMessageReplacementStored(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("OK."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m})
	p := &testPlugin{name: "rewriter", onUserMessage: func(_ callbacks.ReadonlyContext, msg *genai.Content) (*genai.Content, error) {
		return userText("[rewritten] " + msg.Parts[0].Text), nil
	}}
	r, svc := mustRunner(t, a, p)
	mustRun(t, r, svc, "s", userText("original"), engine.RunConfig{})
	stored := loadSession(t, svc, "s").Events()
	wantEvents(t, "stored user event", stored[:1], `{"author":"user","content":{"parts":[{"text":"[rewritten] original"}],"role":"user"}}`)
	wantJSON(t, "request contents", m.Requests()[0].Contents, `[{"parts":[{"text":"[rewritten] original"}],"role":"user"}]`)
}

func TestRunnerOnEventReplacementYieldedAndStored(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("secret 1234"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m})
	p := &testPlugin{name: "redactor", onEvent: func(_ callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
		if e.Content == nil || e.Content.Parts[0].Text != "secret 1234" {
			return nil, nil
		}
		return &session.Event{Author: "assistant", Response: model.Response{Content: modelContent("secret [redacted]")}}, nil
	}}
	r, svc := mustRunner(t, a, p)
	evs := mustRun(t, r, svc, "s", userText("Tell me."), engine.RunConfig{})
	want := `{"author":"assistant","content":{"parts":[{"text":"secret [redacted]"}],"role":"model"}}`
	wantEvents(t, "yielded", evs, want)
	stored := loadSession(t, svc, "s").Events()
	wantEvents(t, "stored", stored[1:], want)
	if len(evs) == 1 && len(stored) == 2 && (stored[1].ID != evs[0].ID || evs[0].InvocationID == "" || stored[1].InvocationID != evs[0].InvocationID) {
		t.Errorf("the replacement must keep the original event's id and invocation id: yielded %q/%q stored %q/%q", evs[0].ID, evs[0].InvocationID, stored[1].ID, stored[1].InvocationID)
	}
}

// google-adk's Runner._get_output_event merges only the fields a
// replacement event sets onto the original event; what it leaves unset
// (here actions and author) stays as it was.
func TestRunnerOnEventPartialReplacementKeepsOriginalFields(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("secret 1234"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, OutputKey: "answer"})
	p := &testPlugin{name: "redactor", onEvent: func(_ callbacks.ReadonlyContext, e *session.Event) (*session.Event, error) {
		if e.Content == nil || e.Content.Parts[0].Text != "secret 1234" {
			return nil, nil
		}
		return &session.Event{Response: model.Response{Content: modelContent("secret [redacted]")}}, nil
	}}
	r, svc := mustRunner(t, a, p)
	evs := mustRun(t, r, svc, "s", userText("Tell me."), engine.RunConfig{})
	want := `{"author":"assistant","content":{"parts":[{"text":"secret [redacted]"}],"role":"model"},"actions":{"stateDelta":{"answer":"secret 1234"}}}`
	wantEvents(t, "yielded", evs, want)
	wantEvents(t, "stored", loadSession(t, svc, "s").Events()[1:], want)
}

func TestRunnerAfterRunCalledOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		early     bool
		wantCount int
	}{
		{name: "turn with a tool call", wantCount: 3},
		{name: "before_run ends the run", early: true, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := &hookLog{}
			m := scripted.New("m", calls(fcall("get_weather", map[string]any{"city": "Rome"})), text("Warm."))
			a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{weatherTool(t)}})
			p := &testPlugin{name: "p", log: log}
			if tt.early {
				p.beforeRun = func(callbacks.ReadonlyContext) (*genai.Content, error) { return modelContent("No."), nil }
			}
			r, svc := mustRunner(t, a, p)
			evs := mustRun(t, r, svc, "s", userText("Weather?"), engine.RunConfig{})
			if len(evs) != tt.wantCount {
				t.Fatalf("got %d events:%s", len(evs), eventsJSON(evs))
			}
			if n := log.count("p.after_run"); n != 1 {
				t.Errorf("after_run called %d times, want 1", n)
			}
			if got := log.get(); got[len(got)-1] != "p.after_run" {
				t.Errorf("after_run is not the last hook: %q", got)
			}
		})
	}
}

// google-adk treats a caller that stops reading as a clean completion: it
// still runs after_run and only logs an after_run failure then.
func TestRunnerAfterRunErrorWhenCallerStopsEarly(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	m := scripted.New("m", calls(fcall("get_weather", map[string]any{"city": "Rome"})), text("Warm."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{weatherTool(t)}})
	p := &testPlugin{name: "p", log: log, afterRun: func(callbacks.ReadonlyContext) error { return errors.New("after_run failed") }}
	r, svc := mustRunner(t, a, p)
	if _, err := svc.Create(context.Background(), &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		for _, err := range r.Run(context.Background(), "u", "s", userText("Weather?"), engine.RunConfig{}) {
			if err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			break
		}
	}()
	if panicked != nil {
		t.Fatalf("stopping after the first event panicked: %v", panicked)
	}
	if n := log.count("p.after_run"); n != 1 {
		t.Errorf("after_run called %d times, want 1", n)
	}
}

// google-adk notifies on_run_error of any failure in the run, including a
// failing before_run hook.
func TestRunnerOnRunErrorWhenBeforeRunFails(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	m := scripted.New("m", text("unused"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m})
	p := &testPlugin{name: "p", log: log, beforeRun: func(callbacks.ReadonlyContext) (*genai.Content, error) {
		return nil, errors.New("quota exceeded")
	}}
	r, svc := mustRunner(t, a, p)
	_, err := run(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
	var pe *callbacks.PluginError
	if !errors.As(err, &pe) || pe.Plugin != "p" || pe.Hook != "before_run_callback" {
		t.Fatalf("error = %v, want a PluginError from p's before_run_callback", err)
	}
	want := []string{"p.on_user_message", "p.before_run", "p.on_run_error"}
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("hooks = %q, want %q", got, want)
	}
}

// Under a root LlmAgent google-adk tells on_run_error of a failing
// on_user_message hook too, before anything is stored.
func TestRunnerOnRunErrorWhenOnUserMessageFails(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: scripted.New("m")})
	p := &testPlugin{name: "p", log: log, onUserMessage: func(callbacks.ReadonlyContext, *genai.Content) (*genai.Content, error) {
		return nil, errors.New("bad message")
	}}
	r, svc := mustRunner(t, a, p)
	_, err := run(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
	var pe *callbacks.PluginError
	if !errors.As(err, &pe) || pe.Hook != "on_user_message_callback" {
		t.Fatalf("error = %v, want a PluginError from p's on_user_message_callback", err)
	}
	if want := []string{"p.on_user_message", "p.on_run_error"}; !slices.Equal(log.get(), want) {
		t.Errorf("hooks = %q, want %q", log.get(), want)
	}
	if n := len(loadSession(t, svc, "s").Events()); n != 0 {
		t.Errorf("%d events stored, want none", n)
	}
}

func TestRunnerHookOrder(t *testing.T) {
	t.Parallel()
	log := &hookLog{}
	echo := newTool(t, "echo", objParams("value"), func(_ callbacks.ToolContext, args map[string]any) (any, error) {
		log.add("tool.echo")
		return args, nil
	})
	m := scripted.New("m", calls(fcall("echo", map[string]any{"value": "hi"})), text("Echoed."))
	a := newLlm(t, engine.LlmAgentConfig{
		Name: "assistant", Model: m, Instruction: "Use tools.", Tools: []tool.Tool{echo},
		BeforeAgent:  []callbacks.BeforeAgent{logBeforeAgent(log, "assistant")},
		AfterAgent:   []callbacks.AfterAgent{logAfterAgent(log, "assistant")},
		BeforeModel:  []callbacks.BeforeModel{logBeforeModel(log, "assistant")},
		AfterModel:   []callbacks.AfterModel{logAfterModel(log, "assistant")},
		OnModelError: []callbacks.OnModelError{logOnModelError(log, "assistant")},
		BeforeTool:   []callbacks.BeforeTool{logBeforeTool(log, "assistant")},
		AfterTool:    []callbacks.AfterTool{logAfterTool(log, "assistant")},
		OnToolError:  []callbacks.OnToolError{logOnToolError(log, "assistant")},
	})
	r, svc := mustRunner(t, a, &testPlugin{name: "first", log: log}, &testPlugin{name: "second", log: log})
	mustRun(t, r, svc, "s", userText("Echo hi."), engine.RunConfig{})
	model := []string{
		"first.before_model", "second.before_model", "assistant.before_model",
		"first.after_model", "second.after_model", "assistant.after_model",
		"first.on_event", "second.on_event",
	}
	want := []string{
		"first.on_user_message", "second.on_user_message",
		"first.before_run", "second.before_run",
		"first.before_agent", "second.before_agent", "assistant.before_agent",
	}
	want = append(want, model...)
	want = append(want,
		"first.before_tool", "second.before_tool", "assistant.before_tool",
		"tool.echo",
		"first.after_tool", "second.after_tool", "assistant.after_tool",
		"first.on_event", "second.on_event")
	want = append(want, model...)
	want = append(want,
		"first.after_agent", "second.after_agent", "assistant.after_agent",
		"first.after_run", "second.after_run")
	if got := log.get(); !slices.Equal(got, want) {
		t.Errorf("hook order:\ngot  %q\nwant %q", got, want)
	}
}

// In every chain the plugins run first, in registration order; the first
// non-nil result wins and neither later plugins nor the agent's callbacks
// run.
func TestRunnerPluginPrecedence(t *testing.T) {
	t.Parallel()
	type setup struct {
		steps   []scripted.Step
		toolErr bool
		// answer makes a plugin (or, with the name "agent", the agent)
		// answer in the hook under test with a value naming who answered.
		plugin func(p *testPlugin, who string)
		agent  func(cfg *engine.LlmAgentConfig, l *hookLog)
	}
	callT := scripted.Step{Response: calls(fcall("t", nil))}
	done := scripted.Step{Response: text("done")}
	tests := []struct {
		hook string
		setup
		wantEvents []string
		wantModel  int
		wantTool   bool
	}{
		{
			hook: "before_agent",
			setup: setup{
				plugin: func(p *testPlugin, who string) {
					p.beforeAgent = func(callbacks.CallbackContext) (*genai.Content, error) { return modelContent("from " + who), nil }
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.BeforeAgent = []callbacks.BeforeAgent{func(callbacks.CallbackContext) (*genai.Content, error) {
						l.add("agent.before_agent")
						return modelContent("from agent"), nil
					}}
				},
			},
			wantEvents: []string{`{"author":"assistant","content":{"parts":[{"text":"from p2"}],"role":"model"}}`},
		},
		{
			hook: "after_agent",
			setup: setup{
				steps: []scripted.Step{done},
				plugin: func(p *testPlugin, who string) {
					p.afterAgent = func(callbacks.CallbackContext) (*genai.Content, error) { return modelContent("from " + who), nil }
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.AfterAgent = []callbacks.AfterAgent{func(callbacks.CallbackContext) (*genai.Content, error) {
						l.add("agent.after_agent")
						return modelContent("from agent"), nil
					}}
				},
			},
			wantEvents: []string{
				`{"author":"assistant","content":{"parts":[{"text":"done"}],"role":"model"}}`,
				`{"author":"assistant","content":{"parts":[{"text":"from p2"}],"role":"model"}}`,
			},
			wantModel: 1,
		},
		{
			hook: "before_model",
			setup: setup{
				plugin: func(p *testPlugin, who string) {
					p.beforeModel = func(callbacks.CallbackContext, *model.Request) (*model.Response, error) {
						return text("from " + who), nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.BeforeModel = []callbacks.BeforeModel{func(callbacks.CallbackContext, *model.Request) (*model.Response, error) {
						l.add("agent.before_model")
						return text("from agent"), nil
					}}
				},
			},
			wantEvents: []string{`{"author":"assistant","content":{"parts":[{"text":"from p2"}],"role":"model"}}`},
		},
		{
			hook: "after_model",
			setup: setup{
				steps: []scripted.Step{done},
				plugin: func(p *testPlugin, who string) {
					p.afterModel = func(callbacks.CallbackContext, *model.Response) (*model.Response, error) {
						return text("from " + who), nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.AfterModel = []callbacks.AfterModel{func(callbacks.CallbackContext, *model.Response) (*model.Response, error) {
						l.add("agent.after_model")
						return text("from agent"), nil
					}}
				},
			},
			wantEvents: []string{`{"author":"assistant","content":{"parts":[{"text":"from p2"}],"role":"model"}}`},
			wantModel:  1,
		},
		{
			hook: "on_model_error",
			setup: setup{
				steps: []scripted.Step{{Err: errors.New("backend down")}},
				plugin: func(p *testPlugin, who string) {
					p.onModelError = func(callbacks.CallbackContext, *model.Request, error) (*model.Response, error) {
						return text("from " + who), nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.OnModelError = []callbacks.OnModelError{func(callbacks.CallbackContext, *model.Request, error) (*model.Response, error) {
						l.add("agent.on_model_error")
						return text("from agent"), nil
					}}
				},
			},
			wantEvents: []string{`{"author":"assistant","content":{"parts":[{"text":"from p2"}],"role":"model"}}`},
			wantModel:  1,
		},
		{
			hook: "before_tool",
			setup: setup{
				steps: []scripted.Step{callT, done},
				plugin: func(p *testPlugin, who string) {
					p.beforeTool = func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
						return map[string]any{"from": who}, nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.BeforeTool = []callbacks.BeforeTool{func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
						l.add("agent.before_tool")
						return map[string]any{"from": "agent"}, nil
					}}
				},
			},
			wantEvents: []string{
				`{"author":"assistant","content":{"parts":[{"functionCall":{"id":"adk-*","name":"t"}}],"role":"model"}}`,
				`{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"t","response":{"from":"p2"}}}],"role":"user"}}`,
				`{"author":"assistant","content":{"parts":[{"text":"done"}],"role":"model"}}`,
			},
			wantModel: 2,
		},
		{
			hook: "after_tool",
			setup: setup{
				steps: []scripted.Step{callT, done},
				plugin: func(p *testPlugin, who string) {
					p.afterTool = func(callbacks.ToolContext, callbacks.Tool, map[string]any, map[string]any) (map[string]any, error) {
						return map[string]any{"from": who}, nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.AfterTool = []callbacks.AfterTool{func(callbacks.ToolContext, callbacks.Tool, map[string]any, map[string]any) (map[string]any, error) {
						l.add("agent.after_tool")
						return map[string]any{"from": "agent"}, nil
					}}
				},
			},
			wantEvents: []string{
				`{"author":"assistant","content":{"parts":[{"functionCall":{"id":"adk-*","name":"t"}}],"role":"model"}}`,
				`{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"t","response":{"from":"p2"}}}],"role":"user"}}`,
				`{"author":"assistant","content":{"parts":[{"text":"done"}],"role":"model"}}`,
			},
			wantModel: 2,
			wantTool:  true,
		},
		{
			hook: "on_tool_error",
			setup: setup{
				steps:   []scripted.Step{callT, done},
				toolErr: true,
				plugin: func(p *testPlugin, who string) {
					p.onToolError = func(callbacks.ToolContext, callbacks.Tool, map[string]any, error) (map[string]any, error) {
						return map[string]any{"from": who}, nil
					}
				},
				agent: func(c *engine.LlmAgentConfig, l *hookLog) {
					c.OnToolError = []callbacks.OnToolError{func(callbacks.ToolContext, callbacks.Tool, map[string]any, error) (map[string]any, error) {
						l.add("agent.on_tool_error")
						return map[string]any{"from": "agent"}, nil
					}}
				},
			},
			wantEvents: []string{
				`{"author":"assistant","content":{"parts":[{"functionCall":{"id":"adk-*","name":"t"}}],"role":"model"}}`,
				`{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"t","response":{"from":"p2"}}}],"role":"user"}}`,
				`{"author":"assistant","content":{"parts":[{"text":"done"}],"role":"model"}}`,
			},
			wantModel: 2,
			wantTool:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			t.Parallel()
			log := &hookLog{}
			m := scripted.FromSteps("m", tt.steps...)
			toolRan := false
			tl := newTool(t, "t", nil, func(callbacks.ToolContext, map[string]any) (any, error) {
				toolRan = true
				if tt.toolErr {
					return nil, errors.New("tool failed")
				}
				return map[string]any{"ran": true}, nil
			})
			cfg := engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{tl}}
			tt.agent(&cfg, log)
			p1, p2, p3 := &testPlugin{name: "p1", log: log}, &testPlugin{name: "p2", log: log}, &testPlugin{name: "p3", log: log}
			tt.plugin(p2, "p2")
			tt.plugin(p3, "p3")
			r, svc := mustRunner(t, newLlm(t, cfg), p1, p2, p3)
			evs := mustRun(t, r, svc, "s", userText("Go."), engine.RunConfig{})
			wantEvents(t, "events", evs, tt.wantEvents...)
			if n := len(m.Requests()); n != tt.wantModel {
				t.Errorf("model called %d times, want %d", n, tt.wantModel)
			}
			if toolRan != tt.wantTool {
				t.Errorf("tool ran = %v, want %v", toolRan, tt.wantTool)
			}
			got := log.get()
			for _, must := range []string{"p1." + tt.hook, "p2." + tt.hook} {
				if !slices.Contains(got, must) {
					t.Errorf("%s was not called: %q", must, got)
				}
			}
			for _, mustNot := range []string{"p3." + tt.hook, "agent." + tt.hook} {
				if slices.Contains(got, mustNot) {
					t.Errorf("%s was called after p2 answered: %q", mustNot, got)
				}
			}
			if i, j := slices.Index(got, "p1."+tt.hook), slices.Index(got, "p2."+tt.hook); i > j {
				t.Errorf("p1 must run before p2: %q", got)
			}
		})
	}
}

// save_input_blobs_as_artifacts (google-adk 2.13): a workflow root saves
// the message's inline data as artifacts and stores the message naming
// them; a root LlmAgent (the node runtime) ignores the flag.
func TestRunnerSaveInputBlobsAsArtifacts(t *testing.T) {
	t.Parallel()
	msg := func() *genai.Content {
		return &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "A picture."}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("png")}}}}
	}
	for _, tc := range []struct {
		name     string
		root     func(t *testing.T) engine.Agent
		replaced bool
	}{
		{"workflow root", func(t *testing.T) engine.Agent {
			return newSeq(t, "pipe", newLlm(t, engine.LlmAgentConfig{Name: "viewer", Model: scripted.New("m", text("Seen."))}))
		}, true},
		{"LlmAgent root", func(t *testing.T) engine.Agent {
			return newLlm(t, engine.LlmAgentConfig{Name: "viewer", Model: scripted.New("m", text("Seen."))})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, arts := session.NewInMemoryService(), artifact.NewInMemoryService()
			r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: tc.root(t), Sessions: svc, Artifacts: arts})
			if err != nil {
				t.Fatal(err)
			}
			mustRun(t, r, svc, "s", msg(), engine.RunConfig{SaveInputBlobsAsArtifacts: true})
			user := loadSession(t, svc, "s").Events()[0]
			names, err := arts.List(context.Background(), "app", "u", "s")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.replaced {
				wantEvents(t, "user event", []*session.Event{user}, `{"author":"user","content":{"parts":[{"text":"A picture."},{"inlineData":{"data":"cG5n","mimeType":"image/png"}}],"role":"user"}}`)
				if len(names) != 0 {
					t.Errorf("artifacts %v, want none", names)
				}
				return
			}
			name := "artifact_" + user.InvocationID + "_1"
			wantEvents(t, "user event", []*session.Event{user}, `{"author":"user","content":{"parts":[{"text":"A picture."},{"text":"Uploaded file: `+name+`. It is saved into artifacts"}],"role":"user"}}`)
			part, err := arts.Load(context.Background(), artifact.Key{AppName: "app", UserID: "u", SessionID: "s", Name: name}, artifact.Latest)
			if err != nil || part.InlineData == nil || string(part.InlineData.Data) != "png" {
				t.Errorf("artifact %s = %+v, %v; want the image", name, part, err)
			}
		})
	}
}
