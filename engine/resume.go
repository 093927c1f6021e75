package engine

// Resumable invocations (google-adk ResumabilityConfig, spec §10.2). In a
// resumable app every agent records checkpoints in its events: a workflow
// agent's agent_state (which child runs, how many loop rounds are done) and
// end_of_agent when an agent finishes. An invocation that paused on a
// long-running call is resumed later, by id or by a function response
// answering the call: the checkpoints of its events are read back, agents
// that ended are skipped and the others continue where they stopped.

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// agentStates is the checkpoint table of one invocation, shared by all its
// agents (parallel branches write it concurrently). Keys are agent names,
// or node paths for agents run by the node runtime (google-adk
// _agent_state_key).
type agentStates struct {
	mu    sync.Mutex
	state map[string]map[string]any
	ended map[string]bool // a key present with false: started, not ended
}

func newAgentStates() *agentStates {
	return &agentStates{state: map[string]map[string]any{}, ended: map[string]bool{}}
}

// populate reads the checkpoints of the invocation's stored events
// (google-adk populate_invocation_agent_states). An agent that wrote
// content but no checkpoint counts as started with an empty state.
func (s *agentStates) populate(events []*session.Event, invocationID string) {
	for _, ev := range events {
		if ev.InvocationID != invocationID {
			continue
		}
		key := ev.Author
		if ev.NodeInfo != nil && ev.NodeInfo.Path != "" {
			key = ev.NodeInfo.Path
		}
		switch {
		case ev.Actions.EndOfAgent:
			s.ended[key] = true
			delete(s.state, key)
		case ev.Actions.AgentState != nil:
			s.state[key] = maps.Clone(ev.Actions.AgentState)
			s.ended[key] = false
		case ev.Author != "user" && ev.Content != nil && len(s.state[key]) == 0:
			s.state[key] = map[string]any{}
			s.ended[key] = false
		}
	}
}

// stateKey is the key of agent name's checkpoints in this context: the
// node path when the context's path ends in a run of that agent, else the
// name.
func (c *InvocationContext) stateKey(name string) string {
	if c.nodePath != "" {
		last := c.nodePath[strings.LastIndexByte(c.nodePath, '/')+1:]
		if at := strings.LastIndexByte(last, '@'); at >= 0 && last[:at] == name {
			return c.nodePath
		}
	}
	return name
}

// loadAgentState returns the agent's saved state, or nil when it has none
// (google-adk _load_agent_state, with its fallback from a node-path key to
// the plain name).
func (c *InvocationContext) loadAgentState(name string) map[string]any {
	s := c.inv.states
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.lookup(c.stateKey(name), name)
	return st
}

// lookup returns the state under key, falling back to the plain name when
// key is a node path with no entry of its own (google-adk's rule). s.mu
// must be held.
func (s *agentStates) lookup(key, name string) (map[string]any, bool) {
	if st, ok := s.state[key]; ok {
		return st, true
	}
	if _, ended := s.ended[key]; key != name && !ended {
		st, ok := s.state[name]
		return st, ok
	}
	return nil, false
}

// setAgentState records that the agent is running with state st.
func (c *InvocationContext) setAgentState(name string, st map[string]any) {
	s := c.inv.states
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.stateKey(name)
	s.state[key] = st
	s.ended[key] = false
}

// setEndOfAgent records that the agent finished.
func (c *InvocationContext) setEndOfAgent(name string) {
	s := c.inv.states
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.stateKey(name)
	s.ended[key] = true
	delete(s.state, key)
}

// agentEnded reports whether the agent finished in this invocation.
func (c *InvocationContext) agentEnded(name string) bool {
	s := c.inv.states
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended[c.stateKey(name)]
}

// resetSubAgentStates forgets the checkpoints of a's descendants, so that a
// loop's next round runs them afresh.
func (c *InvocationContext) resetSubAgentStates(a Agent) {
	s := c.inv.states
	s.mu.Lock()
	defer s.mu.Unlock()
	var reset func(Agent)
	reset = func(a Agent) {
		for _, sub := range a.Info().SubAgents {
			key := c.stateKey(sub.Info().Name)
			delete(s.state, key)
			delete(s.ended, key)
			reset(sub)
		}
	}
	reset(a)
}

// agentStateEvent is the checkpoint event of the agent: its current state
// or its end (google-adk _create_agent_state_event).
func (c *InvocationContext) agentStateEvent(name string) *session.Event {
	s := c.inv.states
	s.mu.Lock()
	key := c.stateKey(name)
	st, hasState := s.lookup(key, name)
	ended, ok := s.ended[key]
	if !ok && key != name {
		ended = s.ended[name]
	}
	s.mu.Unlock()
	ev := session.NewEvent(c.inv.id, name, c.branch)
	if hasState {
		ev.Actions.AgentState = maps.Clone(st)
	}
	ev.Actions.EndOfAgent = ended
	return ev
}

// Resumable reports whether the invocation writes checkpoints.
func (c *InvocationContext) Resumable() bool { return c.inv.resumable }

// shouldPause reports whether the invocation pauses after ev: it asks for
// a long-running call (google-adk should_pause_invocation). The agents
// after it, and its ancestors, stop; a later function response resumes.
func shouldPause(ev *session.Event) bool {
	if len(ev.LongRunningToolIDs) == 0 {
		return false
	}
	for _, fc := range ev.FunctionCalls() {
		for _, id := range ev.LongRunningToolIDs {
			if fc.ID == id {
				return true
			}
		}
	}
	return false
}

// branchEvents returns the stored events of this invocation on ctx's branch.
// It reads only the history from the invocation's first event on, so a
// step's cost does not grow with earlier turns.
func (c *InvocationContext) branchEvents() []*session.Event {
	var out []*session.Event
	for _, ev := range c.inv.invocationEvents() {
		if ev.InvocationID == c.inv.id && ev.Branch == c.branch {
			out = append(out, ev)
		}
	}
	return out
}

// resumeAction is what a flow step does with the events it resumes from.
type resumeAction int

const (
	resumeContinue resumeAction = iota // call the model
	resumePause                        // a call is still unanswered: stop
	resumeReplay                       // run calls that were never run
)

// decideStepResume decides, in a resumable invocation, whether the step
// may call the model (google-adk decide_step_resume): it pauses while a
// long-running call is unanswered, and replays calls an earlier run made
// but never executed (the process stopped between storing the call and
// running it). The event returned with resumeReplay holds those calls.
func (a *LlmAgent) decideStepResume(ctx *InvocationContext, tools map[string]tool.Tool) (resumeAction, *session.Event) {
	events := ctx.branchEvents()
	if len(events) == 0 {
		return resumeContinue, nil
	}
	last := events[len(events)-1]
	if len(events) > 1 {
		pausedByLast := shouldPause(last)
		if !pausedByLast && pauseLeftCallsUnanswered(events) {
			return resumePause, nil
		}
		pause := pausedByLast
		if ci := a.lastOwnCallEvent(events, tools); ci >= 0 {
			call := events[ci]
			later := events[ci+1:]
			calls := call.FunctionCalls()
			callIDs, callNames := map[string]bool{}, map[string]bool{}
			for _, fc := range calls {
				callIDs[fc.ID] = true
				callNames[fc.Name] = true
			}
			lro := map[string]bool{}
			for _, ev := range events[ci:] {
				for _, id := range ev.LongRunningToolIDs {
					lro[id] = true
					callIDs[id] = true
				}
			}
			answered := answeredIDs(later)
			answer := findAnswerEvent(later, callIDs, callNames, last)
			answers := answer.FunctionResponses()
			answerNamed := false
			for _, fr := range answers {
				answerNamed = answerNamed || callNames[fr.Name]
			}
			lroUnanswered := len(lro) > 0 && !intersects(lro, answered)
			callUnanswered := len(callIDs) > 0 && !intersects(callIDs, answered) && !answerNamed
			switch {
			case lroUnanswered || callUnanswered:
				pause = true
			case needsCallReplay(callNames, answers):
				if ev := unexecutedCalls(call, later, true); ev != nil {
					return resumeReplay, ev
				}
			case !hasUnanswered(lro, answered):
				if ev := unexecutedCalls(call, later, false); ev != nil {
					return resumeReplay, ev
				}
			}
		}
		if pause {
			return resumePause, nil
		}
	}
	if !last.Partial && len(last.FunctionCalls()) > 0 && last.Author == a.Name {
		return resumeReplay, last
	}
	return resumeContinue, nil
}

// lastOwnCallEvent is the index of the newest event before the last one
// in which this agent called one of its tools, or -1. Only the agent's own
// calls count: a stored event from anyone else must never run a tool.
func (a *LlmAgent) lastOwnCallEvent(events []*session.Event, tools map[string]tool.Tool) int {
	for i := len(events) - 2; i >= 0; i-- {
		if events[i].Author != a.Name {
			continue
		}
		for _, fc := range events[i].FunctionCalls() {
			if _, ok := tools[fc.Name]; ok {
				return i
			}
		}
	}
	return -1
}

// pauseLeftCallsUnanswered reports whether a pause before the last event
// still waits for a response to one of its calls.
func pauseLeftCallsUnanswered(events []*session.Event) bool {
	awaited := map[string]bool{}
	for _, ev := range events[:len(events)-1] {
		if !shouldPause(ev) {
			continue
		}
		for _, fc := range ev.FunctionCalls() {
			if fc.ID != "" {
				awaited[fc.ID] = true
			}
		}
		for _, id := range ev.LongRunningToolIDs {
			awaited[id] = true
		}
	}
	return hasUnanswered(awaited, answeredIDs(events))
}

// answeredIDs is the set of call ids the events' function responses answer.
func answeredIDs(events []*session.Event) map[string]bool {
	answered := map[string]bool{}
	for _, ev := range events {
		for id := range responseIDs(ev) {
			answered[id] = true
		}
	}
	return answered
}

// findAnswerEvent is the newest of later answering one of the calls (by id,
// or by name when the response has no id), or fallback.
func findAnswerEvent(later []*session.Event, ids, names map[string]bool, fallback *session.Event) *session.Event {
	for i := len(later) - 1; i >= 0; i-- {
		for _, fr := range later[i].FunctionResponses() {
			if (fr.ID != "" && ids[fr.ID]) || (fr.ID == "" && names[fr.Name]) {
				return later[i]
			}
		}
	}
	return fallback
}

// needsCallReplay reports whether the answer event does not answer the
// calls: no responses, or one for a tool the call event did not call.
func needsCallReplay(callNames map[string]bool, answers []*genai.FunctionResponse) bool {
	if len(callNames) == 0 {
		return false
	}
	if len(answers) == 0 {
		return true
	}
	for _, fr := range answers {
		if !callNames[fr.Name] {
			return true
		}
	}
	return false
}

// unexecutedCalls returns call cut down to the calls no later event
// answers, or nil if all ran. Without includeLongRunning, long-running
// calls are not replayed, and nothing is once the agent wrote content after
// the call (a long-running tool that returned nothing leaves no response).
func unexecutedCalls(call *session.Event, later []*session.Event, includeLongRunning bool) *session.Event {
	if call.Content == nil {
		return nil
	}
	if !includeLongRunning {
		for _, ev := range later {
			if ev.Author == call.Author && ev.Branch == call.Branch && ev.Content != nil {
				return nil
			}
		}
	}
	type idName struct{ id, name string }
	answered := map[idName]bool{}
	byName := map[string]int{}
	for _, ev := range later {
		for _, fr := range ev.FunctionResponses() {
			if fr.ID != "" {
				answered[idName{fr.ID, fr.Name}] = true
			} else {
				byName[fr.Name]++
			}
		}
	}
	lro := map[string]bool{}
	if !includeLongRunning {
		for _, id := range call.LongRunningToolIDs {
			lro[id] = true
		}
	}
	var parts []*genai.Part
	unexecuted := false
	for _, p := range call.Content.Parts {
		fc := p.FunctionCall
		switch {
		case fc == nil:
			parts = append(parts, p)
		case answered[idName{fc.ID, fc.Name}] || lro[fc.ID]:
		case byName[fc.Name] > 0:
			byName[fc.Name]--
		default:
			parts = append(parts, p)
			unexecuted = true
		}
	}
	if !unexecuted {
		return nil
	}
	if len(parts) == len(call.Content.Parts) {
		return call
	}
	cp := *call
	content := *call.Content
	content.Parts = parts
	cp.Content = &content
	return &cp
}

func intersects(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// hasUnanswered reports whether some key of awaited is not in answered.
func hasUnanswered(awaited, answered map[string]bool) bool {
	for k := range awaited {
		if !answered[k] {
			return true
		}
	}
	return false
}

// subAgentToResume is the agent this LlmAgent had transferred to when its
// invocation paused, which a resumed run continues (google-adk
// _get_subagent_to_resume), or nil when the agent itself continues.
func (a *LlmAgent) subAgentToResume(ctx *InvocationContext) (Agent, error) {
	events := ctx.branchEvents()
	if len(events) == 0 {
		return nil, nil
	}
	last := events[len(events)-1]
	if last.Author == a.Name {
		return a.transferredTo(ctx, last)
	}
	if last.Author == "user" {
		var inv []*session.Event
		for _, ev := range ctx.inv.invocationEvents() {
			if ev.InvocationID == ctx.inv.id && ev != last {
				inv = append(inv, ev)
			}
		}
		if last.Content != nil {
			call := findMatchingFunctionCall(inv, last.Content)
			if call == nil {
				return nil, fmt.Errorf("agent %q: no agent to resume for the function response: no matching call in the invocation", a.Name)
			}
			if call.Author == a.Name {
				return nil, nil
			}
		}
	}
	for i := len(events) - 1; i >= 0; i-- {
		if ag, err := a.transferredTo(ctx, events[i]); ag != nil || err != nil {
			return ag, err
		}
	}
	return nil, nil
}

// transferredTo is the agent ev, an event of this agent, transferred to.
func (a *LlmAgent) transferredTo(ctx *InvocationContext, ev *session.Event) (Agent, error) {
	name := ev.Actions.TransferToAgent
	if ev.Author != a.Name || name == "" {
		return nil, nil
	}
	for _, t := range a.transferTargets(ctx) {
		if t.Info().Name == name {
			return t, nil
		}
	}
	if ag := ctx.FindAgent(name); ag != nil {
		return ag, nil
	}
	return nil, fmt.Errorf("agent %q: the agent %q it transferred to is not in the tree", a.Name, name)
}
