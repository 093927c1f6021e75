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

// Run implements Agent.
func (a *SequentialAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		for _, sub := range a.SubAgents {
			for ev, err := range runAgent(ctx, sub) {
				if !yield(ev, err) || err != nil {
					return
				}
			}
		}
	}
}

// LoopAgent runs its sub-agents in order, again and again, until one of
// them escalates or MaxIterations rounds are done.
type LoopAgent struct {
	AgentInfo
	// MaxIterations bounds the rounds; 0 means no bound.
	MaxIterations int
}

// NewLoopAgent returns a LoopAgent.
func NewLoopAgent(info AgentInfo, maxIterations int) (*LoopAgent, error) {
	if info.Name == "" {
		return nil, errors.New("engine.NewLoopAgent: a name is required")
	}
	if maxIterations < 0 {
		return nil, fmt.Errorf("engine.NewLoopAgent %q: max_iterations must not be negative, got %d", info.Name, maxIterations)
	}
	return &LoopAgent{AgentInfo: info, MaxIterations: maxIterations}, nil
}

// Run implements Agent. An escalating event lets the sub-agent that made it
// finish, then ends the loop.
func (a *LoopAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if len(a.SubAgents) == 0 {
			return
		}
		for round := 0; a.MaxIterations == 0 || round < a.MaxIterations; round++ {
			for _, sub := range a.SubAgents {
				escalated := false
				for ev, err := range runAgent(ctx, sub) {
					if !yield(ev, err) || err != nil {
						return
					}
					escalated = escalated || ev.Actions.Escalate
				}
				if escalated {
					return
				}
			}
		}
	}
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
// (and so stored) before it goes on, as google-adk's queue does.
func (a *ParallelAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if len(a.SubAgents) == 0 {
			return
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		items := make(chan branchItem)
		var wg sync.WaitGroup
		for _, sub := range a.SubAgents {
			branch := a.Name + "." + sub.Info().Name
			if ctx.Branch() != "" {
				branch = ctx.Branch() + "." + branch
			}
			bctx := ctx.withBranch(branch).withContext(cctx)
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
					if err != nil {
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
		for it := range items {
			if it.err != nil {
				cancel()
				yield(nil, it.err)
				return
			}
			ok := yield(it.ev, nil)
			close(it.done)
			if !ok {
				return
			}
		}
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
