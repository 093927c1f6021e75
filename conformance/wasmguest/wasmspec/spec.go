// Package wasmspec is the configuration of the conformance harness's generic Wasm guest (build:
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared). It performs the
// scenario behaviour vocabulary (FORMAT.md §1.4, §1.5) for whatever agent or
// plugin its grants' config describes: the runner (conformance/wasm.go)
// loads it once per agent and once per plugin, with config key "spec" set
// to the JSON of a Spec, so one .wasm serves every scenario.
//
// A module's describe runs before any grant exists (sandbox.Runtime.Load),
// so it cannot depend on the config: the guest declares one dispatcher tool
// (DispatchTool) and implements every hook; the runner declares the
// scenario's tools host-side and calls the dispatcher with
// {"tool": <name>, "args": <args>}.
package wasmspec

import "encoding/json"

// DispatchTool is the one tool the guest declares.
const DispatchTool = "scenario_tool"

// ConfigKey is the config key holding the Spec.
const ConfigKey = "spec"

// LogPrefix starts every callback_log entry the guest sends through the log
// host function; the rest of the line is the entry's JSON.
const LogPrefix = "callback_log:"

// ErrPrefix starts the message of a Python exception the guest raises; the
// rest is the JSON of a PyError.
const ErrPrefix = "pyerror:"

// Spec is what one module instance performs.
type Spec struct {
	Tools map[string]*ToolSpec `json:"tools,omitempty"`
	Hooks map[string][]*Item   `json:"hooks,omitempty"`
}

// PyError is a Python exception: class name and message.
type PyError struct {
	Type string `json:"type"`
	Msg  string `json:"msg"`
}

// KV is one ordered mapping entry.
type KV struct {
	Key   string          `json:"k"`
	Value json.RawMessage `json:"v"`
}

// Param is one keyword-only parameter of a tool function.
type Param struct {
	Name       string          `json:"name"`
	HasDefault bool            `json:"has_default,omitempty"`
	Default    json.RawMessage `json:"default,omitempty"`
	Optional   bool            `json:"optional,omitempty"`
}

// ToolSpec is a function tool's behaviour (§1.4).
type ToolSpec struct {
	Params            []Param         `json:"params,omitempty"`
	SetState          []KV            `json:"set_state,omitempty"`
	TransferToAgent   *string         `json:"transfer_to_agent,omitempty"`
	Escalate          bool            `json:"escalate,omitempty"`
	SkipSummarization bool            `json:"skip_summarization,omitempty"`
	Raise             *PyError        `json:"raise,omitempty"`
	ReturnArgs        bool            `json:"return_args,omitempty"`
	HasReturn         bool            `json:"has_return,omitempty"`
	Return            json.RawMessage `json:"return,omitempty"`
	// RequestConfirmation makes the tool ask for confirmation first.
	RequestConfirmation *Confirmation `json:"request_confirmation,omitempty"`
	// Artifacts run after SetState; ReturnArtifacts returns their results
	// as {"artifacts": [...]}.
	Artifacts       []ArtifactOp `json:"artifacts,omitempty"`
	ReturnArtifacts bool         `json:"return_artifacts,omitempty"`
}

// ArtifactOp is one artifact operation: exactly one of Save, Load, List.
// A save stores Data (base64 in JSON) as an inline part of MIMEType; a
// load of Version (nil for the newest) gives the part's JSON in
// google-adk's dump (null when missing); a list gives the names.
type ArtifactOp struct {
	Save     *string `json:"save,omitempty"`
	MIMEType string  `json:"mime_type,omitempty"`
	Data     []byte  `json:"data,omitempty"`
	Load     *string `json:"load,omitempty"`
	Version  *int64  `json:"version,omitempty"`
	List     bool    `json:"list,omitempty"`
}

// Confirmation is a tool's request_confirmation behaviour.
type Confirmation struct {
	Hint    string          `json:"hint,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// When holds an item's conditions.
type When struct {
	Agent         *string `json:"agent,omitempty"`
	Tool          *string `json:"tool,omitempty"`
	Author        *string `json:"author,omitempty"`
	ErrorContains *string `json:"error_contains,omitempty"`
	Nth           *int64  `json:"nth,omitempty"`
}

// Item is one behaviour item (§1.5). Return values are given in their ABI
// form: ReturnContent an abi.Content, ReturnResponse an abi.LlmResponse
// (built host-side from the scenario with the host's converters),
// ReturnValue the tool-hook value as is.
type Item struct {
	Hook              string          `json:"hook"`
	Owner             string          `json:"owner"`
	Index             int             `json:"index"`
	When              When            `json:"when"`
	SetState          []KV            `json:"set_state,omitempty"`
	Artifacts         []ArtifactOp    `json:"artifacts,omitempty"`
	Escalate          bool            `json:"escalate,omitempty"`
	TransferToAgent   *string         `json:"transfer_to_agent,omitempty"`
	SetArgs           []KV            `json:"set_args,omitempty"`
	AppendInstruction *string         `json:"append_instruction,omitempty"`
	Raise             *PyError        `json:"raise,omitempty"`
	HasReturn         bool            `json:"has_return,omitempty"`
	ReturnContent     json.RawMessage `json:"return_content,omitempty"`
	ReturnResponse    json.RawMessage `json:"return_response,omitempty"`
	ReturnValue       json.RawMessage `json:"return_value,omitempty"`
	// ReturnEvent is on_event's replacement: the fields set on the event
	// (content, an abi.Content; custom_metadata), the others kept.
	ReturnEvent *EventUpdate `json:"return_event,omitempty"`
}

// EventUpdate is what an on_event item's replacement sets.
type EventUpdate struct {
	Content        json.RawMessage `json:"content,omitempty"`
	CustomMetadata json.RawMessage `json:"custom_metadata,omitempty"`
}
