package appdef

import (
	"encoding/json"
	"github.com/adkhost/adkhost/engine/tool"
	"slices"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine"
)

// Agent classes, by google-adk's short names.
const (
	classLlm        = "LlmAgent"
	classSequential = "SequentialAgent"
	classParallel   = "ParallelAgent"
	classLoop       = "LoopAgent"
)

// agentClasses maps every agent_class spelling google-adk accepts for the
// four supported classes to its short name.
var agentClasses = func() map[string]string {
	m := map[string]string{"": classLlm, "Agent": classLlm, "google.adk.agents.Agent": classLlm, "google.adk.agents.llm_agent.Agent": classLlm}
	for _, c := range []struct{ name, module string }{
		{classLlm, "llm_agent"}, {classSequential, "sequential_agent"}, {classParallel, "parallel_agent"}, {classLoop, "loop_agent"},
	} {
		m[c.name] = c.name
		m["google.adk.agents."+c.name] = c.name
		m["google.adk.agents."+c.module+"."+c.name] = c.name
	}
	return m
}()

// Fields of each class, as google-adk's config schemas name them, plus the
// adkhost extensions (the on_*_error callback lists; adkhost in the root).
var (
	baseFields = []string{"agent_class", "name", "description", "sub_agents", "before_agent_callbacks", "after_agent_callbacks"}
	llmFields  = append(slices.Clone(baseFields), "model", "model_code", "instruction", "static_instruction",
		"disallow_transfer_to_parent", "disallow_transfer_to_peers", "input_schema", "output_schema", "output_key",
		"include_contents", "tools", "before_model_callbacks", "after_model_callbacks", "before_tool_callbacks",
		"after_tool_callbacks", "on_model_error_callbacks", "on_tool_error_callbacks", "generate_content_config",
		"code_executor")
	loopFields = append(slices.Clone(baseFields), "max_iterations")
)

func fieldsOf(class string) []string {
	switch class {
	case classLlm:
		return llmFields
	case classLoop:
		return loopFields
	default:
		return baseFields
	}
}

// callbackHooks maps each callback list field to the hook that serves it.
var callbackHooks = map[string]abi.Hook{
	"before_agent_callbacks":   abi.HookBeforeAgent,
	"after_agent_callbacks":    abi.HookAfterAgent,
	"before_model_callbacks":   abi.HookBeforeModel,
	"after_model_callbacks":    abi.HookAfterModel,
	"on_model_error_callbacks": abi.HookOnModelError,
	"before_tool_callbacks":    abi.HookBeforeTool,
	"after_tool_callbacks":     abi.HookAfterTool,
	"on_tool_error_callbacks":  abi.HookOnToolError,
}

// agentSpec is one agent of the tree, validated but not built.
type agentSpec struct {
	at          val // the agent's mapping
	class       string
	name        string
	description string
	subAgents   []*agentSpec
	callbacks   []callbackRef

	// LlmAgent.
	model             string
	modelAt           val
	instruction       string
	staticInstruction *genai.Content
	tools             []toolRef
	outputKey         string
	outputSchema      map[string]any
	// outputSchemaKeyOrder: the order of outputSchema's keys as written.
	outputSchemaKeyOrder json.RawMessage
	includeContents      engine.IncludeContents
	contentConfig        *genai.GenerateContentConfig
	disallowParent       bool
	disallowPeers        bool
	// codeExecutor is google-adk's BuiltInCodeExecutor.
	codeExecutor bool

	// LoopAgent: nil means no bound.
	maxIterations *int
}

// toolRef is an entry of tools: a built-in (builtin set) or a module's
// tools (module set; tool "" means all of them).
type toolRef struct {
	at      val
	builtin string
	// agentTool is google-adk's AgentTool: an agent (from its own config
	// file) called as a tool.
	agentTool *agentToolRef
	// configured is a built-in made from its args (VertexAiSearchTool).
	configured tool.Tool
	// mcp is google-adk's MCPToolset: an MCP server's tools.
	mcp    *mcpRef
	module moduleUse
	tool   string
	toolAt val
}

// agentToolRef is an AgentTool entry: {name: AgentTool, args: {agent:
// {config_path: ...}, skip_summarization, include_plugins}}.
type agentToolRef struct {
	agent             *agentSpec
	skipSummarization bool
	excludePlugins    bool
}

// callbackRef is an entry of a callback list: a module's hook.
type callbackRef struct {
	at     val
	hook   abi.Hook
	module moduleUse
	hookAt val
}

// moduleUse is a module reference and where it is written.
type moduleUse struct {
	ref string
	at  val
}

// validAgentName mirrors google-adk's check: a Python identifier other
// than "user".
func validAgentName(s string) bool {
	if s == "" || s == "user" {
		return false
	}
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r)) {
			continue
		}
		return false
	}
	return true
}

// quoteList formats names for messages: a, b, c.
func quoteList(names []string) string { return strings.Join(names, ", ") }
