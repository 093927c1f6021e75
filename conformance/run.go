package conformance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

const appName = "conformance"

// TurnTimeout bounds one turn, so an engine that hangs fails the scenario
// instead of the whole run.
var TurnTimeout = 20 * time.Second

// Result is the outcome of running one scenario on adkhost.
type Result struct {
	Name  string
	Trace []byte // normalized trace JSON, golden format
	// Notes are things the trace cannot show, e.g. the scripted model ran
	// out of responses (the Python runner treats that as a malformed
	// scenario; here it usually means the engine called the model more
	// often than google-adk).
	Notes []string
}

// RunFile loads and runs one scenario file.
func RunFile(path string) (*Result, error) {
	sc, err := LoadScenario(path)
	if err != nil {
		return nil, err
	}
	return Run(sc)
}

// Run executes a scenario on adkhost and returns its trace. An error is a
// harness failure (the scenario cannot be built or run at all); whatever
// the engine does, including failing, is recorded in the trace.
func Run(sc *Scenario) (*Result, error) { return RunWith(sc, RunOptions{}) }

// RunOptions select how Run executes a scenario.
type RunOptions struct {
	// Wasm, when set, runs the scenario's tools, callbacks and plugins in
	// the conformance Wasm guest through package host (Wasm mode) instead
	// of as native Go.
	Wasm *Wasm
}

// RunWith is Run with options.
func RunWith(sc *Scenario, opt RunOptions) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: panic while running on adkhost: %v\n%s", sc.File, r, debug.Stack())
		}
	}()
	res = &Result{Name: sc.Name}
	s := newScript(sc)
	log := &callbackLog{}
	b := &builder{script: s, log: log}
	if opt.Wasm != nil {
		b.wasm = &wasmRun{w: opt.Wasm, log: log}
		defer b.wasm.close()
	}
	root, err := b.agent(sc.Agent, false)
	if err != nil {
		return nil, fmt.Errorf("%s: building the agent tree: %w", sc.File, err)
	}
	var plugins []callbacks.Plugin
	for _, p := range sc.Plugins {
		if b.wasm != nil {
			wp, err := b.wasm.plugin(p)
			if err != nil {
				return nil, fmt.Errorf("%s: plugin %s: Wasm: %w", sc.File, p.Name, err)
			}
			plugins = append(plugins, wp)
			continue
		}
		plugins = append(plugins, newScenarioPlugin(p, log))
	}
	var svc session.Service = session.NewInMemoryService()
	if sc.Compaction != nil || sc.usesMemory() {
		svc = &monotonicSessions{Service: svc}
	}
	mem := memory.NewInMemoryService()
	var arts artifact.Service
	if sc.Artifacts != nil {
		arts = artifact.NewInMemoryService()
	}
	runner, err := engine.NewRunner(engine.RunnerConfig{AppName: appName, Agent: root, Sessions: svc, Memory: mem, Artifacts: arts, Plugins: plugins, Resumable: sc.Resumable, Compaction: engineCompaction(sc.Compaction)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	ctx := context.Background()
	users := map[string]string{}
	for _, ss := range sc.Sessions {
		var state map[string]any
		if len(ss.InitialState) > 0 {
			state = deepCopyMap(ss.InitialState)
		}
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: ss.UserID, SessionID: ss.ID, State: state, StateKeyOrder: ss.StateKeyOrder}); err != nil {
			return nil, fmt.Errorf("%s: creating session %s: %w", sc.File, ss.ID, err)
		}
		users[ss.ID] = ss.UserID
	}
	for _, a := range sc.Artifacts {
		user, ok := users[a.Session]
		if !ok {
			return nil, fmt.Errorf("%s: artifact %s: unknown session %q", sc.File, a.Name, a.Session)
		}
		k := artifact.Key{AppName: appName, UserID: user, SessionID: a.Session, Name: a.Name}
		if _, err := arts.Save(ctx, k, &genai.Part{InlineData: &genai.Blob{Data: a.Data, MIMEType: a.MIMEType}}); err != nil {
			return nil, fmt.Errorf("%s: saving artifact %s: %w", sc.File, a.Name, err)
		}
	}

	eventIDs := map[string]bool{}
	yielded := map[string][]*session.Event{}
	turnInvocations := make([]string, len(sc.Turns)) // each turn's first event's invocation
	var turnsOut []any
	for ti, turn := range sc.Turns {
		s.setTurn(ti)
		if sid := turn.AddSessionToMemory; sid != "" {
			sess, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: users[sid], SessionID: sid})
			if err == nil {
				err = mem.AddSession(ctx, sess)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: turns[%d]: adding session %s to memory: %w", sc.File, ti, sid, err)
			}
			turnsOut = append(turnsOut, map[string]any{"index": int64(ti), "session": sid, "add_session_to_memory": sid, "events": []any{}})
			continue
		}
		if turn.RewindBeforeTurn != nil {
			out := map[string]any{"index": int64(ti), "session": turn.Session, "rewind_before_turn": int64(*turn.RewindBeforeTurn), "events": []any{}}
			if err := runner.Rewind(ctx, users[turn.Session], turn.Session, turnInvocations[*turn.RewindBeforeTurn]); err != nil {
				typ, m := pyErrorInfo(err)
				out["error"] = map[string]any{"type": typ, "message": m}
			}
			turnsOut = append(turnsOut, out)
			continue
		}
		msg, err := userMessage(turn, yielded[turn.Session])
		if err != nil {
			return nil, fmt.Errorf("%s: turns[%d]: %w", sc.File, ti, err)
		}
		out := map[string]any{"index": int64(ti), "session": turn.Session, "user_content": dumpContent(msg)}
		if len(turn.StateDelta) > 0 {
			out["state_delta"] = pyDump(turn.StateDelta)
		}
		rc := runConfig(sc.RunConfig.merge(turn.RunConfig), turn.StateDelta)
		if turn.ResumeTurn != nil {
			rc.InvocationID = turnInvocations[*turn.ResumeTurn]
		}
		events := []any{}
		tctx, cancel := context.WithTimeout(ctx, TurnTimeout)
		rctx, abort := context.WithCancel(tctx)
		for ev, err := range runner.Run(rctx, users[turn.Session], turn.Session, msg, rc) {
			if err != nil && turn.AbortAfterEvents > 0 && errors.Is(err, context.Canceled) && rctx.Err() != nil && tctx.Err() == nil {
				break // the abort this turn asked for: google-adk's run ends without an error
			}
			if err != nil {
				typ, m := pyErrorInfo(err)
				out["error"] = map[string]any{"type": typ, "message": m}
				break
			}
			yielded[turn.Session] = append(yielded[turn.Session], ev)
			eventIDs[ev.ID] = true
			if turnInvocations[ti] == "" {
				turnInvocations[ti] = ev.InvocationID
			}
			events = append(events, dumpEvent(ev))
			if len(events) == turn.AbortAfterEvents {
				abort()
			}
		}
		abort()
		cancel()
		out["events"] = events
		turnsOut = append(turnsOut, out)
	}

	finalState := map[string]any{}
	memoryTimes := map[string]string{} // formatted time → first event with it
	var sessionsOut []any
	for _, ss := range sc.Sessions {
		sess, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: ss.UserID, SessionID: ss.ID})
		if err != nil {
			return nil, fmt.Errorf("%s: reading session %s: %w", sc.File, ss.ID, err)
		}
		finalState[ss.ID] = pyDump(sess.State())
		evs := []any{}
		for _, ev := range sess.Events() {
			eventIDs[ev.ID] = true
			if ev.Actions.Compaction == nil {
				if ts := memory.FormatTimestamp(ev.Timestamp); memoryTimes[ts] == "" {
					memoryTimes[ts] = ev.ID
				}
			}
			d := dumpEvent(ev)
			referenceCompactionTimestamps(d, ev, sess.Events())
			evs = append(evs, d)
		}
		sessionsOut = append(sessionsOut, map[string]any{"id": ss.ID, "user_id": ss.UserID, "events": evs})
	}
	s.mu.Lock()
	requests := make([]any, len(s.requests))
	for i, r := range s.requests {
		requests[i] = r
	}
	exhausted := s.exhausted
	s.mu.Unlock()
	if exhausted {
		res.Notes = append(res.Notes, "the scripted model ran out of responses (adkhost called the model more often than the script allows)")
	}
	if turnsOut == nil {
		turnsOut = []any{}
	}
	trace := map[string]any{
		"name":                 sc.Name,
		"turns":                turnsOut,
		"llm_requests":         requests,
		"callback_log":         log.snapshot(),
		"final_state":          finalState,
		"sessions":             sessionsOut,
		"model_responses_used": int64(s.usedCount()),
	}
	text, err := pyJSON(trace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	res.Trace = append(normalizeIDs(referenceMemoryTimestamps(text, memoryTimes), eventIDs), '\n')
	return res, nil
}

// runConfig maps a scenario run_config to the engine's.
func runConfig(spec RunConfigSpec, stateDelta map[string]any) engine.RunConfig {
	var rc engine.RunConfig
	if spec.MaxLLMCalls != nil {
		if n := *spec.MaxLLMCalls; n > 0 {
			rc.MaxLLMCalls = int(n)
		} else {
			rc.MaxLLMCalls = -1 // google-adk: <= 0 means no limit
		}
	}
	if spec.StreamingMode == "sse" {
		rc.StreamingMode = engine.StreamingModeSSE
	}
	if len(stateDelta) > 0 {
		rc.StateDelta = deepCopyMap(stateDelta)
	}
	if spec.CustomMetadata != nil {
		rc.CustomMetadata = deepCopyMap(spec.CustomMetadata)
	}
	if spec.SaveInputBlobs != nil {
		rc.SaveInputBlobsAsArtifacts = *spec.SaveInputBlobs
	}
	return rc
}

// userMessage builds the turn's message: text, function responses, parts.
func userMessage(t *TurnSpec, yielded []*session.Event) (*genai.Content, error) {
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{}}
	if t.Text != nil {
		msg.Parts = append(msg.Parts, &genai.Part{Text: *t.Text})
	}
	for _, fr := range t.FuncResponses {
		id := fr.ID
		if fr.Call != "" {
			id = findCallID(yielded, fr.Call)
			if id == "" {
				return nil, fmt.Errorf("no function call named %q to answer", fr.Call)
			}
		}
		msg.Parts = append(msg.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: fr.Name, ID: id, Response: deepCopyMap(fr.Response)}})
	}
	msg.Parts = append(msg.Parts, buildParts(t.Parts)...)
	if len(msg.Parts) == 0 && t.ResumeTurn != nil {
		return nil, nil // resuming without a message
	}
	return msg, nil
}

// findCallID is the id of the most recent call named name among events.
func findCallID(events []*session.Event, name string) string {
	for i := len(events) - 1; i >= 0; i-- {
		for _, fc := range events[i].FunctionCalls() {
			if fc.Name == name {
				return fc.ID
			}
		}
	}
	return ""
}

// memoryTimestampRe matches a memory's timestamp as google-adk formats it
// (datetime.isoformat of a naive local time), in load_memory's response
// and preload_memory's "Time:" lines.
var memoryTimestampRe = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{6})?`)

// referenceMemoryTimestamps replaces each memory timestamp in the trace
// text by "ts:<id>" of the first session event with that formatted time,
// or "ts:none" (FORMAT.md §2.6): times are not deterministic, the events
// they come from are.
func referenceMemoryTimestamps(text []byte, times map[string]string) []byte {
	return memoryTimestampRe.ReplaceAllFunc(text, func(m []byte) []byte {
		id := times[string(m)]
		if id == "" {
			id = "none"
		}
		return []byte("ts:" + id)
	})
}

// usesMemory reports whether the scenario touches the memory service:
// its timestamps then show in the trace, as event references, and events
// need distinct ones.
func (sc *Scenario) usesMemory() bool {
	for _, t := range sc.Turns {
		if t.AddSessionToMemory != "" {
			return true
		}
	}
	var walk func(a *AgentSpec) bool
	walk = func(a *AgentSpec) bool {
		for _, t := range a.Tools {
			if t.Builtin == "load_memory" || t.Builtin == "preload_memory" {
				return true
			}
		}
		return slices.ContainsFunc(a.SubAgents, walk)
	}
	return walk(sc.Agent)
}
