package engine

// Request processors, in google-adk 2.13's order: basic, instructions,
// identity, compaction, contents, NL planning, output schema, agent transfer (AutoFlow),
// then the agent's tools.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/contents"
	"github.com/adkhost/adkhost/engine/instruction"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/planner"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

func (a *LlmAgent) preprocess(ctx *InvocationContext, call *llmCall) error {
	m, err := a.canonicalModel(ctx)
	if err != nil {
		return err
	}
	call.model = m
	a.basicProcessor(ctx, call, m)
	if err := a.instructionsProcessor(ctx, call); err != nil {
		return err
	}
	if a.cfg.Mode != ModeSingleTurn { // google-adk gives single_turn agents no identity
		a.identityProcessor(call)
	}
	a.compactionProcessor(ctx)
	a.contentsProcessor(ctx, call)
	if a.cfg.Planner != nil {
		planner.ApplyToRequest(ctx, a.cfg.Planner, call.req)
	}
	// After the contents, which it rewrites (google-adk's order).
	if a.cfg.CodeExecutor != nil {
		if err := a.cfg.CodeExecutor.processRequest(call.req); err != nil {
			return err
		}
	}
	if err := a.outputSchemaProcessor(call, m); err != nil {
		return err
	}
	a.agentTransferProcessor(ctx, call)
	return a.toolsProcessor(ctx, call)
}

// basicProcessor sets the model, a copy of the agent's generation config,
// run labels and the output schema when the model can take it.
func (a *LlmAgent) basicProcessor(ctx *InvocationContext, call *llmCall, m model.Model) {
	req := call.req
	req.Model = m.Name()
	if gc := a.cfg.GenerateContentConfig; gc != nil {
		cp := *gc
		cp.Labels = maps.Clone(gc.Labels)
		cp.Tools = slices.Clone(gc.Tools)
		req.Config = &cp
	} else {
		req.Config = &genai.GenerateContentConfig{}
	}
	if labels := ctx.RunConfig().Labels; len(labels) > 0 {
		if req.Config.Labels == nil {
			req.Config.Labels = map[string]string{}
		}
		maps.Copy(req.Config.Labels, labels)
	}
	// A task agent's structured output goes through finish_task instead.
	if a.cfg.OutputSchema != nil && a.cfg.Mode != ModeTask && (len(a.cfg.Tools) == 0 || outputSchemaWithTools(m)) {
		req.Config.ResponseJsonSchema = a.cfg.OutputSchema
		req.Config.ResponseMIMEType = "application/json"
	}
}

// SchemaWithToolsModel is implemented by models that accept an output
// schema and tools in one request; others get the set_model_response tool.
type SchemaWithToolsModel interface {
	SupportsOutputSchemaWithTools() bool
}

func outputSchemaWithTools(m model.Model) bool {
	s, ok := m.(SchemaWithToolsModel)
	return ok && s.SupportsOutputSchemaWithTools()
}

// instructionsProcessor adds the root's global instruction, the static
// instruction, and the agent's instruction: to the system instruction, or,
// when a static instruction exists, as labelled user content.
func (a *LlmAgent) instructionsProcessor(ctx *InvocationContext, call *llmCall) error {
	req := call.req
	if root, ok := ctx.RootAgent().(*LlmAgent); ok && (root.cfg.GlobalInstruction != "" || root.cfg.GlobalInstructionProvider != nil) {
		si, err := resolveInstruction(ctx, root.cfg.GlobalInstruction, root.cfg.GlobalInstructionProvider)
		if err != nil {
			return fmt.Errorf("agent %q: global instruction: %w", root.Name, err)
		}
		req.AppendInstructions(si)
	}
	if st := a.cfg.StaticInstruction; st != nil {
		var texts []string
		for _, p := range st.Parts {
			if p != nil && p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		req.AppendInstructions(texts...)
	}
	if a.cfg.Instruction == "" && a.cfg.InstructionProvider == nil {
		return nil
	}
	si, err := resolveInstruction(ctx, a.cfg.Instruction, a.cfg.InstructionProvider)
	if err != nil {
		return fmt.Errorf("agent %q: instruction: %w", a.Name, err)
	}
	if a.cfg.StaticInstruction == nil {
		req.AppendInstructions(si)
		return nil
	}
	req.Contents = append(req.Contents, &genai.Content{Role: "user", Parts: []*genai.Part{{Text: labelDynamicInstruction(si)}}})
	return nil
}

// resolveInstruction returns the provider's text as is, or the template
// with session state and artifacts injected.
func resolveInstruction(ctx *InvocationContext, template string, provider func(callbacks.ReadonlyContext) (string, error)) (string, error) {
	if provider != nil {
		return provider(ctx)
	}
	return instruction.Inject(ctx, template, instruction.NewSource(ctx, ctx.inv.artifacts))
}

// Markers around a dynamic instruction sent as user content, so the model
// does not mistake it for the user's words (google-adk 2.13 _fencing).
const (
	instructionBegin    = "<<<BEGIN_SYSTEM_INSTRUCTION>>>"
	instructionEnd      = "<<<END_SYSTEM_INSTRUCTION>>>"
	quotedContentElided = "<<<ELIDED_MARKER>>>"
)

func labelDynamicInstruction(si string) string {
	fenced := strings.ReplaceAll(strings.ReplaceAll(si, instructionBegin, quotedContentElided), instructionEnd, quotedContentElided)
	preamble := "The text between " + instructionBegin + " and " + instructionEnd + " below is your own system instruction for this turn and carries the current session state. It is addressed to you. Nothing between those two markers was said by the user, so do not answer it or continue it as though it were their turn. Anything the user actually said appears outside the markers, and a real user turn may follow immediately after the end marker."
	return preamble + "\n" + instructionBegin + "\n" + fenced + "\n" + instructionEnd
}

// identityProcessor tells the model who it is.
func (a *LlmAgent) identityProcessor(call *llmCall) {
	si := `You are an agent. Your internal name is "` + a.Name + `".`
	if a.Description != "" {
		si += ` The description about you is "` + a.Description + `".`
	}
	call.req.AppendInstructions(si)
}

// compactionProcessor runs token-threshold compaction before the contents
// are built, so a summary it stores already shows in this request
// (google-adk CompactionRequestProcessor). A failure is logged: the full
// history is still usable.
func (a *LlmAgent) compactionProcessor(ctx *InvocationContext) {
	c := ctx.inv.compactor
	if c == nil || !c.tokenThresholdSet() {
		return
	}
	m, _ := a.canonicalModel(ctx) // nil: summarize says why
	if _, err := c.compactForTokenThreshold(ctx, ctx.inv.sessions, ctx.Session(), m, a.Name, ctx.Branch(), ctx.isolationScope); err != nil {
		ctx.inv.log.Warn("token-threshold compaction before a model request failed", "agent", a.Name, "invocation", ctx.inv.id, "err", err)
	}
}

// contentsProcessor replaces the contents with the agent's view of the
// history, then puts instruction contents before the latest user turn. The
// runner's cache reuses what earlier requests of the session built, so the
// history is not rebuilt (or copied) on every model call.
func (a *LlmAgent) contentsProcessor(ctx *InvocationContext, call *llmCall) {
	instructionContents := call.req.Contents
	sess := ctx.Session()
	key := ctx.inv.appName + "\x00" + sess.UserID + "\x00" + sess.ID
	singleTurn := a.cfg.Mode == ModeSingleTurn
	opt := contents.Options{
		AgentName: a.Name,
		Branch:    ctx.Branch(),
		// A single_turn agent sees only the current turn unless told
		// otherwise (google-adk build_node).
		CurrentTurnOnly: a.cfg.IncludeContents == IncludeContentsNone || singleTurn && a.cfg.IncludeContents == "",
		IsolationScope:  ctx.isolationScope,
		NodePath:        ctx.nodePath,
	}
	events := sess.Events()
	if singleTurn {
		// Its request and its node-path filtering make a view of its own,
		// which the session's cache does not hold.
		in := ctx.singleTurn
		if in != nil && in.agent != Agent(a) {
			in = nil
		}
		call.req.Contents = contents.Build(singleTurnView(events, in, ctx.Branch(), ctx.nodePath, !opt.CurrentTurnOnly), opt)
	} else {
		call.req.Contents = ctx.inv.contents.Build(key, events, opt)
	}
	// The task's input leads the contents, but only where a turn was
	// found: with include_contents none and no turn start in the scope
	// google-adk's _get_current_turn_contents returns nothing at all.
	if ctx.isolationScope != "" && (!opt.CurrentTurnOnly || len(call.req.Contents) > 0) {
		if lead := taskInputContent(events, ctx.isolationScope, singleTurn, ctx.UserContent()); lead != nil {
			call.req.Contents = append([]*genai.Content{lead}, call.req.Contents...)
		}
	}
	insertTransientUserContent(call.req, instructionContents)
}

// insertTransientUserContent inserts contents before the last run of plain
// user contents (after a function response, if that is what ends it).
func insertTransientUserContent(req *model.Request, extra []*genai.Content) {
	if len(extra) == 0 {
		return
	}
	at := len(req.Contents)
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c.Role != "user" || hasFunctionResponse(c) {
			at = i + 1
			break
		}
		at = i
	}
	req.Contents = slices.Insert(req.Contents, at, extra...)
}

func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// outputSchemaProcessor offers set_model_response when the agent has both
// an output schema and tools the model cannot combine with it. A task
// agent gets none: its finish_task takes the schema (google-adk
// _OutputSchemaRequestProcessor skips AgentMode.TASK).
func (a *LlmAgent) outputSchemaProcessor(call *llmCall, m model.Model) error {
	if a.cfg.OutputSchema == nil || len(a.cfg.Tools) == 0 || outputSchemaWithTools(m) || a.cfg.Mode == ModeTask {
		return nil
	}
	t, err := newSetModelResponseTool(a.cfg.OutputSchema, a.cfg.OutputSchemaKeyOrder)
	if err != nil {
		return fmt.Errorf("agent %q: output schema: %w", a.Name, err)
	}
	call.addTool(t)
	call.req.AppendFunctionDeclarations(t.Declaration())
	call.req.AppendInstructions("IMPORTANT: You have access to other tools, but you must provide your final response using the set_model_response tool with the required structured format. After using any other tools needed to complete the task, always call set_model_response with your final answer in the specified schema format.")
	return nil
}

// agentTransferProcessor offers transfer_to_agent with the targets'
// descriptions (AutoFlow). With no targets it does nothing, which is what
// makes it equivalent to SingleFlow for agents that cannot transfer.
func (a *LlmAgent) agentTransferProcessor(ctx *InvocationContext, call *llmCall) {
	targets := a.transferTargets(ctx)
	if len(targets) == 0 {
		return
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Info().Name
	}
	t := newTransferTool(names)
	call.addTool(t)
	call.req.AppendFunctionDeclarations(t.Declaration())
	// Task and single_turn agents may transfer but are told nothing of it.
	if a.cfg.Mode.delegated() {
		return
	}
	var b strings.Builder
	b.WriteString("\nYou have a list of other agents to transfer to:\n\n")
	for i, t := range targets {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nAgent name: %s\nAgent description: %s\n", t.Info().Name, t.Info().Description)
	}
	b.WriteString("\n")
	sorted := slices.Sorted(slices.Values(names))
	quoted := make([]string, len(sorted))
	for i, n := range sorted {
		quoted[i] = "`" + n + "`"
	}
	fmt.Fprintf(&b, "\nIf you are the best to answer the question according to your description,\nyou can answer it.\n\nIf another agent is better for answering the question according to its\ndescription, call `%s` function to transfer the question to that\nagent. When transferring, do not generate any text other than the function\ncall.\n\n**NOTE**: the only available agents for `%s` function are\n%s.\n", transferToAgentName, transferToAgentName, strings.Join(quoted, ", "))
	if parent := ctx.Parent(a); parent != nil && !a.cfg.DisallowTransferToParent {
		fmt.Fprintf(&b, "\nIf neither you nor the other agents are best for the question, transfer to your parent agent %s.\n", parent.Info().Name)
	}
	call.req.AppendInstructions(b.String())
}

// toolsProcessor adds the agent's tools: their declarations and any
// request changes they make.
func (a *LlmAgent) toolsProcessor(ctx *InvocationContext, call *llmCall) error {
	if len(a.cfg.Tools) == 0 && len(a.modeTools) == 0 {
		return nil
	}
	var dynamic []string
	tc := &toolContext{callbackContext: newCallbackContext(ctx, nil), dynamic: &dynamic}
	for _, t := range a.offeredTools(ctx, call) {
		if p, ok := t.(tool.RequestProcessor); ok {
			if err := p.ProcessRequest(tc, call.req); err != nil {
				return fmt.Errorf("agent %q: tool %q: %w", a.Name, t.Name(), err)
			}
		}
		if d := t.Declaration(); d != nil {
			call.addTool(t)
			call.req.AppendFunctionDeclarations(d)
		}
	}
	// Instructions tools gave while changing the request follow every
	// other instruction, joined into one (google-adk's dynamic
	// instructions, finalized after the tools).
	if len(dynamic) > 0 {
		call.req.AppendInstructions(strings.Join(dynamic, "\n\n"))
	}
	return nil
}

// engineFunctionNames are the function names the engine itself gives
// meaning to, on the wire or in the history, whether or not this request
// offers them as tools.
var engineFunctionNames = []string{transferToAgentName, setModelResponseName, finishTaskName,
	requestConfirmationName, "adk_request_credential", "adk_request_input"}

// IsEngineFunctionName reports whether name is a function name the engine
// gives meaning to (transfer_to_agent, set_model_response, finish_task,
// adk_request_confirmation, ...): a tool taking it would stand in for the
// engine's own, and the engine reads calls and responses of that name
// from the history as its own.
func IsEngineFunctionName(name string) bool { return slices.Contains(engineFunctionNames, name) }

// listedTool is one of an agent's tools, with the toolset that listed it
// (nil for a tool the agent was given directly).
type listedTool struct {
	tool tool.Tool
	set  tool.Toolset
}

// offeredTools are the tools the agent offers after the ones call already
// has: its canonical tools, then its mode tools.
//
// A toolset's tool may not take a function name the agent already has:
// one of call's tools (transfer_to_agent, set_model_response), a name the
// engine gives meaning to, a tool the agent was given directly (wherever
// the toolset stands in the list), a mode tool, or an earlier toolset's
// tool. Such a tool is left out with a warning naming both. google-adk
// lets the last tool of a name win, which would let a toolset's tool, a
// remote server's choice, take over the calls of a tool the app trusts;
// its two declarations would also make every model request fail. Tools
// given directly keep google-adk's behaviour: an app definition refuses
// duplicates among them when it loads.
func (a *LlmAgent) offeredTools(ctx *InvocationContext, call *llmCall) []tool.Tool {
	listed := a.canonicalTools(ctx)
	out := make([]tool.Tool, 0, len(listed)+len(a.modeTools))
	fromSet := false
	for _, l := range listed {
		out = append(out, l.tool)
		fromSet = fromSet || l.set != nil
	}
	out = append(out, a.modeTools...)
	if !fromSet {
		return out
	}
	// holder says who has each name a toolset's tool may not take.
	holder := map[string]string{}
	for _, n := range engineFunctionNames {
		holder[n] = "the engine's " + n
	}
	for n := range call.tools {
		holder[n] = "the engine's " + n
	}
	for _, t := range slices.Concat(a.cfg.Tools, a.modeTools) {
		if _, isSet := tool.SetOf(t); !isSet && t.Declaration() != nil {
			if _, ok := holder[t.Name()]; !ok {
				holder[t.Name()] = "the agent's own tool " + t.Name()
			}
		}
	}
	out = out[:0]
	var skipped []skippedTool
	for _, l := range listed {
		if l.set != nil && l.tool.Declaration() != nil {
			name := l.tool.Name()
			if by, taken := holder[name]; taken {
				skipped = append(skipped, skippedTool{set: l.set.Name(), name: name, kept: by})
				continue
			}
			holder[name] = "the tool " + name + " of " + l.set.Name()
		}
		out = append(out, l.tool)
	}
	a.warnSkipped(ctx, skipped)
	return append(out, a.modeTools...)
}

// skippedTool is a toolset's tool offeredTools left out, and who keeps
// its name.
type skippedTool struct{ set, name, kept string }

// maxSkippedNamed bounds the tools one warning names.
const maxSkippedNamed = 10

// warnSkipped logs the tools left out, one line per toolset, once an
// invocation: every model request lists the toolsets again, and a
// warning per tool and request let a server whose thousand tools all
// collide write a thousand lines per model call.
func (a *LlmAgent) warnSkipped(ctx *InvocationContext, skipped []skippedTool) {
	for len(skipped) > 0 {
		set := skipped[0].set
		var mine []skippedTool
		skipped = slices.DeleteFunc(skipped, func(s skippedTool) bool {
			if s.set == set {
				mine = append(mine, s)
			}
			return s.set == set
		})
		if !ctx.inv.firstWarning("skipped tools\x00" + a.Name + "\x00" + set) {
			continue
		}
		named := make([]string, 0, min(len(mine), maxSkippedNamed))
		for _, s := range mine[:min(len(mine), maxSkippedNamed)] {
			named = append(named, fmt.Sprintf("%s (kept: %s)", s.name, s.kept))
		}
		list := strings.Join(named, "; ")
		if more := len(mine) - len(named); more > 0 {
			list += fmt.Sprintf("; and %d more", more)
		}
		ctx.Logger().Warn("skipping a toolset's tools: the agent already has functions of those names",
			"agent", a.Name, "toolset", set, "skipped", len(mine), "tools", list)
	}
}

// canonicalTools are the agent's tools with each toolset replaced by the
// tools it lists (google-adk's canonical_tools). A toolset that fails to
// list is left out and the failure logged, as google-adk does: the agent
// runs without those tools.
func (a *LlmAgent) canonicalTools(ctx *InvocationContext) []listedTool {
	out := make([]listedTool, 0, len(a.cfg.Tools))
	for _, t := range a.cfg.Tools {
		ts, ok := tool.SetOf(t)
		if !ok {
			out = append(out, listedTool{tool: t})
			continue
		}
		tools, err := ts.Tools(ctx)
		if err != nil {
			// Once an invocation: each of its model requests lists again.
			if ctx.inv.firstWarning("toolset failed\x00" + a.Name + "\x00" + ts.Name()) {
				ctx.Logger().Error("agent will run without the tools of a toolset that failed to load", "agent", a.Name, "toolset", ts.Name(), "err", err)
			}
			continue
		}
		for _, t := range tools {
			out = append(out, listedTool{tool: t, set: ts})
		}
	}
	return out
}

// parseJSONOutput parses an answer given under an output schema, keeping
// integers as int64 (as Python's json.loads keeps ints) and other numbers
// as float64.
func parseJSONOutput(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("output is not valid JSON: %w", err)
	}
	return pyfmt.ExactNumbers(v), nil
}
