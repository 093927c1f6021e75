// Package abi is the contract between adkhost and the WebAssembly modules that
// implement tools, callbacks and plugin hooks: export and import names, status
// codes, the versioned JSON messages and their codec. ABI.md is the spec.
//
// The package imports only the standard library, so a Go guest can use the
// same types the host does.
package abi

import "strings"

// Version is the ABI version this package describes. A module declares the
// versions it speaks by exporting VersionExportPrefix + N for each N.
const Version = 1

// Export names. Every export of a module that the host looks at starts with
// "adkhost_".
const (
	// ExportPrefix starts every export name the host looks at.
	ExportPrefix = "adkhost_"
	// VersionExportPrefix starts the version marker: a v1 module exports a
	// function named "adkhost_abi_version_1" (VersionExport). The host never
	// calls it; its presence is the declaration, as with proxy-wasm's
	// proxy_abi_version_0_2_0.
	VersionExportPrefix = "adkhost_abi_version_"
	// VersionExport is the marker of ABI v1.
	VersionExport = "adkhost_abi_version_1"
	// ExportAlloc is the native transport's allocator: (size i32) -> (ptr i32).
	ExportAlloc = "adkhost_alloc"
	// ExportFree releases what ExportAlloc returned: (ptr i32, size i32) -> ().
	ExportFree = "adkhost_free"
	// ExportDescribe answers a DescribeInput with a Describe message.
	ExportDescribe = "adkhost_describe"
	// ExportMemory is the memory every native module exports.
	ExportMemory = "memory"
)

// Import module names.
const (
	// ImportModule is the module name of the native transport's host
	// functions (the Import* names).
	ImportModule = "adkhost"
	// WASIModule is the WASI preview 1 module, provided with nothing granted
	// unless the embedder grants it.
	WASIModule = "wasi_snapshot_preview1"
	// ExtismEnvModule is imported by every Extism PDK module; its presence
	// selects the Extism transport.
	ExtismEnvModule = "extism:host/env"
	// ExtismUserModule is the namespace of ImportExtismHost.
	ExtismUserModule = "extism:host/user"
	// ImportExtismHost is the one host function of the Extism transport:
	// (request i64) -> (reply i64), Extism memory offsets of a HostCall and
	// a HostReply.
	ImportExtismHost = "adkhost_host"
)

// Host function names of the native transport, in ImportModule. The same
// names are the Op values of a HostCall on the Extism transport. ABI.md gives
// each signature.
const (
	ImportStateGet            = "state_get"
	ImportStateSet            = "state_set"
	ImportStateDelete         = "state_delete"
	ImportTransferToAgent     = "transfer_to_agent"
	ImportEscalate            = "escalate"
	ImportSkipSummarization   = "skip_summarization"
	ImportRequestConfirmation = "request_confirmation"
	ImportArtifactLoad        = "artifact_load"
	ImportArtifactSave        = "artifact_save"
	ImportArtifactList        = "artifact_list"
	ImportLog                 = "log"
	ImportInvocationInfo      = "invocation_info"
	ImportConfigGet           = "config_get"
	ImportHTTPRequest         = "http_request"
	// Added within v1 (ABI.md §12): google-adk's search_memory and
	// add_session_to_memory.
	ImportMemorySearch     = "memory_search"
	ImportMemoryAddSession = "memory_add_session"
)

// Hook names a callable export: a tool call or a callback. The export is
// ExportPrefix + the name; Describe.Hooks lists the names a module implements.
type Hook string

// The hooks of ABI v1. The google-adk callback each mirrors is named beside it.
const (
	HookToolCall      Hook = "tool_call"       // BaseTool.run_async
	HookBeforeAgent   Hook = "before_agent"    // before_agent_callback
	HookAfterAgent    Hook = "after_agent"     // after_agent_callback
	HookBeforeModel   Hook = "before_model"    // before_model_callback
	HookAfterModel    Hook = "after_model"     // after_model_callback
	HookOnModelError  Hook = "on_model_error"  // on_model_error_callback
	HookBeforeTool    Hook = "before_tool"     // before_tool_callback
	HookAfterTool     Hook = "after_tool"      // after_tool_callback
	HookOnToolError   Hook = "on_tool_error"   // on_tool_error_callback
	HookOnUserMessage Hook = "on_user_message" // BasePlugin.on_user_message_callback
	HookBeforeRun     Hook = "before_run"      // BasePlugin.before_run_callback
	HookOnEvent       Hook = "on_event"        // BasePlugin.on_event_callback
	HookAfterRun      Hook = "after_run"       // BasePlugin.after_run_callback
	HookOnAgentError  Hook = "on_agent_error"  // BasePlugin.on_agent_error_callback (notification only)
	HookOnRunError    Hook = "on_run_error"    // BasePlugin.on_run_error_callback (notification only)
)

// hooks lists every v1 hook in the order of ABI.md.
var hooks = [...]Hook{
	HookToolCall, HookBeforeAgent, HookAfterAgent, HookBeforeModel, HookAfterModel,
	HookOnModelError, HookBeforeTool, HookAfterTool, HookOnToolError,
	HookOnUserMessage, HookBeforeRun, HookOnEvent, HookAfterRun,
	HookOnAgentError, HookOnRunError,
}

// Hooks returns every v1 hook, in the order of ABI.md.
func Hooks() []Hook { return append([]Hook(nil), hooks[:]...) }

// Export returns the name of the function a module exports for h.
func (h Hook) Export() string {
	if e, ok := hookExports[h]; ok {
		return e // the host asks on every call: no concatenation
	}
	return ExportPrefix + string(h)
}

// hookExports is Export of every v1 hook, made once.
var hookExports = func() map[Hook]string {
	m := make(map[Hook]string, len(hooks))
	for _, h := range hooks {
		m[h] = ExportPrefix + string(h)
	}
	return m
}()

// Known reports whether h is a v1 hook.
func (h Hook) Known() bool { return h.NewInput() != nil }

// HookForExport returns the hook whose export is name.
func HookForExport(name string) (Hook, bool) {
	h := Hook(strings.TrimPrefix(name, ExportPrefix))
	if len(h) == len(name) || !h.Known() {
		return "", false
	}
	return h, true
}

// NewInput returns a new zero input message of h, or nil for an unknown hook.
func (h Hook) NewInput() Message {
	switch h {
	case HookToolCall:
		return new(ToolCallInput)
	case HookBeforeAgent, HookAfterAgent:
		return new(AgentInput)
	case HookBeforeModel:
		return new(BeforeModelInput)
	case HookAfterModel:
		return new(AfterModelInput)
	case HookOnModelError:
		return new(ModelErrorInput)
	case HookBeforeTool:
		return new(BeforeToolInput)
	case HookAfterTool:
		return new(AfterToolInput)
	case HookOnToolError:
		return new(ToolErrorInput)
	case HookOnUserMessage:
		return new(UserMessageInput)
	case HookBeforeRun, HookAfterRun:
		return new(RunInput)
	case HookOnEvent:
		return new(EventInput)
	case HookOnAgentError:
		return new(AgentErrorInput)
	case HookOnRunError:
		return new(RunErrorInput)
	}
	return nil
}

// NewOutput returns a new zero output message of h, or nil for an unknown
// hook.
func (h Hook) NewOutput() Message {
	switch h {
	case HookToolCall:
		return new(ToolCallOutput)
	case HookBeforeAgent, HookAfterAgent, HookBeforeRun:
		return new(ContentOutput)
	case HookBeforeModel, HookAfterModel, HookOnModelError:
		return new(ModelOutput)
	case HookBeforeTool:
		return new(BeforeToolOutput)
	case HookAfterTool, HookOnToolError:
		return new(ToolOutput)
	case HookOnUserMessage:
		return new(UserMessageOutput)
	case HookOnEvent:
		return new(EventOutput)
	case HookAfterRun:
		return new(AfterRunOutput)
	case HookOnAgentError, HookOnRunError:
		return new(NotifyOutput)
	}
	return nil
}

// Capability names a group of host functions or system resources a module
// asks for in Describe.Capabilities. A module gets only what it asked for
// and the embedder granted; host functions outside it answer StatusDenied.
type Capability string

// The capabilities of ABI v1. Log and invocation_info need none.
const (
	CapState     Capability = "state"     // state_get, state_set, state_delete
	CapActions   Capability = "actions"   // transfer_to_agent, escalate, skip_summarization, request_confirmation
	CapArtifacts Capability = "artifacts" // artifact_load, artifact_save, artifact_list
	CapConfig    Capability = "config"    // config_get
	CapHTTP      Capability = "http"      // http_request
	CapFS        Capability = "fs"        // WASI read-only directories
	CapEnv       Capability = "env"       // WASI environment variables
	CapClock     Capability = "clock"     // WASI real wall and monotonic clocks, sleep
	CapRandom    Capability = "random"    // WASI random_get from a cryptographic source
	CapMemory    Capability = "memory"    // memory_search, memory_add_session (added within v1)
)

// Known reports whether c is a v1 capability.
func (c Capability) Known() bool {
	switch c {
	case CapState, CapActions, CapArtifacts, CapConfig, CapHTTP, CapFS, CapEnv, CapClock, CapRandom, CapMemory:
		return true
	}
	return false
}

// ImportCapability returns the capability a host function needs ("" for
// log and invocation_info) and whether name is a v1 host function.
func ImportCapability(name string) (Capability, bool) {
	switch name {
	case ImportStateGet, ImportStateSet, ImportStateDelete:
		return CapState, true
	case ImportTransferToAgent, ImportEscalate, ImportSkipSummarization, ImportRequestConfirmation:
		return CapActions, true
	case ImportArtifactLoad, ImportArtifactSave, ImportArtifactList:
		return CapArtifacts, true
	case ImportConfigGet:
		return CapConfig, true
	case ImportHTTPRequest:
		return CapHTTP, true
	case ImportMemorySearch, ImportMemoryAddSession:
		return CapMemory, true
	case ImportLog, ImportInvocationInfo:
		return "", true
	}
	return "", false
}
