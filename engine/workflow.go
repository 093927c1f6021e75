package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/session"
)

// SequentialAgent runs its sub-agents one after another.
type SequentialAgent struct{ AgentInfo }

// NewSequentialAgent returns a SequentialAgent.
func NewSequentialAgent(info AgentInfo) (*SequentialAgent, error) {
	if info.Name == "" {
		return nil, errors.New("engine.NewSequentialAgent: a name is required")
	}
	return &SequentialAgent{AgentInfo: info}, nil
}

// Run implements Agent. It stops after a child pauses the invocation on a
// long-running call, or leaves a task delegation waiting for the user. In a resumable app it checkpoints the child it starts
// ({"current_sub_agent": name}) and its own end, and a resumed run starts
// at the child it had reached, without a second checkpoint for it.
func (a *SequentialAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if len(a.SubAgents) == 0 {
			return
		}
		st := ctx.loadAgentState(a.Name)
		start := startIndex(ctx, a.SubAgents, st)
		resuming := st != nil
		for _, sub := range a.SubAgents[start:] {
			if !resuming && ctx.Resumable() {
				ctx.setAgentState(a.Name, map[string]any{"current_sub_agent": sub.Info().Name})
				if !yield(ctx.agentStateEvent(a.Name), nil) {
					return
				}
			}
			resuming = false
			paused, scoped := false, false
			for ev, err := range runAgent(ctx, sub) {
				if !yield(ev, err) || err != nil {
					return
				}
				paused = paused || shouldPause(ev)
				scoped = scoped || ev.IsolationScope != ""
			}
			if paused || scoped && ctx.taskAwaitingUser() {
				return
			}
		}
		if ctx.Resumable() {
			ctx.setEndOfAgent(a.Name)
			yield(ctx.agentStateEvent(a.Name), nil)
		}
	}
}

// startIndex is where a workflow agent resumes: at the child its state
// names (from the start if that child is gone), past the end when its state
// names none.
func startIndex(ctx *InvocationContext, subs []Agent, st map[string]any) int {
	if st == nil {
		return 0
	}
	name, _ := st["current_sub_agent"].(string)
	if name == "" {
		return len(subs)
	}
	for i, sub := range subs {
		if sub.Info().Name == name {
			return i
		}
	}
	ctx.Logger().Warn("the sub-agent to resume is gone; starting from the first", "agent", ctx.AgentName(), "sub_agent", name)
	return 0
}

// LoopAgent runs its sub-agents in order, again and again, until one of
// them escalates or MaxIterations rounds are done.
type LoopAgent struct {
	AgentInfo
	// MaxIterations bounds the rounds, as google-adk's Optional[int]
	// max_iterations: nil means no bound (until a sub-agent escalates), and
	// a value of 0 or less runs no round at all.
	MaxIterations *int
}

// NewLoopAgent returns a LoopAgent; maxIterations is its MaxIterations.
func NewLoopAgent(info AgentInfo, maxIterations *int) (*LoopAgent, error) {
	if info.Name == "" {
		return nil, errors.New("engine.NewLoopAgent: a name is required")
	}
	if maxIterations != nil {
		maxIterations = new(*maxIterations) // configuration never changes after construction
	}
	return &LoopAgent{AgentInfo: info, MaxIterations: maxIterations}, nil
}

// LoopWithoutEventsError ends a LoopAgent without a bound on its rounds
// whose sub-agents ran a whole round without yielding an event: only an
// event can escalate, so nothing could ever end the loop, and its rounds
// repeated forever without a model call to count against MaxLLMCalls,
// without an event to store or send, and without noticing that the run's
// client had gone (a loop of an empty SequentialAgent spun a core for
// good).
type LoopWithoutEventsError struct {
	Agent string
	Round int
}

func (e *LoopWithoutEventsError) Error() string {
	return fmt.Sprintf("loop agent %q: round %d of its sub-agents yielded no event, and only an event can escalate to end the loop, so it would repeat forever; set max_iterations on it, or give it a sub-agent that yields events and escalates (an LlmAgent with the exit_loop tool)", e.Agent, e.Round+1)
}

// Run implements Agent. An escalating event lets the sub-agent that made it
// finish, then ends the loop; a pause on a long-running call, or a task
// delegation left waiting for the user, stops it. In
// a resumable app it checkpoints each child it starts with the rounds done
// ({"current_sub_agent": name, "times_looped": n}) and its own end.
func (a *LoopAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if len(a.SubAgents) == 0 {
			return
		}
		st := ctx.loadAgentState(a.Name)
		resuming := st != nil
		round, start := 0, 0
		if st != nil {
			round = intValue(st["times_looped"])
			if name, _ := st["current_sub_agent"].(string); name != "" {
				start = startIndex(ctx, a.SubAgents, st)
			}
		}
		exit, paused := false, false
		for (a.MaxIterations == nil || round < *a.MaxIterations) && !exit && !paused {
			// Sub-agents that never yield never see a cancelled context.
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			yielded := false
			for _, sub := range a.SubAgents[start:] {
				if ctx.Resumable() && !resuming {
					ctx.setAgentState(a.Name, map[string]any{"current_sub_agent": sub.Info().Name, "times_looped": round})
					if !yield(ctx.agentStateEvent(a.Name), nil) {
						return
					}
				}
				resuming = false
				scoped := false
				for ev, err := range runAgent(ctx, sub) {
					if !yield(ev, err) || err != nil {
						return
					}
					yielded = true
					exit = exit || ev.Actions.Escalate
					paused = paused || shouldPause(ev)
					scoped = scoped || ev.IsolationScope != ""
				}
				paused = paused || scoped && ctx.taskAwaitingUser()
				if exit || paused {
					break
				}
			}
			if !yielded && a.MaxIterations == nil {
				yield(nil, &LoopWithoutEventsError{Agent: a.Name, Round: round})
				return
			}
			if !paused {
				start = 0
				round++
				ctx.resetSubAgentStates(a)
			}
		}
		if paused {
			return
		}
		if ctx.Resumable() {
			ctx.setEndOfAgent(a.Name)
			yield(ctx.agentStateEvent(a.Name), nil)
		}
	}
}

// intValue reads a JSON number of a checkpoint, whatever its Go type.
func intValue(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	case interface{ Int64() (int64, error) }:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// ParallelAgent runs its sub-agents concurrently, each on its own branch
// "<branch>.<parallel>.<child>" so none sees the others' history. Events are
// yielded as they are produced; the first failure cancels the other
// branches and is returned.
type ParallelAgent struct{ AgentInfo }

// NewParallelAgent returns a ParallelAgent.
func NewParallelAgent(info AgentInfo) (*ParallelAgent, error) {
	if info.Name == "" {
		return nil, errors.New("engine.NewParallelAgent: a name is required")
	}
	return &ParallelAgent{AgentInfo: info}, nil
}

type branchItem struct {
	ev   *session.Event
	err  error
	done chan struct{} // closed by the consumer once ev is handled
}

// Run implements Agent. Each branch waits until its event has been yielded
// (and so stored) before it goes on, as google-adk's queue does. An
// escalation by a direct child stops the other branches. In a resumable app
// it checkpoints its start ({}) and its end, once every child has ended (or
// one escalated), and a resumed run skips the children that ended.
func (a *ParallelAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if len(a.SubAgents) == 0 {
			return
		}
		if ctx.Resumable() && ctx.loadAgentState(a.Name) == nil {
			ctx.setAgentState(a.Name, map[string]any{})
			if !yield(ctx.agentStateEvent(a.Name), nil) {
				return
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		items := make(chan branchItem)
		children := map[string]bool{}
		var wg sync.WaitGroup
		for _, sub := range a.SubAgents {
			children[sub.Info().Name] = true
			branch := a.Name + "." + sub.Info().Name
			if ctx.Branch() != "" {
				branch = ctx.Branch() + "." + branch
			}
			bctx := ctx.withBranch(branch).withContext(cctx)
			if bctx.agentEnded(sub.Info().Name) {
				continue
			}
			wg.Go(func() {
				for ev, err := range runAgent(bctx, sub) {
					it := branchItem{ev: ev, err: err, done: make(chan struct{})}
					select {
					case items <- it:
					case <-cctx.Done():
						return
					}
					select {
					case <-it.done:
					case <-cctx.Done():
						return
					}
					// An escalation cancels before it releases the branch:
					// the branch must not go on (and call its model again).
					if err != nil || cctx.Err() != nil {
						return
					}
				}
			})
		}
		go func() { wg.Wait(); close(items) }()
		defer func() {
			cancel()
			for range items {
			}
		}()
		escalated, paused := false, false
		for it := range items {
			if it.err != nil {
				cancel()
				yield(nil, it.err)
				return
			}
			ok := yield(it.ev, nil)
			escalate := it.ev.Actions.Escalate && children[it.ev.Author]
			if !ok || escalate {
				// Cancelled before the branch is released, so it stops
				// here instead of racing the cancellation.
				cancel()
			}
			close(it.done)
			if !ok {
				return
			}
			paused = paused || shouldPause(it.ev) || it.ev.IsolationScope != "" && ctx.taskAwaitingUser()
			if escalate {
				escalated = true
				break
			}
		}
		if paused || !ctx.Resumable() {
			return
		}
		if !escalated {
			for _, sub := range a.SubAgents {
				if !ctx.agentEnded(sub.Info().Name) {
					return
				}
			}
		}
		ctx.setEndOfAgent(a.Name)
		yield(ctx.agentStateEvent(a.Name), nil)
	}
}

// ExitLoopTool is google-adk's exit_loop: it escalates, ending the
// enclosing LoopAgent, and skips summarization.
type ExitLoopTool struct{}

func (ExitLoopTool) Name() string { return "exit_loop" }
func (ExitLoopTool) Description() string {
	return "Exits the loop.\n\nCall this function only when you are instructed to do so."
}
func (ExitLoopTool) IsLongRunning() bool { return false }
func (t ExitLoopTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: t.Name(), Description: t.Description()}
}
func (ExitLoopTool) Run(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
	ctx.Actions().Escalate = true
	ctx.Actions().SkipSummarization = true
	return nil, nil
}
