package engine_test

// LlmAgent: model resolution, instructions, identity, agent transfer,
// output schema and output key, include_contents, planner.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/planner"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func TestModelInheritedFromAncestorLlmAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target string
		tree   func(t *testing.T, child engine.Agent) engine.Agent
	}{
		{name: "parent LlmAgent", target: "child", tree: func(t *testing.T, child engine.Agent) engine.Agent { return child }},
		{name: "through a SequentialAgent", target: "seq", tree: func(t *testing.T, child engine.Agent) engine.Agent { return newSeq(t, "seq", child) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("root-model", calls(transferCall(tt.target)), text("child answers"))
			child := newLlm(t, engine.LlmAgentConfig{Name: "child", Description: "Child."})
			root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: m, SubAgents: []engine.Agent{tt.tree(t, child)}})
			r, svc := mustRunner(t, root)
			evs := mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			if last := evs[len(evs)-1]; last.Author != "child" {
				t.Fatalf("events:%s", eventsJSON(evs))
			}
			reqs := m.Requests()
			if len(reqs) != 2 {
				t.Fatalf("root model got %d requests, want 2", len(reqs))
			}
			if reqs[1].Model != "root-model" || reqs[1].Config.Labels["adk_agent_name"] != "child" {
				t.Errorf("child's request: model %q, labels %v", reqs[1].Model, reqs[1].Config.Labels)
			}
		})
	}
}

func TestNoModelAnywhereIsAnErrorNamingTheAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		agent string
		root  func(t *testing.T, a engine.Agent) engine.Agent
	}{
		{name: "root LlmAgent", agent: "lonely", root: func(t *testing.T, a engine.Agent) engine.Agent { return a }},
		{name: "under a SequentialAgent", agent: "orphan", root: func(t *testing.T, a engine.Agent) engine.Agent { return newSeq(t, "pipeline", a) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, svc := mustRunner(t, tt.root(t, newLlm(t, engine.LlmAgentConfig{Name: tt.agent})))
			_, err := run(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			if err == nil || !strings.Contains(err.Error(), `"`+tt.agent+`"`) || !strings.Contains(err.Error(), "model") {
				t.Fatalf("error = %v, want one about the missing model naming %q", err, tt.agent)
			}
		})
	}
}

func TestInstructionTemplating(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		instruction string
		provider    func(callbacks.ReadonlyContext) (string, error)
		state       map[string]any
		want        string
	}{
		{
			name:        "state, scoped keys, optional and non-identifier placeholders",
			instruction: "Hello {user_name}. Mood: [{mood?}]. Theme: {app:theme}. Lang: {user:lang}. Literal: {not an identifier}.",
			state:       map[string]any{"user_name": "Ada", "app:theme": "dark", "user:lang": "fr"},
			want:        "Hello Ada. Mood: []. Theme: dark. Lang: fr. Literal: {not an identifier}.",
		},
		{
			name:        "values are rendered as Python str()",
			instruction: "{flag}|{n}|{half}|{items}|{obj}|{none}|",
			state:       map[string]any{"flag": true, "n": 3, "half": 0.5, "items": []any{"a", 1, nil}, "obj": map[string]any{"k": "v"}, "none": nil},
			want:        "True|3|0.5|['a', 1, None]|{'k': 'v'}||",
		},
		{
			name:     "an InstructionProvider's text is not templated",
			provider: func(callbacks.ReadonlyContext) (string, error) { return "Use {user_name} and {missing} as is.", nil },
			state:    map[string]any{"user_name": "Ada"},
			want:     "Use {user_name} and {missing} as is.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", text("ok"))
			a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Instruction: tt.instruction, InstructionProvider: tt.provider})
			r, svc := mustRunner(t, a)
			mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{StateDelta: tt.state})
			if got, want := m.Requests()[0].SystemInstructionText(), tt.want+"\n\n"+identity("assistant"); got != want {
				t.Errorf("system instruction:\ngot  %q\nwant %q", got, want)
			}
		})
	}
}

func TestInstructionMissingKeyFailsTheTurn(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("Bonjour Ada."))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Instruction: "Hello {user_name}."})
	r, svc := mustRunner(t, a)
	evs, err := run(t, r, svc, "s", userText("Hi (no name yet)."), engine.RunConfig{})
	if err == nil || !strings.Contains(err.Error(), "Context variable not found: `user_name`") {
		t.Fatalf("error = %v, want Context variable not found: `user_name`", err)
	}
	want := `{"author":"assistant","errorCode":"KeyError","errorMessage":"\"Context variable not found: ` + "`user_name`" + ` in agent 'assistant'.\""}`
	wantEvents(t, "yielded", evs, want)
	stored := loadSession(t, svc, "s").Events()
	wantEvents(t, "stored", stored, `{"author":"user","content":{"parts":[{"text":"Hi (no name yet)."}],"role":"user"}}`, want)
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("model called %d times, want 0", n)
	}
	// The session stays usable; the failed turn's message stays in history.
	mustRun(t, r, svc, "s", userText("Hi, I am Ada."), engine.RunConfig{StateDelta: map[string]any{"user_name": "Ada"}})
	req := m.Requests()[0]
	if got, want := req.SystemInstructionText(), "Hello Ada.\n\n"+identity("assistant"); got != want {
		t.Errorf("system instruction = %q, want %q", got, want)
	}
	wantJSON(t, "contents", req.Contents, `[{"parts":[{"text":"Hi (no name yet)."}],"role":"user"},{"parts":[{"text":"Hi, I am Ada."}],"role":"user"}]`)
}

func TestGlobalInstructionOfRootAppliesToSubAgent(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", calls(transferCall("child")), text("Hello Ada."))
	child := newLlm(t, engine.LlmAgentConfig{Name: "child", Description: "Child agent.", Instruction: "Child.", DisallowTransferToParent: true, DisallowTransferToPeers: true})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: m, GlobalInstruction: "Be polite to {user_name}.", Instruction: "Route.", SubAgents: []engine.Agent{child}})
	r, svc := mustRunner(t, root)
	mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{StateDelta: map[string]any{"user_name": "Ada"}})
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].SystemInstructionText(); !strings.HasPrefix(got, "Be polite to Ada.\n\nRoute.\n\n"+identity("root")) {
		t.Errorf("root's system instruction = %q", got)
	}
	if got, want := reqs[1].SystemInstructionText(), "Be polite to Ada.\n\nChild.\n\n"+identity("child")+` The description about you is "Child agent.".`; got != want {
		t.Errorf("child's system instruction:\ngot  %q\nwant %q", got, want)
	}
}

// A global instruction provider's text is used as is, like an
// instruction provider's: google-adk bypasses state injection for both.
func TestGlobalInstructionProviderIsNotTemplated(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("Hi."))
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Model: m, Instruction: "Hello {user_name}.",
		GlobalInstructionProvider: func(ctx callbacks.ReadonlyContext) (string, error) {
			return "Global for " + ctx.AgentName() + ", {user_name} kept.", nil
		}})
	r, svc := mustRunner(t, root)
	mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{StateDelta: map[string]any{"user_name": "Ada"}})
	if got, want := m.Requests()[0].SystemInstructionText(), "Global for root, {user_name} kept.\n\nHello Ada.\n\n"+identity("root"); got != want {
		t.Errorf("system instruction:\ngot  %q\nwant %q", got, want)
	}
}

func TestStaticInstructionMovesInstructionToUserContent(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("first answer"), text("second answer"))
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m,
		StaticInstruction: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Static {x} part."}}},
		Instruction:       "Dynamic {x}.",
	})
	r, svc := mustRunner(t, a)
	mustRun(t, r, svc, "s", userText("First."), engine.RunConfig{StateDelta: map[string]any{"x": 1}})
	mustRun(t, r, svc, "s", userText("Second."), engine.RunConfig{})
	labelled := "The text between <<<BEGIN_SYSTEM_INSTRUCTION>>> and <<<END_SYSTEM_INSTRUCTION>>> below is your own system instruction for this turn and carries the current session state. It is addressed to you. Nothing between those two markers was said by the user, so do not answer it or continue it as though it were their turn. Anything the user actually said appears outside the markers, and a real user turn may follow immediately after the end marker.\n<<<BEGIN_SYSTEM_INSTRUCTION>>>\nDynamic 1.\n<<<END_SYSTEM_INSTRUCTION>>>"
	instr, _ := json.Marshal(map[string]any{"parts": []any{map[string]any{"text": labelled}}, "role": "user"})
	reqs := m.Requests()
	for i, r := range reqs {
		// The static instruction is never templated.
		if got, want := r.SystemInstructionText(), "Static {x} part.\n\n"+identity("assistant"); got != want {
			t.Errorf("request %d system instruction = %q, want %q", i, got, want)
		}
	}
	wantJSON(t, "first request contents", reqs[0].Contents, `[`+string(instr)+`,{"parts":[{"text":"First."}],"role":"user"}]`)
	// Placed right before the latest user message, after the history.
	wantJSON(t, "second request contents", reqs[1].Contents,
		`[{"parts":[{"text":"First."}],"role":"user"},{"parts":[{"text":"first answer"}],"role":"model"},`+string(instr)+`,{"parts":[{"text":"Second."}],"role":"user"}]`)
}

func TestIdentityInstruction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, description, instruction, want string
	}{
		{name: "plain", want: `You are an agent. Your internal name is "plain".`},
		{name: "described", description: `An agent with a "quoted" description.`,
			want: `You are an agent. Your internal name is "described". The description about you is "An agent with a "quoted" description.".`},
		{name: "instructed", instruction: "Be brief.", want: "Be brief.\n\n" + `You are an agent. Your internal name is "instructed".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", text("ok"))
			r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: tt.name, Description: tt.description, Instruction: tt.instruction, Model: m}))
			mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			if got := m.Requests()[0].SystemInstructionText(); got != tt.want {
				t.Errorf("system instruction:\ngot  %q\nwant %q", got, tt.want)
			}
		})
	}
}

const transferBody = "\n\nIf you are the best to answer the question according to your description,\nyou can answer it.\n\nIf another agent is better for answering the question according to its\ndescription, call `transfer_to_agent` function to transfer the question to that\nagent. When transferring, do not generate any text other than the function\ncall.\n\n**NOTE**: the only available agents for `transfer_to_agent` function are\n"

const transferToolDescription = "Transfer the query to another agent.\n\nUse this tool to hand off control to another agent that is more suitable to\nanswer the user's query according to the agent's description.\n\nArgs:\n  agent_name: the agent name to transfer to."

func transferDecl(t *testing.T, enum ...string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{
		"name": "transfer_to_agent", "description": transferToolDescription,
		"parametersJsonSchema": map[string]any{
			"type": "object", "title": "transfer_to_agentParams", "required": []string{"agent_name"},
			"properties": map[string]any{"agent_name": map[string]any{"enum": enum, "title": "Agent Name", "type": "string"}},
		},
	})
	return `[{"functionDeclarations":[` + string(b) + `]}]`
}

func TestAgentTransferInstructionAndTool(t *testing.T) {
	t.Parallel()
	mRoot := scripted.New("root-model", calls(transferCall("support")))
	mSupport := scripted.New("support-model", text("support here"))
	leaf := newLlm(t, engine.LlmAgentConfig{Name: "leaf", Description: "A leaf."})
	billing := newLlm(t, engine.LlmAgentConfig{Name: "billing", Description: "Handles billing."})
	support := newLlm(t, engine.LlmAgentConfig{Name: "support", Description: "Handles support.", Instruction: "Support.", Model: mSupport, SubAgents: []engine.Agent{leaf}})
	root := newLlm(t, engine.LlmAgentConfig{Name: "root", Description: "Root router.", Instruction: "Route.", Model: mRoot, SubAgents: []engine.Agent{billing, support}})
	r, svc := mustRunner(t, root)
	mustRun(t, r, svc, "s", userText("Help."), engine.RunConfig{})

	rootReq := mRoot.Requests()[0]
	wantRoot := "Route.\n\n" + `You are an agent. Your internal name is "root". The description about you is "Root router.".` + "\n\n" +
		"\nYou have a list of other agents to transfer to:\n" +
		"\n\nAgent name: billing\nAgent description: Handles billing.\n" +
		"\n\nAgent name: support\nAgent description: Handles support.\n" +
		transferBody + "`billing`, `support`.\n"
	if got := rootReq.SystemInstructionText(); got != wantRoot {
		t.Errorf("root's system instruction:\ngot  %q\nwant %q", got, wantRoot)
	}
	wantJSON(t, "root's tools", rootReq.Config.Tools, transferDecl(t, "billing", "support"))

	// Targets in order sub-agents, parent, peers; the NOTE list sorted.
	supportReq := mSupport.Requests()[0]
	wantSupport := "Support.\n\n" + `You are an agent. Your internal name is "support". The description about you is "Handles support.".` + "\n\n" +
		"\nYou have a list of other agents to transfer to:\n" +
		"\n\nAgent name: leaf\nAgent description: A leaf.\n" +
		"\n\nAgent name: root\nAgent description: Root router.\n" +
		"\n\nAgent name: billing\nAgent description: Handles billing.\n" +
		transferBody + "`billing`, `leaf`, `root`.\n" +
		"\nIf neither you nor the other agents are best for the question, transfer to your parent agent root.\n"
	if got := supportReq.SystemInstructionText(); got != wantSupport {
		t.Errorf("support's system instruction:\ngot  %q\nwant %q", got, wantSupport)
	}
	wantJSON(t, "support's tools", supportReq.Config.Tools, transferDecl(t, "leaf", "root", "billing"))
}

func TestAgentTransferFlagsLimitTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		noParent, noPeers   bool
		wantEnum            []string
		wantParentSentence  bool
		wantNoTransferAtAll bool
	}{
		{name: "both allowed", wantEnum: []string{"root", "peer"}, wantParentSentence: true},
		{name: "disallow parent", noParent: true, wantEnum: []string{"peer"}},
		{name: "disallow peers", noPeers: true, wantEnum: []string{"root"}, wantParentSentence: true},
		{name: "disallow both", noParent: true, noPeers: true, wantNoTransferAtAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mRoot := scripted.New("root-model", calls(transferCall("agent")))
			mAgent := scripted.New("agent-model", text("here"))
			a := newLlm(t, engine.LlmAgentConfig{Name: "agent", Model: mAgent, DisallowTransferToParent: tt.noParent, DisallowTransferToPeers: tt.noPeers})
			peer := newLlm(t, engine.LlmAgentConfig{Name: "peer", Description: "Peer."})
			root := newLlm(t, engine.LlmAgentConfig{Name: "root", Description: "Root.", Model: mRoot, SubAgents: []engine.Agent{a, peer}})
			r, svc := mustRunner(t, root)
			mustRun(t, r, svc, "s", userText("Hi"), engine.RunConfig{})
			req := mAgent.Requests()[0]
			si := req.SystemInstructionText()
			if tt.wantNoTransferAtAll {
				if si != identity("agent") || req.Config.Tools != nil {
					t.Fatalf("isolated agent: system instruction %q, tools %s", si, jsonOf(req.Config.Tools))
				}
				return
			}
			wantJSON(t, "tools", req.Config.Tools, transferDecl(t, tt.wantEnum...))
			if got := strings.Contains(si, "transfer to your parent agent root."); got != tt.wantParentSentence {
				t.Errorf("parent sentence present = %v, want %v: %q", got, tt.wantParentSentence, si)
			}
		})
	}
}

var forecastSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city":        map[string]any{"type": "string"},
		"temperature": map[string]any{"type": "number"},
	},
	"required": []any{"city", "temperature"},
}

func TestOutputSchemaWithoutTools(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text(`{"city": "Oslo", "temperature": 21.5}`))
	a := newLlm(t, engine.LlmAgentConfig{Name: "forecaster", Model: m, OutputSchema: forecastSchema, OutputKey: "forecast"})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("Oslo?"), engine.RunConfig{})
	wantEvents(t, "events", evs,
		`{"author":"forecaster","content":{"parts":[{"text":"{\"city\": \"Oslo\", \"temperature\": 21.5}"}],"role":"model"},"actions":{"stateDelta":{"forecast":{"city":"Oslo","temperature":21.5}}}}`)
	req := m.Requests()[0]
	if req.Config.ResponseMIMEType != "application/json" || !reflect.DeepEqual(req.Config.ResponseJsonSchema, forecastSchema) {
		t.Errorf("config: mime %q, schema %s", req.Config.ResponseMIMEType, jsonOf(req.Config.ResponseJsonSchema))
	}
	if req.Config.Tools != nil || req.SystemInstructionText() != identity("forecaster") {
		t.Errorf("no tool and no extra instruction expected: tools %s, instruction %q", jsonOf(req.Config.Tools), req.SystemInstructionText())
	}
}

func outputSchemaWithToolsRun(t *testing.T) (*scripted.Model, []*session.Event) {
	t.Helper()
	m := scripted.New("m",
		calls(fcall("get_temperature", map[string]any{"city": "Oslo"})),
		calls(fcall("set_model_response", map[string]any{"city": "Oslo", "temperature": 21.5})),
	)
	temp := newTool(t, "get_temperature", objParams("city"), func(callbacks.ToolContext, map[string]any) (any, error) {
		return map[string]any{"temperature": 21.5}, nil
	})
	a := newLlm(t, engine.LlmAgentConfig{Name: "forecaster", Model: m, OutputSchema: forecastSchema, OutputKey: "forecast", Tools: []tool.Tool{temp}})
	r, svc := mustRunner(t, a)
	return m, mustRun(t, r, svc, "s", userText("Forecast for Oslo?"), engine.RunConfig{})
}

func TestOutputSchemaWithToolsUsesSetModelResponse(t *testing.T) {
	t.Parallel()
	m, evs := outputSchemaWithToolsRun(t)
	if len(evs) != 5 {
		t.Fatalf("events:%s", eventsJSON(evs))
	}
	wantEvents(t, "events", evs[:4],
		`{"author":"forecaster","content":{"parts":[{"functionCall":{"args":{"city":"Oslo"},"id":"adk-*","name":"get_temperature"}}],"role":"model"}}`,
		`{"author":"forecaster","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"get_temperature","response":{"temperature":21.5}}}],"role":"user"}}`,
		`{"author":"forecaster","content":{"parts":[{"functionCall":{"args":{"city":"Oslo","temperature":21.5},"id":"adk-*","name":"set_model_response"}}],"role":"model"}}`,
		`{"author":"forecaster","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"set_model_response","response":{"city":"Oslo","temperature":21.5}}}],"role":"user"},"actions":{"setModelResponse":{"city":"Oslo","temperature":21.5}}}`)
	// The final event: the answer as text, stored under the output key.
	final := evs[4]
	var answer any
	if final.Author != "forecaster" || final.Content == nil || len(final.Content.Parts) != 1 || json.Unmarshal([]byte(final.Content.Parts[0].Text), &answer) != nil {
		t.Fatalf("final event: %s", evView(final))
	}
	wantJSON(t, "final answer", answer, `{"city":"Oslo","temperature":21.5}`)
	wantJSON(t, "final actions", final.Actions, `{"stateDelta":{"forecast":{"city":"Oslo","temperature":21.5}}}`)
	if !final.IsFinalResponse() {
		t.Error("the structured answer is not a final response")
	}

	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model called %d times, want 2", len(reqs))
	}
	req := reqs[0]
	if req.Config.ResponseJsonSchema != nil || req.Config.ResponseMIMEType != "" {
		t.Errorf("no response schema expected with tools: %s", jsonOf(req.Config))
	}
	wantSI := identity("forecaster") + "\n\nIMPORTANT: You have access to other tools, but you must provide your final response using the set_model_response tool with the required structured format. After using any other tools needed to complete the task, always call set_model_response with your final answer in the specified schema format."
	if got := req.SystemInstructionText(); got != wantSI {
		t.Errorf("system instruction:\ngot  %q\nwant %q", got, wantSI)
	}
	var names []string
	for _, d := range req.Config.Tools[0].FunctionDeclarations {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "set_model_response,get_temperature" {
		t.Errorf("declarations = %q", names)
	}
	wantJSON(t, "set_model_response declaration", req.FunctionDeclaration("set_model_response"),
		`{"name":"set_model_response","description":"Set your final response using the required output schema.\n\nUse this tool to provide your final structured answer instead\nof outputting text directly.","parametersJsonSchema":{"type":"object","title":"set_model_responseParams","properties":{"city":{"type":"string"},"temperature":{"type":"number"}},"required":["city","temperature"]}}`)
}

// google-adk writes the structured answer with json.dumps(response,
// ensure_ascii=False): Python's separators ", " and ": ", keys in the
// order the model gave them.
func TestOutputSchemaWithToolsFinalTextIsPythonJSON(t *testing.T) {
	t.Parallel()
	_, evs := outputSchemaWithToolsRun(t)
	wantEvents(t, "final event", evs[len(evs)-1:],
		`{"author":"forecaster","content":{"parts":[{"text":"{\"city\": \"Oslo\", \"temperature\": 21.5}"}],"role":"model"},"actions":{"stateDelta":{"forecast":{"city":"Oslo","temperature":21.5}}}}`)
}

func TestOutputKey(t *testing.T) {
	t.Parallel()
	noop := func(t *testing.T) tool.Tool {
		return newTool(t, "noop", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{"ok": true}, nil })
	}
	tests := []struct {
		name      string
		responses []*model.Response
		want      []string
		wantState string
	}{
		{
			name:      "final text is stored",
			responses: []*model.Response{text("Final.")},
			want:      []string{`{"author":"assistant","content":{"parts":[{"text":"Final."}],"role":"model"},"actions":{"stateDelta":{"answer":"Final."}}}`},
			wantState: "Final.",
		},
		{
			name: "text of all the agent's events accumulates, thoughts left out",
			responses: []*model.Response{
				{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "Let me check."}, {FunctionCall: fcall("noop", nil)}}}},
				{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "thinking about it", Thought: true}, {Text: "Final answer part 1. "}, {Text: "Part 2."}}}},
			},
			want: []string{
				`{"author":"assistant","content":{"parts":[{"text":"Let me check."},{"functionCall":{"id":"adk-*","name":"noop"}}],"role":"model"},"actions":{"stateDelta":{"answer":"Let me check."}}}`,
				`{"author":"assistant","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"noop","response":{"ok":true}}}],"role":"user"}}`,
				`{"author":"assistant","content":{"parts":[{"text":"thinking about it","thought":true},{"text":"Final answer part 1. "},{"text":"Part 2."}],"role":"model"},"actions":{"stateDelta":{"answer":"Let me check.Final answer part 1. Part 2."}}}`,
			},
			wantState: "Let me check.Final answer part 1. Part 2.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := scripted.New("m", tt.responses...)
			a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, OutputKey: "answer", Tools: []tool.Tool{noop(t)}})
			r, svc := mustRunner(t, a)
			evs := mustRun(t, r, svc, "s", userText("Question?"), engine.RunConfig{})
			wantEvents(t, "events", evs, tt.want...)
			if v, _ := loadSession(t, svc, "s").StateValue("answer"); v != tt.wantState {
				t.Errorf("state answer = %v, want %q", v, tt.wantState)
			}
		})
	}
}

func TestIncludeContentsNone(t *testing.T) {
	t.Parallel()
	m := scripted.New("m", text("First answer."), calls(fcall("ping", nil)), text("Second answer."))
	ping := newTool(t, "ping", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return "pong", nil })
	a := newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, IncludeContents: engine.IncludeContentsNone, Tools: []tool.Tool{ping}})
	r, svc := mustRunner(t, a)
	mustRun(t, r, svc, "s", userText("First question."), engine.RunConfig{})
	mustRun(t, r, svc, "s", userText("Second question."), engine.RunConfig{})
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	wantJSON(t, "turn 2, first request", reqs[1].Contents, `[{"parts":[{"text":"Second question."}],"role":"user"}]`)
	wantJSON(t, "turn 2, second request", reqs[2].Contents,
		`[{"parts":[{"text":"Second question."}],"role":"user"},{"parts":[{"functionCall":{"name":"ping"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"ping","response":{"result":"pong"}}}],"role":"user"}]`)
}

func TestPlanReActPlanner(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		&model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{
			{Text: "/*PLANNING*/\n1. Use the calculator.\n"},
			{Text: "/*ACTION*/\n"},
			{FunctionCall: fcall("calculator", map[string]any{"a": 2, "b": 3})},
		}}},
		text("/*REASONING*/\nThe calculator said 5.\n/*FINAL_ANSWER*/\nThe sum is 5."),
	)
	calc := newTool(t, "calculator", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return map[string]any{"sum": 5}, nil })
	a := newLlm(t, engine.LlmAgentConfig{Name: "planner_agent", Model: m, Instruction: "Solve tasks.", Planner: planner.PlanReAct{}, Tools: []tool.Tool{calc}})
	r, svc := mustRunner(t, a)
	evs := mustRun(t, r, svc, "s", userText("What is 2 + 3?"), engine.RunConfig{})
	wantEvents(t, "events", evs,
		`{"author":"planner_agent","content":{"parts":[{"text":"\n1. Use the calculator.\n","thought":true},{"text":"\n","thought":true},{"functionCall":{"args":{"a":2,"b":3},"id":"adk-*","name":"calculator"}}],"role":"model"}}`,
		`{"author":"planner_agent","content":{"parts":[{"functionResponse":{"id":"adk-*","name":"calculator","response":{"sum":5}}}],"role":"user"}}`,
		`{"author":"planner_agent","content":{"parts":[{"text":"\nThe calculator said 5.\n","thought":true},{"text":"\nThe sum is 5."}],"role":"model"}}`)
	reqs := m.Requests()
	if got, want := reqs[0].SystemInstructionText(), "Solve tasks.\n\n"+identity("planner_agent")+"\n\n"+planner.PlanReActInstruction; got != want {
		t.Errorf("system instruction:\ngot  %q\nwant %q", got, want)
	}
	// Earlier planning text goes back to the model without the thought flag.
	wantJSON(t, "second request contents", reqs[1].Contents,
		`[{"parts":[{"text":"What is 2 + 3?"}],"role":"user"},{"parts":[{"text":"\n1. Use the calculator.\n"},{"text":"\n"},{"functionCall":{"args":{"a":2,"b":3},"name":"calculator"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"calculator","response":{"sum":5}}}],"role":"user"}]`)
}
