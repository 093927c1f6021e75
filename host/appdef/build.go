package appdef

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
)

// resolveModels resolves each model name once, and checks that every
// LlmAgent has a model, its own or an ancestor LlmAgent's, as the engine
// needs (google-adk would fall back to a default Gemini model, which an
// adkhost server may not be able to call).
func (l *loader) resolveModels(root *agentSpec) map[string]model.Model {
	out := map[string]model.Model{}
	failed := map[string]error{}
	walk(root, func(a *agentSpec, parents []*agentSpec) {
		if a.class != classLlm {
			return
		}
		if a.model == "" {
			if !slices.ContainsFunc(parents, func(p *agentSpec) bool { return p.class == classLlm && p.model != "" }) {
				l.add(&Error{File: a.at.d.file, Line: firstLine(a.at), Column: firstCol(a.at), Field: "model",
					Msg: "no model: set model on this agent or on an ancestor LlmAgent (e.g. gemini-2.5-flash, openai/gpt-4o-mini, scripted)"})
			}
			return
		}
		if _, ok := out[a.model]; ok {
			return
		}
		err, ok := failed[a.model]
		if !ok {
			if l.env.Models == nil {
				l.add(a.modelAt.errf("the server has no model resolver (Env.Models)"))
				return
			}
			var m model.Model
			m, err = l.env.Models.ResolveModel(l.ctx, a.model, l.files)
			if err == nil {
				out[a.model] = m
				return
			}
			failed[a.model] = err
		}
		if errors.Is(err, ErrNoBackend) && !l.env.StrictModels {
			// google-adk loads the config and fails at the model call.
			out[a.model] = unavailableModel{name: a.model, err: err}
			w := a.modelAt.errf("model %q has no backend on this server; the app loads, and its model calls fail: %v", a.model, err)
			l.warnings = append(l.warnings, w.Error())
			l.log.Warn("appdef: model without a backend", "model", a.model, "err", err)
			return
		}
		l.add(a.modelAt.wrap(err, "model %q: %v", a.model, err))
	})
	return out
}

// unavailableModel stands for a model the server has no backend for: every
// call fails with the reason, as google-adk's model resolution fails at the
// first call (a ValueError).
type unavailableModel struct {
	name string
	err  error
}

func (m unavailableModel) Name() string { return m.name }

func (m unavailableModel) GenerateContent(context.Context, *model.Request, bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		yield(nil, &NoBackendError{Model: m.name, Err: m.err})
	}
}

// NoBackendError is the error of a call to a model the server has no
// backend for.
type NoBackendError struct {
	Model string
	Err   error
}

func (e *NoBackendError) Error() string {
	return fmt.Sprintf("model %q is not available on this server: %v", e.Model, e.Err)
}
func (e *NoBackendError) Unwrap() error { return e.Err }

// ErrorCode makes the error event carry google-adk's exception name.
func (e *NoBackendError) ErrorCode() string { return "ValueError" }

// build makes the engine agent of a and its sub-agents. It is called only
// when validation found no error; what it still finds (duplicate tool
// names) is recorded and the result is then discarded.
func (l *loader) build(a *agentSpec, models map[string]model.Model, mods appModules) engine.Agent {
	var subs []engine.Agent
	for _, s := range a.subAgents {
		if sub := l.build(s, models, mods); sub != nil {
			subs = append(subs, sub)
		}
	}
	var cbs callbacks.Agent
	for _, c := range a.callbacks {
		appendHook(&cbs, mods.module(c.module.ref).Callbacks(), c)
	}
	info := engine.AgentInfo{Name: a.name, Description: a.description, SubAgents: subs,
		BeforeAgent: cbs.BeforeAgent, AfterAgent: cbs.AfterAgent}
	var (
		agent engine.Agent
		err   error
	)
	switch a.class {
	case classSequential:
		agent, err = engine.NewSequentialAgent(info)
	case classParallel:
		agent, err = engine.NewParallelAgent(info)
	case classLoop:
		agent, err = engine.NewLoopAgent(info, a.maxIterations)
	default:
		tools := l.tools(a, models, mods)
		var codeExecutor *engine.BuiltInCodeExecutor
		if a.codeExecutor {
			codeExecutor = &engine.BuiltInCodeExecutor{}
		}
		agent, err = engine.NewLlmAgent(engine.LlmAgentConfig{
			CodeExecutor: codeExecutor,
			Name:         a.name, Description: a.description, Model: models[a.model],
			Instruction: a.instruction, StaticInstruction: a.staticInstruction,
			Tools: tools, GenerateContentConfig: a.contentConfig, OutputSchema: a.outputSchema,
			OutputSchemaKeyOrder: a.outputSchemaKeyOrder,
			OutputKey:            a.outputKey, IncludeContents: a.includeContents,
			DisallowTransferToParent: a.disallowParent, DisallowTransferToPeers: a.disallowPeers,
			SubAgents:   subs,
			BeforeAgent: cbs.BeforeAgent, AfterAgent: cbs.AfterAgent,
			BeforeModel: cbs.BeforeModel, AfterModel: cbs.AfterModel, OnModelError: cbs.OnModelError,
			BeforeTool: cbs.BeforeTool, AfterTool: cbs.AfterTool, OnToolError: cbs.OnToolError,
		})
	}
	if err != nil {
		l.add(a.at.wrap(err, "%v", err))
		return nil
	}
	return agent
}

// tools returns a's tools in order, recording a duplicate name at the
// entry that brings it.
func (l *loader) tools(a *agentSpec, models map[string]model.Model, mods appModules) []tool.Tool {
	var out []tool.Tool
	seen := map[string]val{}
	add := func(t tool.Tool, at val) {
		if prev, dup := seen[t.Name()]; dup {
			l.add(at.errf("a second tool named %q (the first comes from %s)", t.Name(), locate(prev)))
			return
		}
		seen[t.Name()] = at
		out = append(out, t)
	}
	for _, r := range a.tools {
		if t, ok := builtins[r.builtin]; ok {
			add(t, r.at)
			continue
		}
		if r.configured != nil {
			add(r.configured, r.at)
			continue
		}
		if r.mcp != nil {
			ts, err := l.mcpToolset(r.mcp)
			if err != nil {
				l.add(r.at.wrap(err, "MCPToolset: %v", err))
				continue
			}
			l.toolsets = append(l.toolsets, ts)
			out = append(out, tool.FromSet(ts)) // its tools are named when listed
			continue
		}
		if at := r.agentTool; at != nil {
			if child := l.build(at.agent, models, mods); child != nil {
				add(&engine.AgentTool{Agent: child, SkipSummarization: at.skipSummarization, ExcludePlugins: at.excludePlugins}, r.at)
			}
			continue
		}
		m := mods.module(r.module.ref)
		if r.tool != "" {
			add(findTool(m, r.tool), r.at)
			continue
		}
		for _, t := range m.Tools() {
			add(t, r.at)
		}
	}
	return out
}

// appendHook appends the callback of hook c.hook from a module's callbacks.
func appendHook(dst *callbacks.Agent, src callbacks.Agent, c callbackRef) {
	switch c.hook {
	case abi.HookBeforeAgent:
		dst.BeforeAgent = append(dst.BeforeAgent, src.BeforeAgent...)
	case abi.HookAfterAgent:
		dst.AfterAgent = append(dst.AfterAgent, src.AfterAgent...)
	case abi.HookBeforeModel:
		dst.BeforeModel = append(dst.BeforeModel, src.BeforeModel...)
	case abi.HookAfterModel:
		dst.AfterModel = append(dst.AfterModel, src.AfterModel...)
	case abi.HookOnModelError:
		dst.OnModelError = append(dst.OnModelError, src.OnModelError...)
	case abi.HookBeforeTool:
		dst.BeforeTool = append(dst.BeforeTool, src.BeforeTool...)
	case abi.HookAfterTool:
		dst.AfterTool = append(dst.AfterTool, src.AfterTool...)
	case abi.HookOnToolError:
		dst.OnToolError = append(dst.OnToolError, src.OnToolError...)
	}
}
