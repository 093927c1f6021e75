package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"google.golang.org/genai"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Scenario is a decoded scenario file (FORMAT.md §1). Decoding is strict:
// unknown keys and wrong types are errors naming the file and line.
type Scenario struct {
	File           string
	Name           string
	Agent          *AgentSpec
	ModelResponses []*ResponseSpec
	Turns          []*TurnSpec
	Plugins        []*PluginSpec
	Sessions       []SessionSpec
	RunConfig      RunConfigSpec
	// OutputSchemaAndTools is model_capabilities.output_schema_and_tools.
	OutputSchemaAndTools bool
	Resumable            bool
	// Compaction is the top-level compaction mapping (App
	// events_compaction_config); nil when absent.
	Compaction *CompactionSpec
	// Artifacts are saved before the first turn; non-nil (even empty) when
	// the scenario has `artifacts`, which gives the runner an artifact
	// service.
	Artifacts []ArtifactSpec
}

// ArtifactSpec is one artifact saved before the first turn.
type ArtifactSpec struct {
	Name, MIMEType, Session string
	Data                    []byte
}

// CompactionSpec is EventsCompactionConfig's triggers; nil fields are
// absent. The summarizer is always the default one (the root agent's
// scripted model).
type CompactionSpec struct {
	CompactionInterval, OverlapSize, TokenThreshold, EventRetentionSize *int64
}

// SessionSpec is one session to create before the first turn.
type SessionSpec struct {
	ID, UserID   string
	InitialState map[string]any
	// StateKeyOrder is the key order of each initial state value.
	StateKeyOrder map[string]json.RawMessage
}

// RunConfigSpec is a run_config mapping; nil fields are absent.
type RunConfigSpec struct {
	MaxLLMCalls   *int64
	StreamingMode string // "" (absent), "none" or "sse"
	// CustomMetadata is RunConfig.custom_metadata.
	CustomMetadata map[string]any
	// SaveInputBlobs is RunConfig.save_input_blobs_as_artifacts.
	SaveInputBlobs *bool
}

func (r RunConfigSpec) merge(o RunConfigSpec) RunConfigSpec {
	if o.MaxLLMCalls != nil {
		r.MaxLLMCalls = o.MaxLLMCalls
	}
	if o.StreamingMode != "" {
		r.StreamingMode = o.StreamingMode
	}
	if o.CustomMetadata != nil {
		r.CustomMetadata = o.CustomMetadata
	}
	if o.SaveInputBlobs != nil {
		r.SaveInputBlobs = o.SaveInputBlobs
	}
	return r
}

// ArtifactOp is one artifact operation of a tool or behaviour item
// (artifacts): exactly one of Save, Load, List.
type ArtifactOp struct {
	Save, Load *string
	List       bool
	MIMEType   string
	Data       []byte
	// Version is the version to load; nil for the newest.
	Version *int64
}

// AgentSpec is one agent of the tree (§1.3).
type AgentSpec struct {
	Type        string // LlmAgent, SequentialAgent, ParallelAgent, LoopAgent
	Name        string
	Description string
	SubAgents   []*AgentSpec
	Callbacks   map[string][]*Behaviour

	MaxIterations *int64 // LoopAgent; nil: no bound

	Model             string
	Instruction       *string
	StaticInstruction *ContentSpec
	GlobalInstruction *string
	// InstructionProvider and GlobalInstructionProvider are the texts
	// instruction providers return (used as is, not templated).
	InstructionProvider, GlobalInstructionProvider *string
	IncludeContents                                string
	OutputKey                                      string
	OutputSchema                                   *ModelSchema
	DisallowTransferToParent                       bool
	DisallowTransferToPeers                        bool
	Planner                                        *PlannerSpec
	// CodeExecutor is "built_in" (BuiltInCodeExecutor) or "".
	CodeExecutor             string
	GenerateContentConfig    map[string]any
	GenerateContentConfigPos *node
	Mode                     string
	Tools                    []*ToolSpec
}

// PlannerSpec is `plan_react` or `{built_in: {...}}`.
type PlannerSpec struct {
	PlanReAct      bool
	ThinkingConfig map[string]any
	pos            *node
}

// ToolSpec is a built-in tool or a function tool described by behaviour
// (§1.4).
type ToolSpec struct {
	Builtin string
	// AgentTool, when set, makes the tool google-adk's AgentTool.
	AgentTool *AgentToolSpec
	// ExampleTool, when set, makes the tool google-adk's ExampleTool with
	// these examples.
	ExampleTool       []ExampleSpec
	Name              string
	Description       *string
	Params            []ParamSpec
	LongRunning       bool
	SetState          []kv
	TransferToAgent   *string
	Escalate          bool
	SkipSummarization bool
	Raise             *PyError
	ReturnArgs        bool
	HasReturn         bool
	Return            any
	// ReturnOrder is the key order of Return in the scenario.
	ReturnOrder json.RawMessage
	// RequestConfirmation, when set, makes the tool ask the user to confirm
	// the call before its other effects run.
	RequestConfirmation *ConfirmationSpec
	// RequireConfirmation is FunctionTool(require_confirmation=True).
	RequireConfirmation bool
	// Artifacts run after set_state; ReturnArtifacts returns their
	// results as {"artifacts": [...]}.
	Artifacts       []ArtifactOp
	ReturnArtifacts bool
}

// AgentToolSpec is an agent called as a tool (§1.4 agent_tool).
type AgentToolSpec struct {
	Agent             *AgentSpec
	SkipSummarization bool
}

// ExampleSpec is one few-shot example of an example_tool (§1.4).
type ExampleSpec struct {
	Input  *ContentSpec
	Output []*ContentSpec
}

// ConfirmationSpec is a tool's request_confirmation behaviour (§1.4).
type ConfirmationSpec struct {
	Hint    *string
	Payload any
}

type kv struct {
	Key   string
	Value any
	// Order is the key order of Value in the scenario (internal/keyorder).
	Order json.RawMessage
}

// ParamSpec is one keyword-only parameter of a function tool.
type ParamSpec struct {
	Name       string
	Type       string
	Items      string
	HasDefault bool
	Default    any
	Optional   bool
}

// ModelSchema describes a pydantic model built with create_model (§1.3
// output_schema).
type ModelSchema struct {
	Title       string
	Description string
	Props       []*PropSchema
	Required    map[string]bool
}

// PropSchema is one property of a ModelSchema.
type PropSchema struct {
	Name        string
	Type        string
	Description *string
	Items       *PropSchema  // array
	Object      *ModelSchema // object with properties
}

// PartSpec is one part (§1.6 `parts`).
type PartSpec struct {
	Text     *string
	Thought  bool
	Call     *CallSpec
	Response *FuncResponseSpec
	// Code, Result and Inline are executable_code {code, language},
	// code_execution_result {outcome, output} and inline_data {mime_type,
	// data (base64), display_name}.
	Code   *genai.ExecutableCode
	Result *genai.CodeExecutionResult
	Inline *genai.Blob
}

// CallSpec is a function call {name, args, id}.
type CallSpec struct {
	Name string
	Args map[string]any // nil when the scenario says args: null
	// ArgsOrder is the key order of Args in the scenario (internal/keyorder).
	ArgsOrder json.RawMessage
	ID        string
}

// FuncResponseSpec is a function response {name, response, id}.
type FuncResponseSpec struct {
	Name     string
	Response map[string]any
	// ResponseOrder is the key order of Response in the scenario.
	ResponseOrder json.RawMessage
	ID            string
	Call          string // turns only: answer the latest call of this name
}

// ContentSpec is a string, or {role, text, parts}.
type ContentSpec struct {
	Role  string
	Parts []PartSpec
}

// ResponseSpec is one scripted model response (§1.6).
type ResponseSpec struct {
	Agent          string
	Err            *PyError
	Parts          []PartSpec
	Role           string
	NoContent      bool
	FinishReason   string
	ErrorCode      *string
	ErrorMessage   *string
	TurnComplete   *bool
	CustomMetadata map[string]any
	Partials       []string
	// UsageMetadata holds usage_metadata's token counts by field name.
	UsageMetadata map[string]int64
}

// TurnSpec is one user turn (§1.7).
type TurnSpec struct {
	Text          *string
	FuncResponses []FuncResponseSpec
	Parts         []PartSpec
	StateDelta    map[string]any
	Session       string
	RunConfig     RunConfigSpec
	// ResumeTurn, when set, resumes the invocation of that earlier turn
	// (run_async's invocation_id); the turn's message may then be empty.
	ResumeTurn *int
	// RewindBeforeTurn, when set, makes the turn a rewind (Runner.Rewind)
	// to before that earlier turn's invocation, with no message.
	RewindBeforeTurn *int
	// AbortAfterEvents, when positive, aborts the run once that many
	// events were received (run_async's abort_signal; a cancelled context
	// on adkhost), reading on.
	AbortAfterEvents int
	// AddSessionToMemory, when set, makes the turn add that session, as
	// stored now, to the memory service, with no message.
	AddSessionToMemory string
}

// PluginSpec is an app plugin.
type PluginSpec struct {
	Name  string
	Hooks map[string][]*Behaviour
}

// Behaviour is one callback behaviour item (§1.5).
type Behaviour struct {
	Hook  string
	Owner string
	Index int

	When struct {
		Agent, Tool, Author, ErrorContains *string
		Nth                                *int64
	}
	SetState          []kv
	Artifacts         []ArtifactOp
	Escalate          bool
	TransferToAgent   *string
	SetArgs           []kv
	AppendInstruction *string
	Raise             *PyError
	HasReturn         bool
	ReturnContent     *ContentSpec
	ReturnResponse    *ResponseSpec
	ReturnValue       any
	// ReturnEvent is on_event's replacement: the fields it sets.
	ReturnEvent *EventUpdateSpec
}

// Hook classes (what `return` means).
var (
	contentHooks  = []string{"before_agent", "after_agent", "before_run", "on_user_message"}
	responseHooks = []string{"before_model", "after_model", "on_model_error"}
	noneHooks     = []string{"after_run", "on_agent_error", "on_run_error"}
	// noContextHooks have no callback or tool context: no state,
	// artifacts or actions.
	noContextHooks = []string{"on_user_message", "before_run", "after_run", "on_event", "on_run_error"}
	agentHooks     = []string{"before_agent", "after_agent", "before_model", "after_model", "on_model_error", "before_tool", "after_tool", "on_tool_error"}
	pluginHooks    = []string{"on_user_message", "before_run", "after_run", "on_event", "before_agent", "after_agent", "before_model", "after_model", "on_model_error", "before_tool", "after_tool", "on_tool_error", "on_agent_error", "on_run_error"}
)

// errorTypes are the exception classes a scenario may raise.
var errorTypes = []string{"ValueError", "RuntimeError", "KeyError", "TypeError", "Exception"}

// LoadScenario reads and decodes a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	root, err := parseYAMLFile(path)
	if err != nil {
		return nil, err
	}
	return decodeScenario(path, root)
}

// ScenarioFiles lists the scenario files of dir, sorted by name.
func ScenarioFiles(dir string) ([]string, error) {
	var out []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	sort.Slice(out, func(i, j int) bool { return filepath.Base(out[i]) < filepath.Base(out[j]) })
	return out, nil
}

// ---------------------------------------------------------------------------
// Decoding helpers.

func checkKeys(n *node, where string, allowed ...string) {
	if n.kind != kindMap {
		failf(n, "%s: expected a mapping, got %s", where, n.kind)
	}
	for i, k := range n.keys {
		if !slices.Contains(allowed, k) {
			a := slices.Clone(allowed)
			sort.Strings(a)
			failf(n.vals[i], "%s: unknown key %q (allowed: %s)", where, k, strings.Join(a, ", "))
		}
	}
}

func asString(n *node, where string) string {
	if n.kind != kindString {
		failf(n, "%s: expected a string, got %s", where, n.kind)
	}
	return n.s
}

func optString(n *node, key, where string) *string {
	if v := n.get(key); v != nil {
		s := asString(v, where+"."+key)
		return &s
	}
	return nil
}

func strOr(n *node, key, where, def string) string {
	if s := optString(n, key, where); s != nil {
		return *s
	}
	return def
}

func asInt(n *node, where string) int64 {
	if n.kind != kindInt {
		failf(n, "%s: expected an integer, got %s", where, n.kind)
	}
	return n.i
}

// truthy is Python truthiness of a scalar flag (`spec.get(k)`).
func truthy(n *node) bool {
	if n == nil {
		return false
	}
	switch n.kind {
	case kindNull:
		return false
	case kindBool:
		return n.b
	case kindInt:
		return n.i != 0
	case kindFloat:
		return n.f != 0
	case kindString:
		return n.s != ""
	case kindList:
		return len(n.items) > 0
	case kindMap:
		return len(n.keys) > 0
	}
	return false
}

func asBool(n *node, where string) bool {
	if n.kind != kindBool {
		failf(n, "%s: expected a bool, got %s", where, n.kind)
	}
	return n.b
}

func asList(n *node, where string) []*node {
	switch n.kind {
	case kindNull:
		return nil
	case kindList:
		return n.items
	}
	failf(n, "%s: expected a list, got %s", where, n.kind)
	return nil
}

func asMapValue(n *node, where string) map[string]any {
	switch n.kind {
	case kindNull:
		return nil
	case kindMap:
		return n.value().(map[string]any)
	}
	failf(n, "%s: expected a mapping, got %s", where, n.kind)
	return nil
}

// valueKeyOrders returns the key order of each value of a mapping, by key;
// nil when none needs one.
func valueKeyOrders(n *node) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	if n == nil || n.kind != kindMap {
		return nil
	}
	for i, k := range n.keys {
		if h := n.vals[i].keyOrder(); h != nil {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = h
		}
	}
	return out
}

func orderedPairs(n *node, where string) []kv {
	if n == nil || n.kind == kindNull {
		return nil
	}
	if n.kind != kindMap {
		failf(n, "%s: expected a mapping, got %s", where, n.kind)
	}
	out := make([]kv, len(n.keys))
	for i, k := range n.keys {
		out[i] = kv{k, n.vals[i].value(), n.vals[i].keyOrder()}
	}
	return out
}

func makeError(n *node, where, key string) *PyError {
	typ := strOr(n, "error_type", where, "ValueError")
	if !slices.Contains(errorTypes, typ) {
		failf(n.get("error_type"), "%s: unknown error_type %q", where, typ)
	}
	msg := n.get(key)
	if msg.kind != kindString {
		// Python would str() it; scenarios use strings.
		failf(msg, "%s.%s: expected a string message", where, key)
	}
	return &PyError{Type: typ, Msg: msg.s}
}

// ---------------------------------------------------------------------------
// Scenario.

func decodeScenario(file string, root *node) (sc *Scenario, err error) {
	defer catch(&err)
	checkKeys(root, "scenario", "name", "description", "initial_state", "run_config", "sessions", "agent", "plugins", "model_responses", "turns", "model_capabilities", "resumable", "compaction", "artifacts")
	sc = &Scenario{File: file}
	if v := root.get("name"); v == nil || v.kind != kindString || v.s == "" {
		failf(root, "scenario needs a name")
	}
	sc.Name = root.get("name").s
	if d := root.get("description"); d != nil && d.kind != kindString && d.kind != kindNull {
		failf(d, "description: expected a string")
	}
	if caps := root.get("model_capabilities"); caps != nil && caps.kind != kindNull {
		checkKeys(caps, "model_capabilities", "output_schema_and_tools")
		sc.OutputSchemaAndTools = truthy(caps.get("output_schema_and_tools"))
	}
	sc.Resumable = truthy(root.get("resumable"))
	if c := root.get("compaction"); c != nil && c.kind != kindNull {
		sc.Compaction = decodeCompaction(c)
	}
	for i, r := range asList(orNull(root.get("model_responses")), "model_responses") {
		sc.ModelResponses = append(sc.ModelResponses, decodeResponse(r, fmt.Sprintf("model_responses[%d]", i), true))
	}
	agent := root.get("agent")
	if agent == nil {
		failf(root, "scenario needs an agent")
	}
	names := map[string]bool{}
	sc.Agent = decodeAgent(agent, names)
	for i, p := range asList(orNull(root.get("plugins")), "plugins") {
		where := fmt.Sprintf("plugins[%d]", i)
		checkKeys(p, where, "name", "callbacks")
		name := asString(orNull(p.get("name")), where+".name")
		sc.Plugins = append(sc.Plugins, &PluginSpec{Name: name, Hooks: decodeHooks(p.get("callbacks"), "plugin:"+name, pluginHooks)})
	}
	if s := root.get("sessions"); s != nil {
		if root.has("initial_state") {
			failf(s, "use sessions[].initial_state with sessions")
		}
		for i, sn := range asList(s, "sessions") {
			where := fmt.Sprintf("sessions[%d]", i)
			checkKeys(sn, where, "id", "user_id", "initial_state")
			ss := SessionSpec{ID: fmt.Sprintf("s%d", i+1), UserID: "user"}
			if v := sn.get("id"); truthy(v) {
				ss.ID = asString(v, where+".id")
			}
			if v := sn.get("user_id"); v != nil {
				ss.UserID = asString(v, where+".user_id")
			}
			if v := sn.get("initial_state"); v != nil {
				ss.InitialState, ss.StateKeyOrder = asMapValue(v, where+".initial_state"), valueKeyOrders(v)
			}
			sc.Sessions = append(sc.Sessions, ss)
		}
	} else {
		ss := SessionSpec{ID: "s1", UserID: "user"}
		if v := root.get("initial_state"); v != nil {
			ss.InitialState, ss.StateKeyOrder = asMapValue(v, "initial_state"), valueKeyOrders(v)
		}
		sc.Sessions = []SessionSpec{ss}
	}
	if a := root.get("artifacts"); a != nil {
		sc.Artifacts = []ArtifactSpec{}
		for i, an := range asList(orNull(a), "artifacts") {
			where := fmt.Sprintf("artifacts[%d]", i)
			checkKeys(an, where, "name", "mime_type", "text", "data", "session")
			spec := ArtifactSpec{
				Name:     asString(orNull(an.get("name")), where+".name"),
				MIMEType: asString(orNull(an.get("mime_type")), where+".mime_type"),
				Session:  sc.Sessions[0].ID,
			}
			if v := an.get("session"); v != nil {
				spec.Session = asString(v, where+".session")
			}
			text, data := an.get("text"), an.get("data")
			switch {
			case (text == nil) == (data == nil):
				failf(an, "%s: exactly one of text and data", where)
			case text != nil:
				spec.Data = []byte(asString(text, where+".text"))
			default:
				b, err := base64.StdEncoding.DecodeString(asString(data, where+".data"))
				if err != nil {
					failf(data, "%s.data: %v", where, err)
				}
				spec.Data = b
			}
			sc.Artifacts = append(sc.Artifacts, spec)
		}
	}
	sc.RunConfig = decodeRunConfig(root.get("run_config"))
	turns := root.get("turns")
	if turns == nil {
		failf(root, "scenario needs turns")
	}
	for i, t := range asList(turns, "turns") {
		sc.Turns = append(sc.Turns, decodeTurn(t, fmt.Sprintf("turns[%d]", i), sc))
	}
	return sc, nil
}

func orNull(n *node) *node {
	if n == nil {
		return &node{kind: kindNull}
	}
	return n
}

func decodeRunConfig(n *node) RunConfigSpec {
	var rc RunConfigSpec
	if n == nil || n.kind == kindNull {
		return rc
	}
	checkKeys(n, "run_config", "max_llm_calls", "streaming_mode", "custom_metadata", "save_input_blobs_as_artifacts")
	if v := n.get("custom_metadata"); v != nil {
		rc.CustomMetadata = asMapValue(v, "run_config.custom_metadata")
	}
	if v := n.get("save_input_blobs_as_artifacts"); v != nil {
		b := truthy(v)
		rc.SaveInputBlobs = &b
	}
	if v := n.get("max_llm_calls"); v != nil {
		x := asInt(v, "run_config.max_llm_calls")
		rc.MaxLLMCalls = &x
	}
	if v := n.get("streaming_mode"); v != nil {
		rc.StreamingMode = asString(v, "run_config.streaming_mode")
		if rc.StreamingMode != "none" && rc.StreamingMode != "sse" {
			failf(v, "unknown streaming_mode %q", rc.StreamingMode)
		}
	}
	return rc
}

// ---------------------------------------------------------------------------
// Parts, contents, responses.

func decodeCall(n *node, where string) *CallSpec {
	checkKeys(n, where, "name", "args", "id")
	c := &CallSpec{Name: asString(orNull(n.get("name")), where+".name"), Args: map[string]any{}}
	if a := n.get("args"); a != nil {
		if a.kind == kindNull {
			c.Args = nil
		} else {
			c.Args = asMapValue(a, where+".args")
			c.ArgsOrder = a.keyOrder()
		}
	}
	if id := n.get("id"); id != nil && id.kind != kindNull {
		c.ID = asString(id, where+".id")
	}
	return c
}

func decodeFuncResponse(n *node, where string, allowCall bool) FuncResponseSpec {
	if allowCall {
		checkKeys(n, where, "name", "id", "call", "response")
	} else {
		checkKeys(n, where, "name", "response", "id")
	}
	fr := FuncResponseSpec{Name: asString(orNull(n.get("name")), where+".name"), Response: map[string]any{}}
	if r := n.get("response"); r != nil {
		fr.Response = asMapValue(r, where+".response")
		fr.ResponseOrder = r.keyOrder()
	}
	if id := n.get("id"); id != nil && id.kind != kindNull {
		fr.ID = asString(id, where+".id")
	}
	if c := n.get("call"); c != nil {
		fr.Call = asString(c, where+".call")
	}
	return fr
}

func decodePart(n *node, where string) PartSpec {
	if n.kind == kindString {
		s := n.s
		return PartSpec{Text: &s}
	}
	checkKeys(n, where, "text", "thought", "function_call", "function_response", "executable_code", "code_execution_result", "inline_data")
	var p PartSpec
	if c := n.get("executable_code"); c != nil {
		checkKeys(c, where+".executable_code", "code", "language")
		p.Code = &genai.ExecutableCode{Code: strOr(c, "code", where+".executable_code", ""), Language: genai.Language(strOr(c, "language", where+".executable_code", "PYTHON"))}
	}
	if r := n.get("code_execution_result"); r != nil {
		checkKeys(r, where+".code_execution_result", "outcome", "output")
		p.Result = &genai.CodeExecutionResult{Outcome: genai.Outcome(strOr(r, "outcome", where+".code_execution_result", "OUTCOME_OK")), Output: strOr(r, "output", where+".code_execution_result", "")}
	}
	if d := n.get("inline_data"); d != nil {
		checkKeys(d, where+".inline_data", "mime_type", "data", "display_name")
		data, err := base64.StdEncoding.DecodeString(strOr(d, "data", where+".inline_data", ""))
		if err != nil {
			failf(d, "%s.inline_data.data: %v", where, err)
		}
		p.Inline = &genai.Blob{MIMEType: strOr(d, "mime_type", where+".inline_data", ""), Data: data, DisplayName: strOr(d, "display_name", where+".inline_data", "")}
	}
	p.Text = optString(n, "text", where)
	p.Thought = truthy(n.get("thought"))
	if fc := n.get("function_call"); fc != nil {
		p.Call = decodeCall(fc, where+".function_call")
	}
	if fr := n.get("function_response"); fr != nil {
		r := decodeFuncResponse(fr, where+".function_response", false)
		p.Response = &r
	}
	return p
}

func decodeParts(n *node, where string) []PartSpec {
	var out []PartSpec
	for i, p := range asList(orNull(n), where) {
		out = append(out, decodePart(p, fmt.Sprintf("%s[%d]", where, i)))
	}
	return out
}

func decodeContent(n *node, where, defaultRole string) *ContentSpec {
	if n.kind == kindString {
		s := n.s
		return &ContentSpec{Role: defaultRole, Parts: []PartSpec{{Text: &s}}}
	}
	checkKeys(n, where, "role", "parts", "text")
	c := &ContentSpec{Role: strOr(n, "role", where, defaultRole)}
	if t := optString(n, "text", where); t != nil {
		c.Parts = append(c.Parts, PartSpec{Text: t})
	}
	c.Parts = append(c.Parts, decodeParts(n.get("parts"), where+".parts")...)
	return c
}

func decodeResponse(n *node, where string, allowError bool) *ResponseSpec {
	if n.kind == kindString {
		s := n.s
		return &ResponseSpec{Role: "model", Parts: []PartSpec{{Text: &s}}}
	}
	r := &ResponseSpec{Role: "model"}
	if allowError && n.has("error") {
		checkKeys(n, where, "error", "error_type", "agent")
		r.Agent = strOr(n, "agent", where, "")
		r.Err = makeError(n, where, "error")
		return r
	}
	allowed := []string{"text", "thought", "function_calls", "parts", "role", "error_code", "error_message", "finish_reason", "turn_complete", "partials", "custom_metadata", "no_content", "agent", "usage_metadata"}
	if allowError {
		allowed = append(allowed, "error", "error_type")
	}
	checkKeys(n, where, allowed...)
	r.Agent = strOr(n, "agent", where, "")
	if t := optString(n, "thought", where); t != nil {
		r.Parts = append(r.Parts, PartSpec{Text: t, Thought: true})
	}
	if t := optString(n, "text", where); t != nil {
		r.Parts = append(r.Parts, PartSpec{Text: t})
	}
	for i, fc := range asList(orNull(n.get("function_calls")), where+".function_calls") {
		r.Parts = append(r.Parts, PartSpec{Call: decodeCall(fc, fmt.Sprintf("%s.function_calls[%d]", where, i))})
	}
	r.Parts = append(r.Parts, decodeParts(n.get("parts"), where+".parts")...)
	r.Role = strOr(n, "role", where, "model")
	r.NoContent = truthy(n.get("no_content"))
	if v := n.get("finish_reason"); v != nil {
		r.FinishReason = asString(v, where+".finish_reason")
		if !slices.Contains(finishReasons, r.FinishReason) {
			failf(v, "%s: unknown finish_reason %q", where, r.FinishReason)
		}
	}
	r.ErrorCode = optString(n, "error_code", where)
	r.ErrorMessage = optString(n, "error_message", where)
	if v := n.get("turn_complete"); v != nil {
		b := asBool(v, where+".turn_complete")
		r.TurnComplete = &b
	}
	if v := n.get("custom_metadata"); v != nil {
		r.CustomMetadata = asMapValue(v, where+".custom_metadata")
	}
	if v := n.get("usage_metadata"); v != nil {
		checkKeys(v, where+".usage_metadata", usageMetadataKeys...)
		r.UsageMetadata = map[string]int64{}
		for i, k := range v.keys {
			r.UsageMetadata[k] = asInt(v.vals[i], where+".usage_metadata."+k)
		}
	}
	if v := n.get("partials"); v != nil {
		if v.kind != kindList {
			failf(v, "%s.partials must be a list of strings", where)
		}
		for i, p := range v.items {
			r.Partials = append(r.Partials, asString(p, fmt.Sprintf("%s.partials[%d]", where, i)))
		}
	}
	return r
}

// usageMetadataKeys are the usage_metadata fields a scripted response may
// set.
var usageMetadataKeys = []string{"prompt_token_count", "candidates_token_count", "total_token_count"}

// decodeCompaction decodes the top-level compaction mapping. Values are
// checked by the engine (and by pydantic in the Python runner).
func decodeCompaction(n *node) *CompactionSpec {
	checkKeys(n, "compaction", "compaction_interval", "overlap_size", "token_threshold", "event_retention_size")
	c := &CompactionSpec{}
	for key, dst := range map[string]**int64{
		"compaction_interval": &c.CompactionInterval, "overlap_size": &c.OverlapSize,
		"token_threshold": &c.TokenThreshold, "event_retention_size": &c.EventRetentionSize,
	} {
		if v := n.get(key); v != nil && v.kind != kindNull {
			i := asInt(v, "compaction."+key)
			*dst = &i
		}
	}
	return c
}

// finishReasons are google-genai's FinishReason names.
var finishReasons = []string{"FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY", "UNEXPECTED_TOOL_CALL", "IMAGE_PROHIBITED_CONTENT", "NO_IMAGE", "IMAGE_RECITATION", "IMAGE_OTHER"}

// ---------------------------------------------------------------------------
// Turns.

func decodeTurn(n *node, where string, sc *Scenario) *TurnSpec {
	if n.kind == kindString {
		s := n.s
		return &TurnSpec{Text: &s, Session: sc.Sessions[0].ID}
	}
	checkKeys(n, where, "text", "parts", "function_response", "state_delta", "session", "run_config", "resume_turn", "rewind_before_turn", "abort_after_events", "add_session_to_memory")
	t := &TurnSpec{Session: sc.Sessions[0].ID}
	if v := n.get("add_session_to_memory"); v != nil {
		if len(n.keys) != 1 {
			failf(v, "%s: add_session_to_memory takes no other key", where)
		}
		t.AddSessionToMemory = asString(v, where+".add_session_to_memory")
		if !slices.ContainsFunc(sc.Sessions, func(s SessionSpec) bool { return s.ID == t.AddSessionToMemory }) {
			failf(v, "%s.add_session_to_memory: unknown session %q", where, t.AddSessionToMemory)
		}
		t.Session = t.AddSessionToMemory
		return t
	}
	t.Text = optString(n, "text", where)
	if fr := n.get("function_response"); fr != nil {
		items := []*node{fr}
		if fr.kind == kindList {
			items = fr.items
		} else if fr.kind == kindNull {
			items = nil
		}
		for i, it := range items {
			t.FuncResponses = append(t.FuncResponses, decodeFuncResponse(it, fmt.Sprintf("%s.function_response[%d]", where, i), true))
		}
	}
	t.Parts = decodeParts(n.get("parts"), where+".parts")
	if v := n.get("state_delta"); v != nil {
		t.StateDelta = asMapValue(v, where+".state_delta")
	}
	if v := n.get("session"); v != nil {
		t.Session = asString(v, where+".session")
		found := false
		for _, s := range sc.Sessions {
			found = found || s.ID == t.Session
		}
		if !found {
			failf(v, "%s: unknown session %q", where, t.Session)
		}
	}
	t.RunConfig = decodeRunConfig(n.get("run_config"))
	if v := n.get("resume_turn"); v != nil {
		i := int(asInt(v, where+".resume_turn"))
		if i < 0 || i >= len(sc.Turns) {
			failf(v, "%s.resume_turn: %d is not an earlier turn", where, i)
		}
		t.ResumeTurn = &i
	}
	if v := n.get("abort_after_events"); v != nil {
		i := int(asInt(v, where+".abort_after_events"))
		if i < 1 {
			failf(v, "%s.abort_after_events: %d is not a positive count", where, i)
		}
		t.AbortAfterEvents = i
	}
	if v := n.get("rewind_before_turn"); v != nil {
		for _, k := range []string{"text", "parts", "function_response", "state_delta", "run_config", "resume_turn", "abort_after_events"} {
			if n.get(k) != nil {
				failf(v, "%s: rewind_before_turn takes only session, not %s", where, k)
			}
		}
		i := int(asInt(v, where+".rewind_before_turn"))
		if i < 0 || i >= len(sc.Turns) {
			failf(v, "%s.rewind_before_turn: %d is not an earlier turn", where, i)
		}
		t.RewindBeforeTurn = &i
	}
	return t
}

// ---------------------------------------------------------------------------
// Agents.

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func decodeAgent(n *node, names map[string]bool) *AgentSpec {
	if n.kind != kindMap {
		failf(n, "agent: expected a mapping")
	}
	a := &AgentSpec{Type: "LlmAgent"}
	if v := n.get("type"); v != nil {
		a.Type = asString(v, "agent.type")
	}
	nameNode := n.get("name")
	if nameNode == nil || !truthy(nameNode) {
		failf(n, "agent without name")
	}
	a.Name = asString(nameNode, "agent.name")
	where := "agent " + a.Name
	if names[a.Name] {
		failf(nameNode, "duplicate agent name %q", a.Name)
	}
	names[a.Name] = true
	common := []string{"type", "name", "description", "sub_agents", "callbacks"}
	switch a.Type {
	case "LlmAgent":
		checkKeys(n, where, append(common, "model", "instruction", "instruction_provider", "static_instruction", "global_instruction", "global_instruction_provider", "include_contents", "output_key", "output_schema", "disallow_transfer_to_parent", "disallow_transfer_to_peers", "planner", "generate_content_config", "tools", "mode", "code_executor")...)
	case "SequentialAgent", "ParallelAgent":
		checkKeys(n, where, common...)
	case "LoopAgent":
		checkKeys(n, where, append(common, "max_iterations")...)
		if v := n.get("max_iterations"); v != nil && v.kind != kindNull {
			a.MaxIterations = new(asInt(v, where+".max_iterations"))
		}
	default:
		failf(n.get("type"), "%s: unknown agent type %q", where, a.Type)
	}
	a.Description = strOr(n, "description", where, "")
	for _, s := range asList(orNull(n.get("sub_agents")), where+".sub_agents") {
		a.SubAgents = append(a.SubAgents, decodeAgent(s, names))
	}
	allowed := agentHooks
	if a.Type != "LlmAgent" {
		allowed = []string{"before_agent", "after_agent"}
	}
	a.Callbacks = decodeHooks(n.get("callbacks"), "agent:"+a.Name, allowed)
	if a.Type != "LlmAgent" {
		return a
	}
	a.Model = strOr(n, "model", where, "")
	a.Instruction = optString(n, "instruction", where)
	a.GlobalInstruction = optString(n, "global_instruction", where)
	a.InstructionProvider = optString(n, "instruction_provider", where)
	a.GlobalInstructionProvider = optString(n, "global_instruction_provider", where)
	if a.Instruction != nil && a.InstructionProvider != nil || a.GlobalInstruction != nil && a.GlobalInstructionProvider != nil {
		failf(n, "%s: give an instruction or its provider, not both", where)
	}
	if v := n.get("static_instruction"); v != nil {
		a.StaticInstruction = decodeContent(v, where+".static_instruction", "user")
	}
	if v := n.get("include_contents"); v != nil {
		a.IncludeContents = asString(v, where+".include_contents")
		if a.IncludeContents != "default" && a.IncludeContents != "none" {
			failf(v, "%s: include_contents must be default or none", where)
		}
	}
	a.OutputKey = strOr(n, "output_key", where, "")
	if v := n.get("output_schema"); v != nil {
		a.OutputSchema = decodeModelSchema(v, where+".output_schema", strings.ToUpper(a.Name[:1])+a.Name[1:]+"Output")
	}
	if v := n.get("disallow_transfer_to_parent"); v != nil {
		a.DisallowTransferToParent = asBool(v, where+".disallow_transfer_to_parent")
	}
	if v := n.get("disallow_transfer_to_peers"); v != nil {
		a.DisallowTransferToPeers = asBool(v, where+".disallow_transfer_to_peers")
	}
	if v := n.get("code_executor"); v != nil {
		if v.kind != kindString || v.s != "built_in" {
			failf(v, "agent %s: unknown code_executor (want built_in)", a.Name)
		}
		a.CodeExecutor = v.s
	}
	if v := n.get("planner"); v != nil {
		p := &PlannerSpec{pos: v}
		switch {
		case v.kind == kindString && v.s == "plan_react":
			p.PlanReAct = true
		case v.kind == kindMap && v.has("built_in"):
			checkKeys(v, where+".planner", "built_in")
			p.ThinkingConfig = asMapValue(v.get("built_in"), where+".planner.built_in")
			if p.ThinkingConfig == nil {
				p.ThinkingConfig = map[string]any{}
			}
		default:
			failf(v, "%s: unknown planner", where)
		}
		a.Planner = p
	}
	if v := n.get("generate_content_config"); v != nil {
		a.GenerateContentConfig = asMapValue(v, where+".generate_content_config")
		a.GenerateContentConfigPos = v
	}
	a.Mode = strOr(n, "mode", where, "")
	for i, t := range asList(orNull(n.get("tools")), where+".tools") {
		a.Tools = append(a.Tools, decodeTool(t, fmt.Sprintf("%s.tools[%d]", where, i), names))
	}
	return a
}

// ---------------------------------------------------------------------------
// Tools.

var pyTypes = []string{"string", "integer", "number", "boolean", "object", "array"}

func decodeTool(n *node, where string, names map[string]bool) *ToolSpec {
	if n.kind != kindMap {
		failf(n, "%s: expected a mapping", where)
	}
	if n.has("agent_tool") {
		checkKeys(n, where, "agent_tool")
		at := n.get("agent_tool")
		if at.kind != kindMap || at.get("agent") == nil {
			failf(at, "%s.agent_tool: expected {agent: <agent>, skip_summarization: bool}", where)
		}
		checkKeys(at, where+".agent_tool", "agent", "skip_summarization")
		return &ToolSpec{AgentTool: &AgentToolSpec{Agent: decodeAgent(at.get("agent"), names), SkipSummarization: truthy(at.get("skip_summarization"))}}
	}
	if n.has("example_tool") {
		checkKeys(n, where, "example_tool")
		et := n.get("example_tool")
		if et.kind != kindMap {
			failf(et, "%s.example_tool: expected {examples: [...]}", where)
		}
		checkKeys(et, where+".example_tool", "examples")
		t := &ToolSpec{ExampleTool: []ExampleSpec{}}
		for i, ex := range asList(orNull(et.get("examples")), where+".example_tool.examples") {
			w := fmt.Sprintf("%s.example_tool.examples[%d]", where, i)
			checkKeys(ex, w, "input", "output")
			if ex.get("input") == nil {
				failf(ex, "%s: input is required", w)
			}
			spec := ExampleSpec{Input: decodeContent(ex.get("input"), w+".input", "user")}
			for j, o := range asList(orNull(ex.get("output")), w+".output") {
				spec.Output = append(spec.Output, decodeContent(o, fmt.Sprintf("%s.output[%d]", w, j), "model"))
			}
			t.ExampleTool = append(t.ExampleTool, spec)
		}
		return t
	}
	if n.has("builtin") {
		checkKeys(n, where, "builtin")
		b := asString(n.get("builtin"), where+".builtin")
		switch b {
		case "exit_loop", "load_memory", "preload_memory", "load_artifacts", "get_user_choice", "transfer_to_agent", "google_search", "url_context", "enterprise_web_search", "google_maps_grounding":
		default:
			failf(n.get("builtin"), "unknown builtin tool %q", b)
		}
		return &ToolSpec{Builtin: b}
	}
	t := &ToolSpec{Name: strOr(n, "name", where, "")}
	where = "tool " + t.Name
	checkKeys(n, where, "name", "description", "parameters", "long_running", "return", "return_args", "set_state", "transfer_to_agent", "escalate", "skip_summarization", "raise", "error_type", "builtin", "request_confirmation", "require_confirmation", "artifacts", "return_artifacts")
	if !identRe.MatchString(t.Name) {
		failf(n, "%s: name must be an identifier", where)
	}
	if v := n.get("description"); v != nil && v.kind != kindNull {
		s := asString(v, where+".description")
		t.Description = &s
	}
	if p := n.get("parameters"); p != nil && p.kind != kindNull {
		if p.kind != kindMap {
			failf(p, "%s.parameters: expected a mapping", where)
		}
		for i, pname := range p.keys {
			if !identRe.MatchString(pname) {
				failf(p.vals[i], "%s: bad parameter name %q", where, pname)
			}
			pn := p.vals[i]
			ps := ParamSpec{Name: pname, Type: "string"}
			pw := where + "." + pname
			if pn.kind == kindString {
				ps.Type = pn.s
			} else {
				checkKeys(pn, pw, "type", "default", "optional", "items")
				ps.Type = strOr(pn, "type", pw, "string")
				if d := pn.get("default"); d != nil {
					ps.HasDefault, ps.Default = true, d.value()
				}
				ps.Optional = truthy(pn.get("optional"))
				if it := pn.get("items"); it != nil && ps.Type == "array" {
					ps.Items = asString(it, pw+".items")
					if !slices.Contains(pyTypes, ps.Items) {
						failf(it, "%s: unknown items type %q", pw, ps.Items)
					}
				}
			}
			if !slices.Contains(pyTypes, ps.Type) {
				failf(pn, "%s: unknown type %q", pw, ps.Type)
			}
			t.Params = append(t.Params, ps)
		}
	}
	t.LongRunning = truthy(n.get("long_running"))
	t.SetState = orderedPairs(n.get("set_state"), where+".set_state")
	if v := n.get("artifacts"); v != nil {
		t.Artifacts = decodeArtifactOps(v, where+".artifacts")
	}
	t.ReturnArtifacts = truthy(n.get("return_artifacts"))
	t.TransferToAgent = optString(n, "transfer_to_agent", where)
	t.Escalate = truthy(n.get("escalate"))
	t.SkipSummarization = truthy(n.get("skip_summarization"))
	if n.has("raise") {
		t.Raise = makeError(n, where, "raise")
	}
	t.ReturnArgs = truthy(n.get("return_args"))
	t.RequireConfirmation = truthy(n.get("require_confirmation"))
	if t.RequireConfirmation && t.LongRunning {
		failf(n, "%s: require_confirmation needs a non-long-running tool", where)
	}
	if v := n.get("return"); v != nil {
		t.HasReturn, t.Return, t.ReturnOrder = true, v.value(), v.keyOrder()
	}
	if c := n.get("request_confirmation"); c != nil && c.kind != kindNull {
		cw := where + ".request_confirmation"
		if c.kind != kindMap {
			failf(c, "%s: expected a mapping", cw)
		}
		checkKeys(c, cw, "hint", "payload")
		t.RequestConfirmation = &ConfirmationSpec{Hint: optString(c, "hint", cw)}
		if v := c.get("payload"); v != nil {
			t.RequestConfirmation.Payload = v.value()
		}
	}
	return t
}

// ---------------------------------------------------------------------------
// Output schema.

func decodeModelSchema(n *node, where, defaultTitle string) *ModelSchema {
	checkKeys(n, where, "title", "type", "properties", "required", "description")
	m := &ModelSchema{Title: strOr(n, "title", where, defaultTitle), Description: strOr(n, "description", where, ""), Required: map[string]bool{}}
	props := n.get("properties")
	if props != nil && props.kind != kindNull && props.kind != kindMap {
		failf(props, "%s.properties: expected a mapping", where)
	}
	if props != nil && props.kind == kindMap {
		for i, name := range props.keys {
			pn := props.vals[i]
			pw := where + "." + name
			if pn.kind != kindString {
				checkKeys(pn, pw, "type", "description", "items", "properties", "required", "title")
			}
			m.Props = append(m.Props, decodeProp(pn, pw, name, m.Title+pyTitle(name)))
		}
	}
	if r := n.get("required"); r != nil {
		for i, it := range asList(r, where+".required") {
			m.Required[asString(it, fmt.Sprintf("%s.required[%d]", where, i))] = true
		}
	} else {
		for _, p := range m.Props {
			m.Required[p.Name] = true
		}
	}
	return m
}

func decodeProp(n *node, where, name, nameHint string) *PropSchema {
	p := &PropSchema{Name: name, Type: "string"}
	if n.kind == kindString {
		p.Type = n.s
	} else {
		p.Type = strOr(n, "type", where, "string")
		p.Description = optString(n, "description", where)
	}
	switch p.Type {
	case "string", "integer", "number", "boolean":
	case "array":
		items := n.get("items")
		if items == nil || !truthy(items) {
			p.Items = &PropSchema{Type: "string"}
		} else {
			if items.kind != kindString {
				checkKeys(items, where+".items", "type", "description", "items", "properties", "required", "title")
			}
			p.Items = decodeProp(items, where+".items", "", nameHint+"Item")
		}
	case "object":
		if n.kind == kindMap && n.has("properties") {
			p.Object = decodeModelSchema(n, where, nameHint)
		}
	default:
		failf(n, "%s: unknown type %q", where, p.Type)
	}
	return p
}

// ---------------------------------------------------------------------------
// Callbacks.

func decodeHooks(n *node, owner string, allowed []string) map[string][]*Behaviour {
	out := map[string][]*Behaviour{}
	if n == nil || n.kind == kindNull {
		return out
	}
	checkKeys(n, owner+".callbacks", allowed...)
	for i, hook := range n.keys {
		items := []*node{n.vals[i]}
		if v := n.vals[i]; v.kind == kindList {
			items = v.items
		}
		for j, it := range items {
			out[hook] = append(out[hook], decodeBehaviour(it, hook, owner, j))
		}
	}
	return out
}

func decodeBehaviour(n *node, hook, owner string, index int) *Behaviour {
	where := fmt.Sprintf("%s.%s[%d]", owner, hook, index)
	b := &Behaviour{Hook: hook, Owner: owner, Index: index}
	if n.kind == kindNull {
		return b
	}
	checkKeys(n, where, "when", "set_state", "artifacts", "escalate", "transfer_to_agent", "set_args", "append_instruction", "raise", "error_type", "return")
	if w := n.get("when"); w != nil && w.kind != kindNull {
		checkKeys(w, where+".when", "agent", "tool", "nth", "author", "error_contains")
		b.When.Agent = optString(w, "agent", where+".when")
		b.When.Tool = optString(w, "tool", where+".when")
		b.When.Author = optString(w, "author", where+".when")
		b.When.ErrorContains = optString(w, "error_contains", where+".when")
		if v := w.get("nth"); v != nil {
			x := asInt(v, where+".when.nth")
			b.When.Nth = &x
		}
	}
	if v := n.get("return"); v != nil {
		b.HasReturn = true
		switch {
		case slices.Contains(contentHooks, hook):
			role := "model"
			if hook == "on_user_message" {
				role = "user"
			}
			b.ReturnContent = decodeContent(v, where+".return", role)
		case slices.Contains(responseHooks, hook):
			b.ReturnResponse = decodeResponse(v, where+".return", false)
		case hook == "on_event":
			b.ReturnEvent = decodeEventUpdate(v, where+".return")
		case slices.Contains(noneHooks, hook):
			failf(v, "%s: hook %s cannot return a value", where, hook)
		default:
			b.ReturnValue = v.value()
		}
	}
	if v := n.get("set_args"); v != nil {
		if hook != "before_tool" {
			failf(v, "%s: set_args only for before_tool", where)
		}
		b.SetArgs = orderedPairs(v, where+".set_args")
	}
	if v := n.get("append_instruction"); v != nil {
		if hook != "before_model" {
			failf(v, "%s: append_instruction only for before_model", where)
		}
		s := asString(v, where+".append_instruction")
		b.AppendInstruction = &s
	}
	for _, k := range []string{"set_state", "artifacts", "escalate", "transfer_to_agent"} {
		if v := n.get(k); v != nil && slices.Contains(noContextHooks, hook) {
			failf(v, "%s: %s not supported for %s", where, k, hook)
		}
	}
	if v := n.get("set_state"); v != nil {
		b.SetState = orderedPairs(v, where+".set_state")
	}
	if v := n.get("artifacts"); v != nil {
		b.Artifacts = decodeArtifactOps(v, where+".artifacts")
	}
	b.Escalate = truthy(n.get("escalate"))
	b.TransferToAgent = optString(n, "transfer_to_agent", where)
	if n.has("raise") {
		b.Raise = makeError(n, where, "raise")
	}
	return b
}

// decodeArtifactOps reads an artifacts list: {save: name, mime_type, text |
// data (base64)}, {load: name, version}, {list: true}.
func decodeArtifactOps(n *node, where string) []ArtifactOp {
	ops := []ArtifactOp{}
	for i, on := range asList(n, where) {
		w := fmt.Sprintf("%s[%d]", where, i)
		if on.kind != kindMap {
			failf(on, "%s: expected a mapping", w)
		}
		var op ArtifactOp
		switch {
		case on.has("save"):
			checkKeys(on, w, "save", "mime_type", "text", "data")
			name := asString(on.get("save"), w+".save")
			op.Save = &name
			text, data := on.get("text"), on.get("data")
			if (text == nil) == (data == nil) || on.get("mime_type") == nil {
				failf(on, "%s: save needs mime_type and one of text, data", w)
			}
			op.MIMEType = asString(on.get("mime_type"), w+".mime_type")
			if text != nil {
				op.Data = []byte(asString(text, w+".text"))
			} else {
				b, err := base64.StdEncoding.DecodeString(asString(data, w+".data"))
				if err != nil {
					failf(data, "%s.data: %v", w, err)
				}
				op.Data = b
			}
		case on.has("load"):
			checkKeys(on, w, "load", "version")
			name := asString(on.get("load"), w+".load")
			op.Load = &name
			if v := on.get("version"); v != nil && v.kind != kindNull {
				x := asInt(v, w+".version")
				op.Version = &x
			}
		case on.has("list"):
			checkKeys(on, w, "list")
			op.List = true
		default:
			failf(on, "%s: one of save, load, list", w)
		}
		ops = append(ops, op)
	}
	return ops
}

// EventUpdateSpec is what an on_event replacement sets (its other fields
// unset): content from text/parts/role, custom_metadata.
type EventUpdateSpec struct {
	Content        *ContentSpec
	CustomMetadata map[string]any
}

func decodeEventUpdate(n *node, where string) *EventUpdateSpec {
	if n.kind != kindMap {
		failf(n, "%s: expected a mapping", where)
	}
	checkKeys(n, where, "text", "parts", "role", "custom_metadata")
	u := &EventUpdateSpec{}
	if n.has("text") || n.has("parts") {
		c := &ContentSpec{Role: strOr(n, "role", where, "model")}
		if t := optString(n, "text", where); t != nil {
			c.Parts = append(c.Parts, PartSpec{Text: t})
		}
		c.Parts = append(c.Parts, decodeParts(n.get("parts"), where+".parts")...)
		u.Content = c
	}
	if v := n.get("custom_metadata"); v != nil {
		u.CustomMetadata = asMapValue(v, where+".custom_metadata")
	}
	return u
}
