package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/planner"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/engine/tool/geminitool"
	"github.com/adkhost/adkhost/host"
)

// defaultModelName is LlmAgent.DEFAULT_MODEL in google-adk 2.13.
const defaultModelName = "gemini-3.5-flash"

// builder constructs the adkhost agent tree of a scenario.
type builder struct {
	script *script
	log    *callbackLog
	wasm   *wasmRun // Wasm mode: behaviours run in the guest (wasm.go)
}

func (b *builder) model(name string) *scriptedModel { return &scriptedModel{name: name, s: b.script} }

// agent builds spec; ancestorModel reports whether an LlmAgent above it
// names a model (which it then inherits, as google-adk's canonical_model).
func (b *builder) agent(spec *AgentSpec, ancestorModel bool) (engine.Agent, error) {
	hasModel := ancestorModel || (spec.Type == "LlmAgent" && spec.Model != "")
	var subs []engine.Agent
	for _, s := range spec.SubAgents {
		a, err := b.agent(s, hasModel)
		if err != nil {
			return nil, err
		}
		subs = append(subs, a)
	}
	cbs := buildAgentCallbacks(spec.Callbacks, b.log)
	var wm *host.Module
	if b.wasm != nil {
		var err error
		if cbs, wm, err = b.wasm.agent(spec); err != nil {
			return nil, fmt.Errorf("agent %s: Wasm: %w", spec.Name, err)
		}
	}
	info := engine.AgentInfo{Name: spec.Name, Description: spec.Description, SubAgents: subs, BeforeAgent: cbs.beforeAgent, AfterAgent: cbs.afterAgent}
	switch spec.Type {
	case "SequentialAgent":
		return engine.NewSequentialAgent(info)
	case "ParallelAgent":
		return engine.NewParallelAgent(info)
	case "LoopAgent":
		var maxIter *int
		if spec.MaxIterations != nil {
			maxIter = new(int(*spec.MaxIterations))
		}
		return engine.NewLoopAgent(info, maxIter)
	}

	where := "agent " + spec.Name
	cfg := engine.LlmAgentConfig{
		Name: spec.Name, Description: spec.Description, SubAgents: subs,
		OutputKey:                spec.OutputKey,
		IncludeContents:          engine.IncludeContents(spec.IncludeContents),
		DisallowTransferToParent: spec.DisallowTransferToParent,
		DisallowTransferToPeers:  spec.DisallowTransferToPeers,
		BeforeAgent:              cbs.beforeAgent, AfterAgent: cbs.afterAgent,
		BeforeModel: cbs.beforeModel, AfterModel: cbs.afterModel, OnModelError: cbs.onModelError,
		BeforeTool: cbs.beforeTool, AfterTool: cbs.afterTool, OnToolError: cbs.onToolError,
	}
	switch {
	case spec.Model != "":
		cfg.Model = b.model(spec.Model)
	case !ancestorModel:
		// LlmAgent.set_default_model(<scripted gemini-3.5-flash>).
		cfg.Model = b.model(defaultModelName)
	}
	if spec.Instruction != nil {
		cfg.Instruction = *spec.Instruction
	}
	if spec.GlobalInstruction != nil {
		cfg.GlobalInstruction = *spec.GlobalInstruction
	}
	if p := spec.InstructionProvider; p != nil {
		cfg.InstructionProvider = func(callbacks.ReadonlyContext) (string, error) { return *p, nil }
	}
	if p := spec.GlobalInstructionProvider; p != nil {
		cfg.GlobalInstructionProvider = func(callbacks.ReadonlyContext) (string, error) { return *p, nil }
	}
	if spec.StaticInstruction != nil {
		cfg.StaticInstruction = buildContent(spec.StaticInstruction)
	}
	if spec.OutputSchema != nil {
		cfg.OutputSchema = modelJSONSchema(spec.OutputSchema)
		cfg.OutputSchemaKeyOrder = modelSchemaKeyOrder(spec.OutputSchema)
	}
	cfg.Mode = engine.AgentMode(spec.Mode)
	if spec.CodeExecutor == "built_in" {
		cfg.CodeExecutor = &engine.BuiltInCodeExecutor{}
	}
	if p := spec.Planner; p != nil {
		if p.PlanReAct {
			cfg.Planner = planner.PlanReAct{}
		} else {
			tc := &genai.ThinkingConfig{}
			if err := fillStruct(tc, p.ThinkingConfig); err != nil {
				return nil, fmt.Errorf("%s: %s: planner.built_in: %v", p.pos.pos(), where, err)
			}
			cfg.Planner = &planner.BuiltIn{ThinkingConfig: tc}
		}
	}
	if spec.GenerateContentConfig != nil {
		gc := &genai.GenerateContentConfig{}
		if err := fillStruct(gc, spec.GenerateContentConfig); err != nil {
			return nil, fmt.Errorf("%s: %s: generate_content_config: %v", spec.GenerateContentConfigPos.pos(), where, err)
		}
		cfg.GenerateContentConfig = gc
	}
	for _, ts := range spec.Tools {
		t, err := b.tool(ts, wm)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		cfg.Tools = append(cfg.Tools, t)
	}
	return engine.NewLlmAgent(cfg)
}

// tool builds a function tool that behaves like the Python runner's
//
//	async def <name>(*, <params>, tool_context: ToolContext)
//
// (FORMAT.md §1.4).
//
// In Wasm mode (wm != nil) the body is the guest's.
func (b *builder) tool(spec *ToolSpec, wm *host.Module) (tool.Tool, error) {
	if at := spec.AgentTool; at != nil {
		a, err := b.agent(at.Agent, false)
		if err != nil {
			return nil, err
		}
		return &engine.AgentTool{Agent: a, SkipSummarization: at.SkipSummarization}, nil
	}
	if spec.ExampleTool != nil {
		et := &engine.ExampleTool{}
		for _, ex := range spec.ExampleTool {
			e := engine.Example{Input: buildContent(ex.Input)}
			for _, o := range ex.Output {
				e.Output = append(e.Output, buildContent(o))
				hints := make([]json.RawMessage, len(o.Parts))
				for i, p := range o.Parts {
					switch {
					case p.Call != nil:
						hints[i] = p.Call.ArgsOrder
					case p.Response != nil:
						hints[i] = p.Response.ResponseOrder
					}
				}
				e.KeyOrder = append(e.KeyOrder, hints)
			}
			et.Examples = append(et.Examples, e)
		}
		return et, nil
	}
	// Built-in tools are the engine's own, in Wasm mode too.
	switch spec.Builtin {
	case "exit_loop":
		return engine.ExitLoopTool{}, nil
	case "load_memory":
		return engine.LoadMemoryTool{}, nil
	case "preload_memory":
		return engine.PreloadMemoryTool{}, nil
	case "load_artifacts":
		return engine.LoadArtifactsTool{}, nil
	case "get_user_choice":
		return engine.GetUserChoiceTool{}, nil
	case "transfer_to_agent":
		return engine.TransferToAgentFunctionTool{}, nil
	case "google_search":
		return geminitool.GoogleSearch(), nil
	case "url_context":
		return geminitool.URLContext(), nil
	case "enterprise_web_search":
		return geminitool.EnterpriseWebSearch(), nil
	case "google_maps_grounding":
		return geminitool.GoogleMaps(), nil
	}
	desc := ""
	if spec.Description != nil {
		desc = *spec.Description
	}
	log := b.log
	fn := func(ctx callbacks.ToolContext, args map[string]any) (any, error) {
		// The Python function receives its declared keyword arguments, with
		// the signature's defaults for the ones the call left out.
		callArgs := map[string]any{}
		for _, p := range spec.Params {
			v, ok := args[p.Name]
			switch {
			case ok:
			case p.HasDefault:
				v = deepCopy(p.Default)
			case p.Optional:
				v = nil
			default:
				return nil, &PyError{Type: "TypeError", Msg: fmt.Sprintf("%s() missing 1 required keyword-only argument: '%s'", spec.Name, p.Name)}
			}
			callArgs[p.Name] = v
		}
		entry := map[string]any{"hook": "tool", "owner": "tool:" + spec.Name, "agent": ctx.AgentName(), "tool": spec.Name, "args": pyDump(callArgs)}
		confirmation := ctx.ToolConfirmation()
		if confirmation != nil {
			entry["confirmation"] = confirmationEntry(confirmation)
		}
		log.add(entry)
		if c := spec.RequestConfirmation; c != nil {
			if confirmation == nil {
				hint := ""
				if c.Hint != nil {
					hint = *c.Hint
				}
				ctx.RequestConfirmation(hint, deepCopy(c.Payload))
				return map[string]any{"status": "confirmation requested"}, nil
			}
			if !confirmation.Confirmed {
				return map[string]any{"status": "rejected"}, nil
			}
		}
		for _, kv := range spec.SetState {
			ctx.State().SetOrdered(kv.Key, deepCopy(kv.Value), kv.Order)
		}
		var artifactResults []any
		if spec.Artifacts != nil {
			var err error
			if artifactResults, err = runArtifactOps(ctx, spec.Artifacts); err != nil {
				return nil, err
			}
		}
		if spec.TransferToAgent != nil {
			ctx.Actions().TransferToAgent = *spec.TransferToAgent
		}
		if spec.Escalate {
			ctx.Actions().Escalate = true
		}
		if spec.SkipSummarization {
			ctx.Actions().SkipSummarization = true
		}
		if spec.Raise != nil {
			return nil, &PyError{Type: spec.Raise.Type, Msg: spec.Raise.Msg}
		}
		if spec.ReturnArgs {
			return callArgs, nil
		}
		if spec.ReturnArtifacts {
			return map[string]any{"artifacts": artifactResults}, nil
		}
		if spec.HasReturn {
			if spec.ReturnOrder != nil {
				return tool.OrderedResult{Value: deepCopy(spec.Return), KeyOrder: spec.ReturnOrder}, nil
			}
			return deepCopy(spec.Return), nil
		}
		return nil, nil
	}
	if wm != nil {
		var err error
		if fn, err = wasmToolFn(wm, spec.Name); err != nil {
			return nil, err
		}
	}
	return tool.NewFunction(tool.FunctionConfig{
		Name:                spec.Name,
		Description:         desc,
		Parameters:          toolParamsSchema(spec.Name, spec.Params),
		LongRunning:         spec.LongRunning,
		RequireConfirmation: spec.RequireConfirmation,
		Fn:                  fn,
	})
}

// confirmationEntry is the callback_log form of the confirmation a tool
// received: ToolConfirmation.model_dump(mode="json", exclude_none=True).
func confirmationEntry(c *session.ToolConfirmation) map[string]any {
	m := map[string]any{"confirmed": c.Confirmed, "hint": c.Hint}
	if c.Payload != nil {
		m["payload"] = pyDump(c.Payload)
	}
	return m
}

// fillStruct sets the fields of *dst (a genai struct) from a mapping with
// Python (snake_case) field names, as types.X(**mapping) would; unknown
// fields are errors.
func fillStruct(dst any, m map[string]any) error {
	rv := reflect.ValueOf(dst).Elem()
	rt := rv.Type()
	for k, v := range m {
		found := false
		for i := range rt.NumField() {
			f := rt.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || snakeCase(name) != k {
				continue
			}
			found = true
			fv := rv.Field(i)
			target := fv.Type()
			isStructPtr := target.Kind() == reflect.Pointer && target.Elem().Kind() == reflect.Struct
			if sub, ok := v.(map[string]any); ok && isStructPtr && target.Elem().PkgPath() == rt.PkgPath() && !strings.Contains(strings.ToLower(name), "schema") {
				p := reflect.New(target.Elem())
				if err := fillStruct(p.Interface(), sub); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				fv.Set(p)
				break
			}
			data, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			p := reflect.New(target)
			if err := json.Unmarshal(data, p.Interface()); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			fv.Set(p.Elem())
			break
		}
		if !found {
			return fmt.Errorf("unknown field %q for %s", k, rt.Name())
		}
	}
	return nil
}
