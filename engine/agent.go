package engine

import (
	"errors"
	"fmt"
	"iter"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/session"
)

// Agent is a node of the agent tree. Implement it by embedding AgentInfo
// and writing Run; the engine wraps Run with the agent lifecycle (before and
// after agent callbacks) whenever it runs the agent.
type Agent interface {
	Info() *AgentInfo
	// Run is the agent's own logic (google-adk's _run_async_impl). It must
	// stop as soon as yield returns false.
	Run(ctx *InvocationContext) iter.Seq2[*session.Event, error]
}

// AgentInfo is what every agent has: identity, children and agent callbacks.
// It is configuration: the engine never changes it after the Runner is made.
type AgentInfo struct {
	Name        string
	Description string
	SubAgents   []Agent
	BeforeAgent []callbacks.BeforeAgent
	AfterAgent  []callbacks.AfterAgent
}

// Info returns the info itself, so embedding AgentInfo implements it.
func (i *AgentInfo) Info() *AgentInfo { return i }

// runAgent runs a with its lifecycle (google-adk BaseAgent.run_async): the
// before-agent chain may answer for the agent and end its invocation; the
// after-agent chain may add a final event. An LlmAgent that delegates to
// task agents runs in passes around its delegations (task.go).
func runAgent(parent *InvocationContext, a Agent) iter.Seq2[*session.Event, error] {
	if la, ok := a.(*LlmAgent); ok && la.delegatesTasks() {
		return runDelegating(parent, la)
	}
	return runAgentOnce(parent, a)
}

// runTransferTarget runs the agent a node-runtime transfer goes to. A task
// agent (a root task agent a sub-agent transferred back to) runs as a new
// task, in the scope of its own node path, until its finish_task is
// answered (google-adk schedules a task-mode node with that scope). Within
// a task delegation's chain the delegation's scope stays.
func runTransferTarget(child *InvocationContext, next Agent) iter.Seq2[*session.Event, error] {
	la, ok := next.(*LlmAgent)
	if !ok || la.cfg.Mode != ModeTask || child.node == nil || child.node.subBranches {
		return runAgent(child, next)
	}
	return func(yield func(*session.Event, error) bool) {
		child.isolationScope = child.nodePath
		runTask(child, la, yield)
	}
}

// runAgentOnce is one run of a with its lifecycle.
func runAgentOnce(parent *InvocationContext, a Agent) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		ctx := parent.forAgent(a)
		info := a.Info()
		// fail tells plugins, then passes the error on, marked with the
		// agent that failed first.
		fail := func(err error) {
			ctx.inv.plugins.OnAgentError(newCallbackContext(ctx, &session.EventActions{}), err)
			var marked *agentRunError
			if !errors.As(err, &marked) {
				author := info.Name
				if ctx.node != nil {
					author = ctx.node.eventAuthor()
				}
				err = &agentRunError{agent: info.Name, author: author, branch: ctx.branch, nodePath: ctx.nodePath, scope: ctx.isolationScope, err: err}
			}
			yield(nil, err)
		}
		ev, err := agentCallbackEvent(ctx, true, func(cc callbacks.CallbackContext) (*genai.Content, error) {
			return callbacks.BeforeAgentChain(cc, ctx.inv.plugins, info.BeforeAgent)
		})
		if err != nil {
			fail(fmt.Errorf("agent %q: before_agent callback: %w", info.Name, err))
			return
		}
		if ev != nil {
			ctx.stampNode(ev)
			if la, ok := a.(*LlmAgent); ok && ev.Content != nil {
				if err := la.maybeSaveOutput(ev); err != nil {
					fail(fmt.Errorf("agent %q: %w", info.Name, err))
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
		if ctx.Ended() {
			return
		}
		la, _ := a.(*LlmAgent)
		transfer := ""
		for ev, err := range a.Run(ctx) {
			if err != nil {
				fail(err)
				return
			}
			ctx.stampNode(ev)
			if !yield(ev, nil) {
				return
			}
			// In google-adk 2.13's node runtime an agent's run ends at the
			// first of its own events that transfers, whatever made it (the
			// transfer tool, a tool's or a callback's actions): the
			// scheduler runs the target next. After_agent callbacks do not
			// run; a resumable app checkpoints the agent as ended.
			if la != nil && ctx.isNodeAgent(la) && ev.Author == info.Name && ev.Actions.TransferToAgent != "" {
				transfer = ev.Actions.TransferToAgent
				break
			}
		}
		if transfer != "" {
			if ctx.Resumable() {
				ctx.setEndOfAgent(info.Name)
				ev := ctx.agentStateEvent(info.Name)
				ctx.stampNode(ev)
				if !yield(ev, nil) {
					return
				}
			}
			next, err := la.transferTarget(ctx, transfer)
			if err != nil {
				fail(err)
				return
			}
			for ev, err := range runTransferTarget(ctx.transferTo(la, next), next) {
				if !yield(ev, err) || err != nil {
					return
				}
			}
			return
		}
		if ctx.Ended() {
			return
		}
		ev, err = agentCallbackEvent(ctx, false, func(cc callbacks.CallbackContext) (*genai.Content, error) {
			return callbacks.AfterAgentChain(cc, ctx.inv.plugins, info.AfterAgent)
		})
		if err != nil {
			fail(fmt.Errorf("agent %q: after_agent callback: %w", info.Name, err))
			return
		}
		if ev != nil {
			ctx.stampNode(ev)
			yield(ev, nil)
		}
	}
}

// stampNode gives an event this run's node path and isolation scope
// unless an inner run has, and notes the author of an event of this node
// run.
func (c *InvocationContext) stampNode(ev *session.Event) {
	if c.nodePath != "" && ev.NodeInfo == nil {
		ev.NodeInfo = &session.NodeInfo{Path: c.nodePath}
	}
	if c.node != nil && ev.NodeInfo != nil && ev.NodeInfo.Path == c.nodePath {
		c.node.setAuthor(ev.Author)
	}
	if c.isolationScope != "" && ev.IsolationScope == "" {
		ev.IsolationScope = c.isolationScope
	}
}

// agentCallbackEvent runs an agent callback chain and turns its outcome
// into an event: its content, or only its state and artifact changes.
func agentCallbackEvent(ctx *InvocationContext, endOnContent bool, chain func(callbacks.CallbackContext) (*genai.Content, error)) (*session.Event, error) {
	cc := newCallbackContext(ctx, &session.EventActions{})
	content, err := chain(cc)
	if err != nil {
		return nil, err
	}
	cc.state.RecordNestedWrites()
	if content != nil {
		ev := ctx.newEvent()
		ev.Content = content
		ev.Actions = *cc.actions
		if endOnContent {
			ctx.EndInvocation()
		}
		return ev, nil
	}
	if len(cc.actions.StateDelta) > 0 || len(cc.actions.ArtifactDelta) > 0 {
		ev := ctx.newEvent()
		ev.Actions = *cc.actions
		return ev, nil
	}
	return nil, nil
}

// Bounds on an agent tree, beyond google-adk's (an identifier other than
// "user", unique in the tree). An agent's name is in every event it
// authors, in each event's node path with its ancestors' names, and in
// the branch of each event under a ParallelAgent: a 1 MiB name made every
// event of its agent a megabyte. Real names are a few words; a function
// name a model takes (an AgentTool's is its agent's) is 64 bytes at most.
const (
	// MaxAgentNameBytes bounds an agent's name.
	MaxAgentNameBytes = 128
	// MaxAgentDepth bounds the nesting of agents: sub-agents below the
	// root, and the runs of agents called as tools (AgentTool) inside
	// each other's, where an agent tool wrapping one of its callers
	// recursed until the stack ran out.
	MaxAgentDepth = 32
)

// tree indexes an agent tree once, so agents never need parent pointers.
type tree struct {
	root   Agent
	byName map[string]Agent
	parent map[Agent]Agent
}

func newTree(root Agent) (*tree, error) {
	t := &tree{root: root, byName: map[string]Agent{}, parent: map[Agent]Agent{}}
	var walk func(a, parent Agent, depth int) error
	walk = func(a, parent Agent, depth int) error {
		info := a.Info()
		if info.Name == "" {
			return fmt.Errorf("agent tree: an agent has no name")
		}
		if len(info.Name) > MaxAgentNameBytes {
			return fmt.Errorf("agent tree: an agent's name is %d bytes (%.32q...), over the limit of %d: name it in a few words", len(info.Name), info.Name, MaxAgentNameBytes)
		}
		if depth > MaxAgentDepth {
			return fmt.Errorf("agent tree: agent %q is %d levels below the root, over the limit of %d: flatten the tree", info.Name, depth, MaxAgentDepth)
		}
		if info.Name == "user" {
			return fmt.Errorf("agent tree: %q is reserved for the user's events", info.Name)
		}
		if _, dup := t.byName[info.Name]; dup {
			return fmt.Errorf("agent tree: two agents are named %q", info.Name)
		}
		t.byName[info.Name] = a
		if parent != nil {
			t.parent[a] = parent
		}
		for _, sub := range info.SubAgents {
			if err := walk(sub, a, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil, 0); err != nil {
		return nil, err
	}
	return t, nil
}

// find returns the agent named name anywhere in the tree.
func (t *tree) find(name string) Agent { return t.byName[name] }
