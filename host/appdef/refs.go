package appdef

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/engine/tool/geminitool"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// builtinTools maps the google-adk built-in tool names adkhost has to
// their canonical name. google-adk resolves a name without a dot in
// google.adk.tools, and a dotted one by import, so both spellings are
// accepted.
var builtinTools = map[string]string{
	"exit_loop":                                                  "exit_loop",
	"google.adk.tools.exit_loop":                                 "exit_loop",
	"google.adk.tools.exit_loop_tool.exit_loop":                  "exit_loop",
	"load_memory":                                                "load_memory",
	"google.adk.tools.load_memory":                               "load_memory",
	"google.adk.tools.load_memory_tool.load_memory_tool":         "load_memory",
	"preload_memory":                                             "preload_memory",
	"google.adk.tools.preload_memory":                            "preload_memory",
	"google.adk.tools.preload_memory_tool.preload_memory_tool":   "preload_memory",
	"load_artifacts":                                             "load_artifacts",
	"google.adk.tools.load_artifacts":                            "load_artifacts",
	"google.adk.tools.load_artifacts_tool.load_artifacts_tool":   "load_artifacts",
	"get_user_choice":                                            "get_user_choice",
	"google.adk.tools.get_user_choice":                           "get_user_choice",
	"google.adk.tools.get_user_choice_tool.get_user_choice_tool": "get_user_choice",
	"transfer_to_agent":                                          "transfer_to_agent",
	"google.adk.tools.transfer_to_agent":                         "transfer_to_agent",
	"google.adk.tools.transfer_to_agent_tool.transfer_to_agent":  "transfer_to_agent",
	// Gemini-side tools: they add the model's built-in tool to the request.
	"google_search":                                                      "google_search",
	"google.adk.tools.google_search":                                     "google_search",
	"google.adk.tools.google_search_tool.google_search":                  "google_search",
	"url_context":                                                        "url_context",
	"google.adk.tools.url_context":                                       "url_context",
	"google.adk.tools.url_context_tool.url_context":                      "url_context",
	"enterprise_web_search":                                              "enterprise_web_search",
	"google.adk.tools.enterprise_web_search":                             "enterprise_web_search",
	"google.adk.tools.enterprise_search_tool.enterprise_web_search_tool": "enterprise_web_search",
	"google_maps_grounding":                                              "google_maps_grounding",
	"google.adk.tools.google_maps_grounding":                             "google_maps_grounding",
	"google.adk.tools.google_maps_grounding_tool.google_maps_grounding":  "google_maps_grounding",
}

// builtins are the built-in tools by canonical name.
var builtins = map[string]tool.Tool{
	"exit_loop":             engine.ExitLoopTool{},
	"load_memory":           engine.LoadMemoryTool{},
	"preload_memory":        engine.PreloadMemoryTool{},
	"load_artifacts":        engine.LoadArtifactsTool{},
	"google_search":         geminitool.GoogleSearch(),
	"url_context":           geminitool.URLContext(),
	"enterprise_web_search": geminitool.EnterpriseWebSearch(),
	"google_maps_grounding": geminitool.GoogleMaps(),
}

// supportedTools is the message listing what a tools entry may be.
const supportedTools = "supported: the built-ins exit_loop, load_memory, preload_memory, load_artifacts, get_user_choice, transfer_to_agent, google_search, url_context, enterprise_web_search and google_maps_grounding ({name: google_search}), AgentTool ({name: AgentTool, args: {agent: {config_path: <file>}}}), VertexAiSearchTool ({name: VertexAiSearchTool, args: {data_store_id: <id>}}), ExampleTool ({name: ExampleTool, args: {examples: [{input: <content>, output: [<content>]}]}}), MCPToolset ({name: MCPToolset, args: {streamable_http_connection_params: {url: <url>}}}), and a Wasm module's tools ({module: <ref>} for all of them, {module: <ref>, tool: <name>} for one)"

// parseTools reads tools: google-adk's {name: ..., args: ...} entries for
// built-ins, and adkhost's {module: ..., tool: ...}.
func (l *loader) parseTools(v val) []toolRef {
	if v.isNull() {
		return nil
	}
	items, ok := v.list()
	if !ok {
		l.add(v.errf("want a list of tools, got %s", v.kind()))
		return nil
	}
	var out []toolRef
	for _, item := range items {
		entries, ok := item.mapping()
		if !ok {
			l.add(item.errf("want {name: <built-in>} or {module: <ref>, tool: <name>}, got %s; %s", item.kind(), supportedTools))
			continue
		}
		t := toolRef{at: item}
		var name, args *entry
		for i, e := range entries {
			switch e.key {
			case "name":
				name = &entries[i]
			case "args":
				args = &entries[i]
			case "module":
				if s, ok := l.str(e.val); ok {
					t.module = moduleUse{ref: s, at: e.val}
				}
			case "tool":
				if s, ok := l.str(e.val); ok {
					t.tool, t.toolAt = s, e.val
				}
			default:
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"name", "args", "module", "tool"})))
			}
		}
		switch {
		case name != nil && t.module.at.n != nil:
			l.add(item.errf("a tool is {name: <built-in>} or {module: <ref>, ...}, not both"))
		case name != nil:
			if l.parseBuiltinTool(&t, name, args) {
				out = append(out, t)
			}
		case t.module.ref != "":
			if args != nil {
				l.add(args.keyAt.errf("a module's tool takes no args; its grants and limits go under %s.modules", extensionKey))
				continue
			}
			out = append(out, t)
		case t.module.at.n == nil && t.toolAt.n != nil:
			l.add(item.errf("tool %q needs the module that provides it: {module: <ref>, tool: %s}", t.tool, t.tool))
		case t.module.at.n == nil:
			l.add(item.errf("want {name: <built-in>} or {module: <ref>, tool: <name>}; %s", supportedTools))
		}
	}
	return out
}

// agentToolNames are the spellings of google-adk's AgentTool in a config.
var agentToolNames = map[string]bool{
	"AgentTool": true, "google.adk.tools.AgentTool": true, "google.adk.tools.agent_tool.AgentTool": true,
}

// parseAgentTool reads {name: AgentTool, args: {agent: {config_path:
// <file>}, skip_summarization, include_plugins}} (google-adk's
// AgentToolConfig). The agent's file is an agent of its own, outside the
// tree of sub-agents.
func (l *loader) parseAgentTool(t *toolRef, args *entry) bool {
	if args == nil || args.val.isNull() {
		l.add(t.at.errf("AgentTool needs args: {agent: {config_path: <file>}}"))
		return false
	}
	entries, ok := args.val.mapping()
	if !ok {
		l.add(args.val.errf("want {agent: {config_path: <file>}, skip_summarization: <bool>}, got %s", args.val.kind()))
		return false
	}
	ref := &agentToolRef{}
	var agentAt *entry
	for i, e := range entries {
		switch e.key {
		case "agent":
			agentAt = &entries[i]
		case "skip_summarization":
			b, ok := e.val.boolean()
			if !ok {
				l.add(e.val.errf("want true or false, got %s", e.val.kind()))
			}
			ref.skipSummarization = b
		case "include_plugins":
			b, ok := e.val.boolean()
			if !ok {
				l.add(e.val.errf("want true or false, got %s", e.val.kind()))
			}
			ref.excludePlugins = !b
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"agent", "skip_summarization", "include_plugins"})))
		}
	}
	if agentAt == nil {
		l.add(args.val.errf("AgentTool needs agent: {config_path: <file>}"))
		return false
	}
	fields, ok := agentAt.val.mapping()
	var cp *entry
	for i, e := range fields {
		switch e.key {
		case "config_path":
			cp = &fields[i]
		case "code":
			l.add(e.val.errf("not supported: Python code references; define the agent in a YAML file of the definition and name it with config_path"))
			return false
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"config_path", "code"})))
		}
	}
	if !ok || cp == nil {
		l.add(agentAt.val.errf("want {config_path: <file>}"))
		return false
	}
	p, ok := l.str(cp.val)
	if !ok {
		return false
	}
	file, err := resolveConfigPath(cp.val.d.file, p)
	if err != "" {
		l.add(cp.val.errf("%s", err))
		return false
	}
	// An agent of its own: its file is read as a root, not a sub-agent.
	saved := l.stack
	l.stack = nil
	ref.agent = l.loadAgentFile(file, cp.val)
	l.stack = saved
	if ref.agent == nil {
		return false
	}
	t.agentTool = ref
	return true
}

// vertexSearchNames are the spellings of google-adk's VertexAiSearchTool.
var vertexSearchNames = map[string]bool{
	"VertexAiSearchTool": true, "google.adk.tools.VertexAiSearchTool": true,
	"google.adk.tools.vertex_ai_search_tool.VertexAiSearchTool": true,
}

// parseVertexSearch reads {name: VertexAiSearchTool, args: {data_store_id
// | search_engine_id, filter, max_results}}.
func (l *loader) parseVertexSearch(t *toolRef, args *entry) bool {
	var cfg geminitool.VertexAISearchConfig
	if args != nil && !args.val.isNull() {
		entries, ok := args.val.mapping()
		if !ok {
			l.add(args.val.errf("want {data_store_id: <id>} or {search_engine_id: <id>}, got %s", args.val.kind()))
			return false
		}
		for _, e := range entries {
			switch e.key {
			case "data_store_id":
				cfg.DataStoreID, _ = l.str(e.val)
			case "search_engine_id":
				cfg.SearchEngineID, _ = l.str(e.val)
			case "filter":
				cfg.Filter, _ = l.str(e.val)
			case "max_results":
				n, ok := e.val.integer()
				if !ok || n <= 0 {
					l.add(e.val.errf("want a positive integer"))
				}
				cfg.MaxResults = int(n)
			default:
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"data_store_id", "search_engine_id", "filter", "max_results"})))
			}
		}
	}
	vt, err := geminitool.VertexAISearch(cfg)
	if err != nil {
		at := t.at
		if args != nil {
			at = args.val
		}
		l.add(at.errf("VertexAiSearchTool: %v", err))
		return false
	}
	t.configured = vt
	return true
}

// exampleToolNames are the spellings of google-adk's ExampleTool.
var exampleToolNames = map[string]bool{
	"ExampleTool": true, "google.adk.tools.ExampleTool": true,
	"google.adk.tools.example_tool.ExampleTool": true,
}

// parseExampleTool reads {name: ExampleTool, args: {examples: [{input:
// <Content>, output: [<Content>, ...]}, ...]}} (google-adk's
// ExampleToolConfig); an example provider named by a Python reference
// cannot run here.
func (l *loader) parseExampleTool(t *toolRef, args *entry) bool {
	const want = "want {examples: [{input: <content>, output: [<content>, ...]}, ...]}"
	if args == nil || args.val.isNull() {
		l.add(t.at.errf("ExampleTool needs args: %s", want))
		return false
	}
	entries, ok := args.val.mapping()
	if !ok {
		l.add(args.val.errf("%s, got %s", want, args.val.kind()))
		return false
	}
	var examples *entry
	for i, e := range entries {
		if e.key != "examples" {
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"examples"})))
			return false
		}
		examples = &entries[i]
	}
	if examples == nil {
		l.add(args.val.errf("ExampleTool needs examples: %s", want))
		return false
	}
	if s, ok := examples.val.str(); ok {
		l.add(examples.val.errf("not supported: Python code references (%s); list the examples themselves", s))
		return false
	}
	items, ok := examples.val.list()
	if !ok {
		l.add(examples.val.errf("want a list of {input: <content>, output: [<content>, ...]}, got %s", examples.val.kind()))
		return false
	}
	et := &engine.ExampleTool{Examples: []engine.Example{}}
	good := true
	for _, item := range items {
		fields, ok := item.mapping()
		if !ok {
			l.add(item.errf("want {input: <content>, output: [<content>, ...]}, got %s", item.kind()))
			good = false
			continue
		}
		var ex engine.Example
		hasInput := false
		for _, f := range fields {
			switch f.key {
			case "input":
				hasInput = true
				ex.Input, _ = l.exampleContent(f.val)
				good = good && ex.Input != nil
			case "output":
				outs, ok := f.val.list()
				if !ok {
					l.add(f.val.errf("want a list of contents, got %s", f.val.kind()))
					good = false
					continue
				}
				for _, o := range outs {
					c, hints := l.exampleContent(o)
					good = good && c != nil
					ex.Output = append(ex.Output, c)
					ex.KeyOrder = append(ex.KeyOrder, hints)
				}
			default:
				l.add(f.keyAt.errf("unknown field %q%s", f.key, didYouMean(f.key, []string{"input", "output"})))
				good = false
			}
		}
		if !hasInput {
			l.add(item.errf("an example needs input: <content>"))
			good = false
		}
		et.Examples = append(et.Examples, ex)
	}
	if !good {
		return false
	}
	t.configured = et
	return true
}

// exampleContent decodes a genai Content of an example, keeping integers
// of function call arguments and responses apart from floats, and their
// key order by part (hints of internal/keyorder), since the examples print
// them as Python does (1, not 1.0; keys as written).
func (l *loader) exampleContent(v val) (*genai.Content, []json.RawMessage) {
	c := &genai.Content{}
	if !l.decodeTyped(v, c) {
		return nil, nil
	}
	hints := make([]json.RawMessage, len(c.Parts))
	fields, _ := v.mapping()
	for _, f := range fields {
		if f.key != "parts" {
			continue
		}
		parts, _ := f.val.list()
		for i, pv := range parts {
			if i >= len(c.Parts) || c.Parts[i] == nil {
				continue
			}
			pf, _ := pv.mapping()
			for _, e := range pf {
				inner, _ := e.val.mapping()
				for _, x := range inner {
					switch {
					case (e.key == "function_call" || e.key == "functionCall") && x.key == "args" && c.Parts[i].FunctionCall != nil:
						c.Parts[i].FunctionCall.Args, _ = exactPlain(x.val).(map[string]any)
						hints[i] = keyorder.Of(orderedJSON(nil, x.val))
					case (e.key == "function_response" || e.key == "functionResponse") && x.key == "response" && c.Parts[i].FunctionResponse != nil:
						c.Parts[i].FunctionResponse.Response, _ = exactPlain(x.val).(map[string]any)
						hints[i] = keyorder.Of(orderedJSON(nil, x.val))
					}
				}
			}
		}
	}
	return c, hints
}

// orderedJSON appends v as JSON with its mappings' keys in the order
// written, for a key-order hint.
func orderedJSON(b []byte, v val) []byte {
	if m, ok := v.mapping(); ok {
		b = append(b, '{')
		for i, e := range m {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(e.key)
			b = append(append(b, k...), ':')
			b = orderedJSON(b, e.val)
		}
		return append(b, '}')
	}
	if items, ok := v.list(); ok {
		b = append(b, '[')
		for i, it := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = orderedJSON(b, it)
		}
		return append(b, ']')
	}
	// Scalars only shape the hint; their values are not kept.
	return append(b, '0')
}

// exactPlain is v.plain() with integers as int64.
func exactPlain(v val) any {
	if m, ok := v.mapping(); ok {
		out := make(map[string]any, len(m))
		for _, e := range m {
			out[e.key] = exactPlain(e.val)
		}
		return out
	}
	if items, ok := v.list(); ok {
		out := make([]any, len(items))
		for i, e := range items {
			out[i] = exactPlain(e)
		}
		return out
	}
	if n, ok := v.integer(); ok {
		return n
	}
	return v.plain()
}

// parseBuiltinTool resolves a google-adk tool name.
func (l *loader) parseBuiltinTool(t *toolRef, name, args *entry) bool {
	s, ok := l.str(name.val)
	if !ok {
		return false
	}
	if agentToolNames[s] {
		return l.parseAgentTool(t, args)
	}
	if vertexSearchNames[s] {
		return l.parseVertexSearch(t, args)
	}
	if mcpToolsetNames[s] {
		return l.parseMCPToolset(t, args)
	}
	if exampleToolNames[s] {
		return l.parseExampleTool(t, args)
	}
	canon, known := builtinTools[s]
	switch {
	case known && args != nil && !args.val.isNull():
		l.add(args.keyAt.errf("%s takes no args", canon))
		return false
	case known:
		t.builtin = canon
		return true
	case strings.Contains(s, "."):
		l.add(name.val.errf("not supported: Python code references (%s); %s", s, supportedTools))
	default:
		l.add(name.val.errf("unknown built-in tool %q%s; %s", s, didYouMean(s, slices.Sorted(maps.Keys(builtins))), supportedTools))
	}
	return false
}

// parseCallbacks reads a callback list served by hook: adkhost's
// {module: ..., hook: ...} entries. google-adk's {name: <python ref>}
// cannot run here.
func (l *loader) parseCallbacks(v val, hook abi.Hook) []callbackRef {
	if v.isNull() {
		return nil
	}
	items, ok := v.list()
	if !ok {
		l.add(v.errf("want a list of {module: <ref>, hook: %s}, got %s", hook, v.kind()))
		return nil
	}
	var out []callbackRef
	for _, item := range items {
		if s, ok := item.str(); ok {
			l.add(item.errf("not supported: Python code references (%s); a callback is a Wasm module's hook: {module: <ref>, hook: %s}", s, hook))
			continue
		}
		entries, ok := item.mapping()
		if !ok {
			l.add(item.errf("want {module: <ref>, hook: %s}, got %s", hook, item.kind()))
			continue
		}
		c := callbackRef{at: item, hook: hook}
		valid := true
		for _, e := range entries {
			switch e.key {
			case "module":
				if s, ok := l.str(e.val); ok {
					c.module = moduleUse{ref: s, at: e.val}
				} else {
					valid = false
				}
			case "hook":
				s, ok := l.str(e.val)
				switch {
				case !ok:
					valid = false
				case s != string(hook) && slices.Contains(hookNames(), s):
					l.add(e.val.errf("hook %q cannot serve this list; it is served by hook %s", s, hook))
					valid = false
				case s != string(hook):
					l.add(e.val.errf("unknown hook %q; this list is served by hook %s%s", s, hook, didYouMean(s, hookNames())))
					valid = false
				}
				c.hookAt = e.val
			case "name":
				ref, _ := e.val.str()
				l.add(e.val.errf("not supported: Python code references (%s); a callback is a Wasm module's hook: {module: <ref>, hook: %s}", ref, hook))
				valid = false
			default:
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"module", "hook"})))
				valid = false
			}
		}
		if c.module.ref == "" && valid {
			l.add(item.errf("missing module: want {module: <ref>, hook: %s}", hook))
			continue
		}
		if valid {
			out = append(out, c)
		}
	}
	return out
}

func hookNames() []string {
	var out []string
	for _, h := range abi.Hooks() {
		out = append(out, string(h))
	}
	return out
}

// pluginHooks are the hooks a runner plugin can serve: all but tool_call.
func pluginHooks() []abi.Hook {
	return slices.DeleteFunc(abi.Hooks(), func(h abi.Hook) bool { return h == abi.HookToolCall })
}
