package engine

// Direct tool calls: an application, not the model, calls one of an
// agent's tools in a session (adkhost's MCP server serves an app's tools
// this way). The call goes through the same pipeline as a call the model
// made (functions.go): plugin and agent tool callbacks, the confirmation
// gate, the tool with a ToolContext on the session. google-adk has no such
// entry point; its MCP server sample calls a tool with no context at all.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// DirectToolCall is a call of one agent tool made by the application
// (Runner.CallTool).
type DirectToolCall struct {
	UserID, SessionID string
	// Agent is the name of the LlmAgent of the runner's tree whose tool is
	// called: its tool callbacks run, and it authors the events.
	Agent string
	Tool  string
	Args  map[string]any
	// CustomMetadata is set on both events (e.g. who made the call).
	CustomMetadata map[string]any
	// InvocationID is the id of the call's invocation; empty means a new
	// "e-<uuid>". Callers that track invocations in a plugin set it.
	InvocationID string
	// Limits holds the bounds of the call's invocation (MaxLLMCalls,
	// MaxEvents, MaxFunctionCalls, MaxBytes), which agents the tool runs (AgentTool)
	// count against; its other fields are not used.
	Limits RunConfig
}

// DirectToolResult is what Runner.CallTool stored.
type DirectToolResult struct {
	InvocationID string
	// Response is the function response, as the model would have got it
	// (a result that is not an object is under "result").
	Response map[string]any
	// Events are the function call event and the function response event
	// (with the tool's state and artifact deltas), as appended to the
	// session.
	Events []*session.Event
}

// ConfirmationRequiredError is CallTool's answer when the tool asked for
// the user's confirmation (tool.ConfirmationRequirer, or the tool's own
// RequestConfirmation): a direct call has no turn in which the user could
// give it. Nothing of the call is stored.
type ConfirmationRequiredError struct {
	Tool string
	Hint string
}

func (e *ConfirmationRequiredError) Error() string {
	msg := fmt.Sprintf("tool %q requires the user's confirmation, which a direct call cannot give: call it in a run instead", e.Tool)
	if e.Hint != "" {
		msg += " (hint: " + e.Hint + ")"
	}
	return msg
}

// ErrAgentNotFound is CallTool's error for an agent name that is not an
// LlmAgent of the runner's tree.
var ErrAgentNotFound = errors.New("agent not found")

// CallTool runs one tool of an LlmAgent of the tree in the session, as if
// the model had called it: plugins' and the agent's before_tool,
// after_tool and on_tool_error callbacks run, the tool's ToolContext reads
// and writes the session's state, artifacts and memory, and on success a
// function call event and a function response event (carrying the state
// and artifact deltas), both authored by the agent under a new invocation
// id, are passed through the plugins' on_event and appended to the
// session. The session must exist (RunnerConfig.AutoCreateSession
// applies).
//
// Errors: ErrAgentNotFound; a *ToolNotFoundError for a name the agent does
// not have; a *ToolError when the tool failed and no on_tool_error callback
// answered; a *ConfirmationRequiredError. After an error nothing is
// appended (artifacts the tool saved stay saved). No other plugin hook
// (before_run, after_run...) runs: there is no run.
//
// Safe for concurrent use; concurrent calls in one session each read the
// session as it was when they started.
func (r *Runner) CallTool(ctx context.Context, call DirectToolCall) (*DirectToolResult, error) {
	la, ok := r.tree.byName[call.Agent].(*LlmAgent)
	if !ok {
		return nil, fmt.Errorf("call tool: %w: %q is not an LlmAgent of app %q", ErrAgentNotFound, call.Agent, r.cfg.AppName)
	}
	var t tool.Tool
	var names []string
	for _, c := range la.cfg.Tools {
		names = append(names, c.Name())
		if c.Name() == call.Tool {
			t = c
		}
	}
	if t == nil {
		return nil, &ToolNotFoundError{Name: call.Tool, Available: names}
	}
	sess, err := r.cfg.Sessions.Get(ctx, &session.GetRequest{AppName: r.cfg.AppName, UserID: call.UserID, SessionID: call.SessionID})
	if errors.Is(err, session.ErrNotFound) && r.cfg.AutoCreateSession {
		sess, err = r.cfg.Sessions.Create(ctx, &session.CreateRequest{AppName: r.cfg.AppName, UserID: call.UserID, SessionID: call.SessionID})
	}
	if err != nil {
		return nil, fmt.Errorf("call tool: %w", err)
	}
	inv := &invocation{
		id: cmp.Or(call.InvocationID, newInvocationID()), appName: r.cfg.AppName, session: sess,
		sessions: r.cfg.Sessions, artifacts: r.cfg.Artifacts, memory: r.cfg.Memory, plugins: r.cfg.Plugins,
		config: RunConfig{CustomMetadata: call.CustomMetadata, MaxLLMCalls: call.Limits.MaxLLMCalls,
			MaxEvents: call.Limits.MaxEvents, MaxFunctionCalls: call.Limits.MaxFunctionCalls, MaxBytes: call.Limits.MaxBytes}.resolved(), tree: r.tree, contents: r.contents, log: r.cfg.Logger,
		states: newAgentStates(), firstEvent: len(sess.Events()),
	}
	ictx := &InvocationContext{Context: ctx, inv: inv, agent: la, ended: new(atomic.Bool)}

	args, _ := session.DeepCopy(call.Args).(map[string]any)
	fc := &genai.FunctionCall{ID: clientCallIDPrefix + uuid.NewString(), Name: call.Tool, Args: args}
	// The call event is made first so that its time precedes the response's.
	callEv := ictx.newEvent()
	callEv.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: fc}}}
	llm := &llmCall{tools: map[string]tool.Tool{t.Name(): t}, toolOrder: []string{t.Name()}}
	// Events a tool passes up (a single_turn agent's) are stored as in a run.
	emit := func(ev *session.Event) error {
		if err := ictx.countEvent(ev); err != nil {
			return err
		}
		_, err := r.processAndAppend(ictx, ev)
		return err
	}
	resp, err := la.runFunctionCall(ictx, llm, fc, nil, emit)
	if err != nil {
		return nil, err
	}
	// Both events count as a run's do: the result as it arrives, and the
	// events as they are stored (the result's parts once).
	if resp != nil {
		if err := ictx.countResult(resp, truncateUTF8(t.Name(), maxLoggedNameBytes)); err != nil {
			return nil, err
		}
	}
	if resp == nil {
		// A long-running tool that answers later: the call is still
		// recorded, with an empty response, so the session shows it.
		resp = buildResponseEvent(ictx, t, map[string]any{}, nil, &toolContext{callbackContext: newCallbackContext(ictx, &session.EventActions{}), callID: fc.ID})
	}
	if c, ok := resp.Actions.RequestedToolConfirmations[fc.ID]; ok {
		return nil, &ConfirmationRequiredError{Tool: call.Tool, Hint: c.Hint}
	}
	out := &DirectToolResult{InvocationID: inv.id}
	for _, ev := range []*session.Event{callEv, resp} {
		if err := ictx.countEvent(ev); err != nil {
			return nil, fmt.Errorf("call tool: %w", err)
		}
		stored, err := r.processAndAppend(ictx, ev)
		if err != nil {
			return nil, fmt.Errorf("call tool: %w", err)
		}
		out.Events = append(out.Events, stored)
	}
	if frs := out.Events[1].FunctionResponses(); len(frs) > 0 {
		out.Response = frs[0].Response
	}
	if out.Response == nil {
		out.Response = map[string]any{}
	}
	return out, nil
}
