package appdef_test

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/gemini"
	"github.com/adkhost/adkhost/host/appdef"
)

// Plain google-adk Agent Config files, shaped like the examples of
// google-adk's documentation, load unchanged. (Each was also checked to
// load in google-adk 2.13's config_agent_utils.from_config.)
func TestPlainADKConfigs(t *testing.T) {
	fs := files(
		"root_agent.yaml", `
# yaml-language-server: $schema=https://raw.githubusercontent.com/google/adk-python/refs/heads/main/src/google/adk/agents/config_schemas/AgentConfig.json
agent_class: SequentialAgent
name: IterativeWritingPipeline
description: Writes a short text, then refines it in a loop.
sub_agents:
  - config_path: writer_agents/initial_writer_agent.yaml
  - config_path: writer_agents/refinement_loop.yaml
`,
		"writer_agents/initial_writer_agent.yaml", `
name: InitialWriterAgent
model: gemini-2.5-flash
description: Writes the first draft.
instruction: |
  Write a 1-2 sentence draft about the user's topic.
  Output only the draft.
static_instruction: You are a concise writer.
output_key: current_document
generate_content_config:
  temperature: 0.2
  maxOutputTokens: 200
  thinking_config: {thinking_budget: 0}
  safety_settings:
    - category: HARM_CATEGORY_HATE_SPEECH
      threshold: BLOCK_ONLY_HIGH
`,
		"writer_agents/refinement_loop.yaml", `
agent_class: LoopAgent
name: RefinementLoop
description: Critiques and refines until the critic is satisfied.
max_iterations: 5
sub_agents:
  - config_path: critic_agent.yaml
  - config_path: refiner_agent.yaml
`,
		"writer_agents/critic_agent.yaml", `
agent_class: LlmAgent
name: CriticAgent
model: gemini-2.5-flash
description: Reviews the draft.
instruction: 'Review this document: {current_document}. Say "No major issues found." when it is good.'
output_key: criticism
include_contents: none
`,
		"writer_agents/refiner_agent.yaml", `
name: RefinerAgent
model: gemini-2.5-flash
description: Refines the draft, or ends the loop.
instruction: If the criticism is "No major issues found.", call exit_loop; otherwise rewrite {current_document}.
output_key: current_document
disallow_transfer_to_parent: true
disallow_transfer_to_peers: true
tools:
  - name: exit_loop
`)
	// A Gemini backend with a dummy key: models are made, never called.
	reg := &appdef.ModelRegistry{Gemini: &gemini.Config{APIKey: "test-key", Backend: genai.BackendGeminiAPI}}
	app := load(t, "writer", fs, appdef.Env{Models: reg})

	root := app.Root.Info()
	if _, ok := app.Root.(*engine.SequentialAgent); !ok || root.Name != "IterativeWritingPipeline" || len(root.SubAgents) != 2 {
		t.Fatalf("root = %T %q with %d sub-agents", app.Root, root.Name, len(root.SubAgents))
	}
	writer := root.SubAgents[0].(*engine.LlmAgent).Config()
	if writer.Model == nil || writer.Model.Name() != "gemini-2.5-flash" {
		t.Errorf("writer model = %v", writer.Model)
	}
	if writer.OutputKey != "current_document" || writer.Instruction != "Write a 1-2 sentence draft about the user's topic.\nOutput only the draft.\n" {
		t.Errorf("writer output_key %q, instruction %q", writer.OutputKey, writer.Instruction)
	}
	if si := writer.StaticInstruction; si == nil || len(si.Parts) != 1 || si.Parts[0].Text != "You are a concise writer." {
		t.Errorf("static instruction = %+v", si)
	}
	gcc := writer.GenerateContentConfig
	switch {
	case gcc == nil:
		t.Fatal("no generate_content_config")
	case gcc.Temperature == nil || *gcc.Temperature != 0.2:
		t.Errorf("temperature = %v", gcc.Temperature)
	case gcc.MaxOutputTokens != 200:
		t.Errorf("max output tokens = %d (camelCase key)", gcc.MaxOutputTokens)
	case gcc.ThinkingConfig == nil || gcc.ThinkingConfig.ThinkingBudget == nil || *gcc.ThinkingConfig.ThinkingBudget != 0:
		t.Errorf("thinking config = %+v (snake_case keys)", gcc.ThinkingConfig)
	case len(gcc.SafetySettings) != 1 || gcc.SafetySettings[0].Category != genai.HarmCategoryHateSpeech || gcc.SafetySettings[0].Threshold != genai.HarmBlockThresholdBlockOnlyHigh:
		t.Errorf("safety settings = %+v", gcc.SafetySettings)
	}
	loop, ok := root.SubAgents[1].(*engine.LoopAgent)
	if !ok || loop.MaxIterations == nil || *loop.MaxIterations != 5 || len(loop.SubAgents) != 2 {
		t.Fatalf("loop = %#v", root.SubAgents[1])
	}
	critic := loop.SubAgents[0].(*engine.LlmAgent).Config()
	if critic.IncludeContents != engine.IncludeContentsNone {
		t.Errorf("critic include_contents = %q", critic.IncludeContents)
	}
	refiner := loop.SubAgents[1].(*engine.LlmAgent).Config()
	if !refiner.DisallowTransferToParent || !refiner.DisallowTransferToPeers {
		t.Errorf("refiner transfer flags = %v, %v", refiner.DisallowTransferToParent, refiner.DisallowTransferToPeers)
	}
	if len(refiner.Tools) != 1 || refiner.Tools[0].Name() != "exit_loop" {
		t.Errorf("refiner tools = %v", refiner.Tools)
	}
	if writer.Model != critic.Model {
		t.Errorf("the same model name resolved twice: %p, %p", writer.Model, critic.Model)
	}
}

// The smallest google-adk config, at a Root path other than the default,
// with a sub-agent inheriting its model and using adkhost's output_schema
// extension (a JSON Schema, where google-adk takes a Python class).
func TestMinimalConfigAndInheritedModel(t *testing.T) {
	fs := files(
		"agent.yaml", `
name: assistant_agent
model: gemini-2.5-flash
description: A helper agent that can answer users' questions.
instruction: You are an agent to help answer users' various questions.
sub_agents:
  - config_path: helper.yaml
`,
		"helper.yaml", `
name: helper
description: Helps.
instruction: Help.
output_schema:
  type: object
  properties: {answer: {type: string}, amount: {type: number}}
  required: [answer]
`)
	models := &stubModels{}
	app, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: fs, Root: "./agent.yaml"}, appdef.Env{Models: models})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(t.Context())
	helper := app.Root.Info().SubAgents[0].(*engine.LlmAgent).Config()
	if helper.Model != nil {
		t.Errorf("helper model = %v, want nil (inherited by the engine)", helper.Model)
	}
	if req, _ := helper.OutputSchema["required"].([]any); len(req) != 1 || req[0] != "answer" {
		t.Errorf("output schema = %v", helper.OutputSchema)
	}
	// The order the properties are written in is the order of an answer's
	// fields (pydantic's), which the map lost.
	if want := `{"type":0,"properties":{"answer":0,"amount":0},"required":0}`; string(helper.OutputSchemaKeyOrder) != want {
		t.Errorf("output schema key order = %s, want %s", helper.OutputSchemaKeyOrder, want)
	}
	if len(models.names) != 1 || models.names[0] != "gemini-2.5-flash" {
		t.Errorf("models resolved: %v", models.names)
	}
}

// The adkhost block carries the runner settings google-adk keeps on its App
// object: resumability and event compaction.
func TestRunnerSettings(t *testing.T) {
	fs := files("root_agent.yaml", `
name: a
model: gemini-2.5-flash
instruction: x
adkhost:
  resumable: true
  compaction: {compaction_interval: 3, overlap_size: 0, token_threshold: 5000, event_retention_size: 10}
`)
	app, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: fs}, appdef.Env{Models: &stubModels{}})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(t.Context())
	c := app.Compaction
	if !app.Resumable || c == nil || *c.CompactionInterval != 3 || *c.OverlapSize != 0 || *c.TokenThreshold != 5000 || *c.EventRetentionSize != 10 {
		t.Fatalf("resumable %v, compaction %+v", app.Resumable, c)
	}
	plain, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: files("root_agent.yaml", "name: a\nmodel: m\ninstruction: x\n")}, appdef.Env{Models: &stubModels{}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(t.Context())
	if plain.Resumable || plain.Compaction != nil {
		t.Errorf("a plain google-adk config: resumable %v, compaction %+v; want neither", plain.Resumable, plain.Compaction)
	}
}

// google-adk's memory built-ins, by short name or import path.
func TestMemoryTools(t *testing.T) {
	fs := files("root_agent.yaml", `
name: a
model: gemini-2.5-flash
instruction: x
tools:
  - name: load_memory
  - name: google.adk.tools.preload_memory_tool.preload_memory_tool
`)
	app, err := appdef.Load(t.Context(), appdef.Source{Name: "a", Files: fs}, appdef.Env{Models: &stubModels{}})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(t.Context())
	var names []string
	for _, tl := range app.Root.(*engine.LlmAgent).Config().Tools {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "load_memory,preload_memory" {
		t.Errorf("tools %v, want load_memory and preload_memory", names)
	}
}

// max_iterations is google-adk's Optional[int]: left out, the loop has no
// bound; 0 or less runs no round ("A value of zero or less runs the
// sub-agents no times at all"), where 0 meant no bound here and a negative
// value was refused.
func TestLoopMaxIterations(t *testing.T) {
	for _, tc := range []struct {
		line string
		want *int
	}{
		{"", nil},
		{"max_iterations: null\n", nil},
		{"max_iterations: 0\n", new(0)},
		{"max_iterations: -2\n", new(-2)},
		{"max_iterations: 4\n", new(4)},
	} {
		fs := files("root_agent.yaml", "agent_class: LoopAgent\nname: loop\n"+tc.line+"sub_agents:\n  - config_path: a.yaml\n",
			"a.yaml", "name: a\nmodel: scripted\ninstruction: x\n", "scripted_model.yaml", "- text: hi\n")
		loop := load(t, "a", fs, noModules()).Root.(*engine.LoopAgent)
		if (loop.MaxIterations == nil) != (tc.want == nil) || tc.want != nil && *loop.MaxIterations != *tc.want {
			t.Errorf("%q: MaxIterations = %v, want %v", tc.line, loop.MaxIterations, tc.want)
		}
	}
	err, _, _ := loadErr(t, files("root_agent.yaml", "agent_class: LoopAgent\nname: loop\nmax_iterations: many\n"))
	if err == nil || !strings.Contains(err.Error(), "max_iterations: want an integer") {
		t.Errorf("err = %v", err)
	}
}
