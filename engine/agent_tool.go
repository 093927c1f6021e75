package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// AgentTool is google-adk 2.13's AgentTool: an agent called as a tool.
// Each call runs the agent in a session of its own, in memory, seeded with
// the caller's state; the agent's state writes reach the caller's state,
// its artifacts the caller's artifacts, and the caller's plugins see its
// run. The answer is the text of the agent's last content (validated and
// parsed with the agent's output schema, if it has one), or its last error
// message.
type AgentTool struct {
	// Agent is the agent to run. It must not also be part of the caller's
	// agent tree.
	Agent Agent
	// SkipSummarization ends the caller's turn with the tool's answer.
	SkipSummarization bool
	// ExcludePlugins runs the agent without the caller's plugins
	// (google-adk's include_plugins=False).
	ExcludePlugins bool
}

var _ tool.Tool = (*AgentTool)(nil)

// Name is the agent's name.
func (t *AgentTool) Name() string { return t.Agent.Info().Name }

// Description is the agent's description.
func (t *AgentTool) Description() string { return t.Agent.Info().Description }

// IsLongRunning is false: the agent's run ends within the call.
func (t *AgentTool) IsLongRunning() bool { return false }

// Declaration takes one string, the request (google-adk's declaration for
// an agent without an input schema).
func (t *AgentTool) Declaration() *genai.FunctionDeclaration {
	return requestDeclaration(t.Name(), t.Description())
}

// Run runs the agent on the request and answers with its last content.
func (t *AgentTool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	tc, ok := ctx.(*toolContext)
	if !ok {
		return nil, fmt.Errorf("AgentTool %q: called outside an engine run", t.Name())
	}
	if t.SkipSummarization {
		tc.Actions().SkipSummarization = true
	}
	request, err := agentToolRequest(args)
	if err != nil {
		return nil, err // google-adk's error as it is: the event shows its text
	}
	inv := tc.inv
	if inv.config.nesting >= MaxAgentDepth {
		return nil, fmt.Errorf("AgentTool %q: agents run as tools inside each other more than %d deep (an agent tool whose agent calls it again?): make the agents that call each other sub-agents, or break the cycle", t.Name(), MaxAgentDepth)
	}
	var plugins []callbacks.Plugin
	if !t.ExcludePlugins {
		plugins = inv.plugins
	}
	runner, err := NewRunner(RunnerConfig{
		AppName:   inv.appName,
		Agent:     t.Agent,
		Sessions:  session.NewInMemoryService(),
		Artifacts: forwardingArtifacts{tc},
		Memory:    memory.NewInMemoryService(),
		Plugins:   plugins,
		Logger:    inv.log,
	})
	if err != nil {
		return nil, fmt.Errorf("AgentTool %q: %w", t.Name(), err)
	}
	sess, release, err := t.seedSession(tc, runner)
	if err != nil {
		return nil, err
	}
	defer release()
	cfg := inv.config
	cfg.nesting++
	cfg.StreamingMode, cfg.InvocationID, cfg.StateDelta = StreamingModeNone, "", nil
	msg := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: request}}}

	var lastContent *genai.Content
	var lastError string
	pending := map[string]bool{}
	for ev, err := range runner.Run(tc, tc.UserID(), sess.ID, msg, cfg) {
		if err != nil {
			// The agent's failure is the tool's, as google-adk's nested
			// run_async raises out of AgentTool.run_async: the nested run's
			// mark of the failing agent goes, so the caller's run records
			// the error as its own.
			var marked *agentRunError
			if errors.As(err, &marked) {
				err = marked.err
			}
			return nil, err
		}
		for k, v := range ev.Actions.StateDelta {
			tc.State().Set(k, v)
		}
		if ev.ErrorMessage != "" {
			lastError = ev.ErrorMessage
		}
		for _, id := range ev.LongRunningToolIDs {
			pending[id] = true
		}
		if ev.Content != nil {
			lastContent = ev.Content
			for _, fr := range ev.FunctionResponses() {
				delete(pending, fr.ID)
			}
		}
	}
	if len(pending) > 0 {
		tc.Actions().SkipSummarization, tc.Actions().SkipSummarizationSet = false, true
		ids := make([]string, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return fmt.Sprintf("Error: agent %s stopped waiting on unresolved long-running tool call(s) (pending call ids: %s), which AgentTool cannot resume.",
			pyQuote(t.Name()), pyList(ids)), nil
	}
	if lastContent == nil || lastContent.Parts == nil {
		return lastError, nil
	}
	var texts []string
	for _, p := range lastContent.Parts {
		if p == nil || p.Thought {
			continue
		}
		if s := partText(p); s != "" {
			texts = append(texts, s)
		}
	}
	merged := strings.Join(texts, "\n")
	if merged == "" && lastError != "" {
		return lastError, nil
	}
	if la, ok := t.Agent.(*LlmAgent); ok && la.cfg.OutputSchema != nil {
		v, order, err := validateOutput(la.cfg.OutputSchema, la.cfg.OutputSchemaKeyOrder, merged)
		if err != nil || order == nil {
			return v, err
		}
		return tool.OrderedResult{Value: v, KeyOrder: order}, nil
	}
	return merged, nil
}

// partText is the user-visible text of a part, code execution output
// included (google-adk's _part_to_text).
func partText(p *genai.Part) string {
	switch {
	case p.Text != "":
		return p.Text
	case p.CodeExecutionResult != nil && p.CodeExecutionResult.Output != "":
		return strings.TrimRight(p.CodeExecutionResult.Output, "\n")
	case p.ExecutableCode != nil && p.ExecutableCode.Code != "":
		return p.ExecutableCode.Code
	}
	return ""
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = pyQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// seedSession creates the nested run's session with the caller's state
// (google-adk's AgentTool seeds it so). The copies of that state it holds
// while the nested run lives count against RunConfig.MaxBytes until
// release: a response's parallel calls of agent tools each copied the
// whole state at once. The copies are made one agent tool at a time, so
// that calls refused by the bound never hold theirs together.
func (t *AgentTool) seedSession(tc *toolContext, runner *Runner) (*session.Session, func(), error) {
	inv := tc.inv
	cfg := &inv.config
	if cfg.MaxBytes > 0 {
		cfg.bytes.copyMu.Lock()
		defer cfg.bytes.copyMu.Unlock()
	}
	state := map[string]any{}
	for k, v := range tc.State().All() {
		if !strings.HasPrefix(k, "_adk") {
			state[k] = v
		}
	}
	release := func() {}
	if cfg.MaxBytes > 0 {
		held := stateCopyCost(state)
		if err := cfg.bytes.add(held, cfg.MaxBytes, tc.AgentName(), "AgentTool "+strconv.Quote(t.Name())+"'s copy of the caller's state"); err != nil {
			return nil, nil, err
		}
		release = func() { cfg.bytes.used.Add(-held) }
	}
	sess, err := runner.cfg.Sessions.Create(tc, &session.CreateRequest{AppName: inv.appName, UserID: tc.UserID(), State: state})
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("AgentTool %q: %w", t.Name(), err)
	}
	return sess, release, nil
}

// stateCopyCost is what copies of state hold beyond the values they
// share: the nested run's session copies its maps and lists (a few times:
// the seed, the stored session, each view of it), not its strings. A
// state of 200,000 small keys (2.4 MB of JSON) took about 90 MB per
// agent tool run, so 64 parallel calls peaked at 2.7 GB.
func stateCopyCost(state map[string]any) int64 {
	const perEntry = 256
	return perEntry * containerEntries(state, 0)
}

// containerEntries counts the map entries and list elements in v.
func containerEntries(v any, depth int) int64 {
	if depth > 1000 {
		return 0
	}
	var n int64
	switch x := v.(type) {
	case map[string]any:
		n = int64(len(x))
		for _, e := range x {
			n += containerEntries(e, depth+1)
		}
	case []any:
		n = int64(len(x))
		for _, e := range x {
			n += containerEntries(e, depth+1)
		}
	}
	return n
}

// forwardingArtifacts is the agent tool's artifact service: the caller's
// artifacts, through its tool context (google-adk's
// ForwardingArtifactService), so versions land on the caller's event.
type forwardingArtifacts struct{ tc *toolContext }

func (f forwardingArtifacts) Save(_ context.Context, k artifact.Key, part *genai.Part) (int, error) {
	return f.tc.SaveArtifact(k.Name, part)
}

func (f forwardingArtifacts) Load(_ context.Context, k artifact.Key, version int) (*genai.Part, error) {
	return f.tc.LoadArtifact(k.Name, version)
}

func (f forwardingArtifacts) List(context.Context, string, string, string) ([]string, error) {
	return f.tc.ListArtifacts()
}

func (f forwardingArtifacts) Versions(ctx context.Context, k artifact.Key) ([]int, error) {
	inv := f.tc.inv
	if inv.artifacts == nil {
		return nil, fmt.Errorf("no artifact service")
	}
	return inv.artifacts.Versions(ctx, artifact.Key{AppName: inv.appName, UserID: f.tc.UserID(), SessionID: inv.session.ID, Name: k.Name})
}

func (f forwardingArtifacts) Delete(ctx context.Context, k artifact.Key) error {
	inv := f.tc.inv
	if inv.artifacts == nil {
		return fmt.Errorf("no artifact service")
	}
	return inv.artifacts.Delete(ctx, artifact.Key{AppName: inv.appName, UserID: f.tc.UserID(), SessionID: inv.session.ID, Name: k.Name})
}

// agentToolRequest is the text of the message an AgentTool sends its agent,
// as google-adk's AgentTool.run_async builds it: the request argument as it
// is (null gives an empty text), or without one every argument as
// json.dumps(args, ensure_ascii=False, sort_keys=True) writes them. A
// request that is not a string fails the call with the ValidationError
// pydantic raises for Part(text=...) in google-adk.
func agentToolRequest(args map[string]any) (string, error) {
	v, has := args["request"]
	if !has {
		text, err := pyfmt.JSONDumps(args) // Go maps: sorted keys
		if err != nil {
			return "", fmt.Errorf("arguments not JSON: %w", err)
		}
		return text, nil
	}
	switch r := v.(type) {
	case string:
		return r, nil
	case nil:
		return "", nil
	}
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		v = int64(f) // a model's JSON 42, which Python decodes as an int
	}
	return "", &OutputValidationError{Model: "Part", Errors: []fieldError{{
		loc: "text", kind: "string_type", msg: "Input should be a valid string", input: v,
	}}}
}
