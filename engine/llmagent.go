package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/planner"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// IncludeContents selects how much history an LlmAgent sends to its model.
type IncludeContents string

const (
	// IncludeContentsDefault sends the whole (branch-filtered) history.
	IncludeContentsDefault IncludeContents = "default"
	// IncludeContentsNone sends only the current turn.
	IncludeContentsNone IncludeContents = "none"
)

// LlmAgentConfig configures NewLlmAgent. Every field is optional but Name.
type LlmAgentConfig struct {
	Name        string
	Description string
	// Model answers this agent's requests; nil inherits the nearest
	// ancestor LlmAgent's model.
	Model model.Model
	// Instruction is a template: {key}, {key?}, {app:key}, {artifact.name}
	// are replaced from session state and artifacts.
	Instruction string
	// InstructionProvider, when set, replaces Instruction; its text is
	// used as is, without templating.
	InstructionProvider func(ctx callbacks.ReadonlyContext) (string, error)
	// GlobalInstruction applies to every agent of the tree when set on the
	// root (deprecated in google-adk in favour of a plugin; kept for parity).
	GlobalInstruction string
	// GlobalInstructionProvider, when set, replaces GlobalInstruction; its
	// text is used as is, without templating.
	GlobalInstructionProvider func(ctx callbacks.ReadonlyContext) (string, error)
	// StaticInstruction goes first in the system instruction and is never
	// templated; with it, Instruction is sent as user content instead.
	StaticInstruction *genai.Content
	// Tools are offered in order; a toolset (tool.FromSet) is replaced by
	// the tools it lists for the invocation.
	Tools []tool.Tool
	// GenerateContentConfig is copied into every request.
	GenerateContentConfig *genai.GenerateContentConfig
	// OutputSchema is a JSON Schema the final answer must follow.
	OutputSchema map[string]any
	// OutputSchemaKeyOrder is the key order of OutputSchema as written
	// (its JSON text, or a keyorder skeleton; see model.Response.KeyOrder),
	// which the map lost: a validated answer's fields follow the declared
	// order of its properties, as pydantic dumps a model. Without it they
	// follow the schema's propertyOrdering, else sorted.
	OutputSchemaKeyOrder json.RawMessage
	// OutputKey stores the agent's final text (or parsed JSON with an
	// OutputSchema) in session state under this key.
	OutputKey                string
	IncludeContents          IncludeContents
	DisallowTransferToParent bool
	DisallowTransferToPeers  bool
	Planner                  planner.Planner
	// CodeExecutor, when set, has the model run code with its built-in
	// code execution tool (google-adk's BuiltInCodeExecutor).
	CodeExecutor *BuiltInCodeExecutor
	SubAgents    []Agent
	// Mode is how the agent takes part in the conversation (modes.go):
	// unset or chat (a transfer target), task or single_turn (a tool of its
	// parent LlmAgent). A root agent must be chat or task.
	Mode AgentMode

	BeforeAgent  []callbacks.BeforeAgent
	AfterAgent   []callbacks.AfterAgent
	BeforeModel  []callbacks.BeforeModel
	AfterModel   []callbacks.AfterModel
	OnModelError []callbacks.OnModelError
	BeforeTool   []callbacks.BeforeTool
	AfterTool    []callbacks.AfterTool
	OnToolError  []callbacks.OnToolError
}

// LlmAgent is an agent driven by a language model: the ReAct loop in
// flow.go calls the model, runs the tools it asks for, and repeats until the
// model gives a final answer.
type LlmAgent struct {
	AgentInfo
	cfg LlmAgentConfig
	// modeTools are the tools the agent gets from modes: finish_task and
	// its delegated sub-agents (modes.go), offered after its own tools.
	modeTools []tool.Tool
}

// NewLlmAgent returns an LlmAgent.
func NewLlmAgent(cfg LlmAgentConfig) (*LlmAgent, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("engine.NewLlmAgent: a name is required")
	}
	switch cfg.IncludeContents {
	case "", IncludeContentsDefault, IncludeContentsNone:
	default:
		return nil, fmt.Errorf("engine.NewLlmAgent %q: include_contents must be %q or %q, got %q", cfg.Name, IncludeContentsDefault, IncludeContentsNone, cfg.IncludeContents)
	}
	if !validAgentMode(cfg.Mode) {
		return nil, fmt.Errorf("engine.NewLlmAgent %q: mode must be %q, %q or %q, got %q", cfg.Name, ModeChat, ModeTask, ModeSingleTurn, cfg.Mode)
	}
	modeTools, err := delegationTools(&cfg)
	if err != nil {
		return nil, fmt.Errorf("engine.NewLlmAgent %q: %w", cfg.Name, err)
	}
	seen := map[string]bool{}
	for _, t := range cfg.Tools {
		if _, ok := tool.SetOf(t); ok {
			continue // a toolset's tools are known only when a request is built
		}
		if seen[t.Name()] {
			return nil, fmt.Errorf("engine.NewLlmAgent %q: two tools are named %q", cfg.Name, t.Name())
		}
		seen[t.Name()] = true
	}
	return &LlmAgent{
		AgentInfo: AgentInfo{Name: cfg.Name, Description: cfg.Description, SubAgents: cfg.SubAgents, BeforeAgent: cfg.BeforeAgent, AfterAgent: cfg.AfterAgent},
		cfg:       cfg,
		modeTools: modeTools,
	}, nil
}

// Config returns the agent's configuration.
func (a *LlmAgent) Config() *LlmAgentConfig { return &a.cfg }

// Run implements Agent: the flow, recording the agent's answer under
// OutputKey. Without an output schema the key holds the text of all the
// agent's non-partial events of this run, accumulated (google-adk 2.13).
// In a resumable app a run that did not pause ends with an end_of_agent
// checkpoint, and a resumed agent that had transferred continues in the
// agent it transferred to.
func (a *LlmAgent) Run(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		if ctx.Resumable() && ctx.loadAgentState(a.Name) != nil {
			sub, err := a.subAgentToResume(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			if sub != nil {
				paused := false
				for ev, err := range runAgent(ctx.transferTo(a, sub), sub) {
					if !yield(ev, err) || err != nil {
						return
					}
					paused = paused || shouldPause(ev)
				}
				if !paused {
					ctx.setEndOfAgent(a.Name)
					yield(ctx.agentStateEvent(a.Name), nil)
				}
				return
			}
		}
		acc := ""
		paused := false
		for ev, err := range a.runFlow(ctx) {
			if err == nil {
				if err = a.maybeSaveOutput(ev); err != nil {
					ev = nil
				} else {
					acc = a.accumulateOutput(ev, acc)
				}
			}
			if !yield(ev, err) || err != nil {
				return
			}
			paused = paused || shouldPause(ev)
		}
		if paused || !ctx.Resumable() {
			return
		}
		// A resumed step that found its call still unanswered yields
		// nothing; the stored events say the agent is still paused.
		events := ctx.branchEvents()
		for _, ev := range events[max(0, len(events)-2):] {
			if shouldPause(ev) {
				return
			}
		}
		ctx.setEndOfAgent(a.Name)
		yield(ctx.agentStateEvent(a.Name), nil)
	}
}

// accumulateOutput appends the event's text to acc and records the running
// value under OutputKey (google-adk __maybe_accumulate_streaming_output).
func (a *LlmAgent) accumulateOutput(ev *session.Event, acc string) string {
	// A task agent's output is its finish_task result, not its messages.
	if a.cfg.OutputKey == "" || a.cfg.Mode == ModeTask || a.cfg.OutputSchema != nil || ev.Author != a.Name || ev.Partial || ev.Content == nil {
		return acc
	}
	text := visibleText(ev.Content)
	if text == "" {
		return acc
	}
	acc += text
	if ev.Actions.StateDelta == nil {
		ev.Actions.StateDelta = map[string]any{}
	}
	ev.Actions.StateDelta[a.cfg.OutputKey] = acc
	return acc
}

// visibleText joins the non-thought text parts of c.
func visibleText(c *genai.Content) string {
	text := ""
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			text += p.Text
		}
	}
	return text
}

// canonicalModel returns the agent's model or its nearest LlmAgent
// ancestor's (google-adk LlmAgent.canonical_model).
func (a *LlmAgent) canonicalModel(ctx *InvocationContext) (model.Model, error) {
	var cur Agent = a
	for cur != nil {
		if la, ok := cur.(*LlmAgent); ok && la.cfg.Model != nil {
			return la.cfg.Model, nil
		}
		cur = ctx.Parent(cur)
	}
	return nil, fmt.Errorf("agent %q: no model is set on it or any ancestor LlmAgent", a.Name)
}

// transferTargets returns the agents a may transfer to, in google-adk's
// order: its sub-agents, then its parent and peers when allowed and the
// parent is an LlmAgent. Task and single_turn agents are tools, never
// transfer targets.
func (a *LlmAgent) transferTargets(ctx *InvocationContext) []Agent {
	return a.transferTargetsIn(ctx.inv.tree)
}

func (a *LlmAgent) transferTargetsIn(t *tree) []Agent {
	var targets []Agent
	for _, sub := range a.SubAgents {
		if !modeOf(sub).delegated() {
			targets = append(targets, sub)
		}
	}
	parent, ok := t.parent[a].(*LlmAgent)
	if !ok {
		return targets
	}
	if !a.cfg.DisallowTransferToParent {
		targets = append(targets, parent)
	}
	if !a.cfg.DisallowTransferToPeers {
		for _, peer := range parent.SubAgents {
			if peer.Info().Name != a.Name && !modeOf(peer).delegated() {
				targets = append(targets, peer)
			}
		}
	}
	return targets
}

// maybeSaveOutput stores the final response text under OutputKey
// (google-adk LlmAgent.__maybe_save_output_to_state). With an output
// schema the text is validated first (validateOutput); an answer that does
// not validate is the agent's error, and nothing is stored.
func (a *LlmAgent) maybeSaveOutput(ev *session.Event) error {
	if a.cfg.OutputKey == "" || a.cfg.Mode == ModeTask || ev.Author != a.Name || !ev.IsFinalResponse() || ev.Content == nil || ev.Partial {
		return nil
	}
	// google-adk saves when any part is text (not thought), an empty text
	// included: "" is a value of output_key too.
	if !slices.ContainsFunc(ev.Content.Parts, func(p *genai.Part) bool {
		return p != nil && !p.Thought && (p.Text != "" || session.IsEmptyText(p))
	}) {
		return nil
	}
	text := visibleText(ev.Content)
	var value any = text
	var valueOrder json.RawMessage
	if a.cfg.OutputSchema != nil {
		if strings.TrimSpace(text) == "" {
			return nil
		}
		parsed, order, err := validateOutput(a.cfg.OutputSchema, a.cfg.OutputSchemaKeyOrder, text)
		var verr *OutputValidationError
		if errors.As(err, &verr) {
			return err
		}
		if err != nil {
			return nil // not JSON at all: nothing to store
		}
		value, valueOrder = parsed, order
	}
	if ev.Actions.StateDelta == nil {
		ev.Actions.StateDelta = map[string]any{}
	}
	ev.Actions.StateDelta[a.cfg.OutputKey] = value
	if valueOrder != nil {
		if ev.Actions.StateKeyOrder == nil {
			ev.Actions.StateKeyOrder = map[string]json.RawMessage{}
		}
		ev.Actions.StateKeyOrder[a.cfg.OutputKey] = valueOrder
	} else {
		delete(ev.Actions.StateKeyOrder, a.cfg.OutputKey)
	}
	return nil
}
