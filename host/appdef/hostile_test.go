package appdef_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
)

// loadErr loads files and returns the error, the time it took and the
// bytes it allocated.
func loadErr(t *testing.T, fs map[string][]byte) (error, time.Duration, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	app, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, noModules())
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if app != nil {
		app.Close(context.Background())
	}
	return err, took, after.TotalAlloc - before.TotalAlloc
}

// TestHostileDefinitions: definitions built to make the loader spend
// memory or time are refused cheaply, with a located error.
func TestHostileDefinitions(t *testing.T) {
	fanOut := map[string][]byte{}
	const depth = 25
	for i := range depth {
		name := fmt.Sprintf("f%d.yaml", i)
		if i == 0 {
			name = "root_agent.yaml"
		}
		body := fmt.Sprintf("agent_class: SequentialAgent\nname: a%d\n", i)
		if i < depth-1 {
			body += fmt.Sprintf("sub_agents:\n  - config_path: f%d.yaml\n  - config_path: f%d.yaml\n", i+1, i+1)
		}
		fanOut[name] = []byte(body)
	}
	aliasChain := "name: a\nmodel: m\ninstruction: x\ngenerate_content_config:\n  labels:\n    a0: &a0 [x, x]\n"
	for i := 1; i < 40; i++ {
		aliasChain += fmt.Sprintf("    a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	manyAliases := "name: a\nmodel: m\ninstruction: &i x\ndescription: [" + strings.Repeat("*i, ", 150) + "*i]\n"
	// A chain of 34 agents, each the sub-agent (or agent tool) of the last.
	deep := map[string][]byte{}
	for i := range 34 {
		name := fmt.Sprintf("d%d.yaml", i)
		if i == 0 {
			name = "root_agent.yaml"
		}
		body := fmt.Sprintf("name: d%d\nmodel: m\ninstruction: x\n", i)
		switch {
		case i == 33:
		case i%2 == 0:
			body += fmt.Sprintf("sub_agents:\n  - config_path: d%d.yaml\n", i+1)
		default:
			body += fmt.Sprintf("tools:\n  - {name: AgentTool, args: {agent: {config_path: d%d.yaml}}}\n", i+1)
		}
		deep[name] = []byte(body)
	}
	for _, tc := range []struct {
		name string
		fs   map[string][]byte
		want string
	}{
		{"flow nesting of 25,000 levels", map[string][]byte{"root_agent.yaml": []byte("x: " + strings.Repeat("[", 25000) + strings.Repeat("]", 25000) + "\n")},
			"root_agent.yaml:1:1: YAML nests too deep"},
		{"block sequences nested on one line", map[string][]byte{"root_agent.yaml": []byte("x:\n  " + strings.Repeat("- ", 100000) + "y\n")},
			"root_agent.yaml:2:1: YAML nests too deep"},
		{"mappings in flow, 100,000 levels", map[string][]byte{"root_agent.yaml": []byte("x: " + strings.Repeat("{a: ", 100000) + "1" + strings.Repeat("}", 100000) + "\n")},
			"YAML nests too deep"},
		{"config_path fan-out of depth 25", fanOut,
			"f2.yaml is already the config of another agent"},
		{"aliases of aliases", map[string][]byte{"root_agent.yaml": []byte(aliasChain)},
			"aliases may not nest"},
		{"too many aliases", map[string][]byte{"root_agent.yaml": []byte(manyAliases)},
			"too many YAML aliases (151; at most 100)"},
		// Every event of an agent carries its name, and each event's node
		// path its ancestors' names: a 1 MiB name made each a megabyte.
		{"agent name of 100,000 bytes", map[string][]byte{"root_agent.yaml": []byte("name: " + strings.Repeat("a", 100000) + "\nmodel: m\ninstruction: x\n")},
			"root_agent.yaml:1:7: name: agent name of 100000 bytes, over the limit of 128"},
		{"model name of 100,000 bytes", map[string][]byte{"root_agent.yaml": []byte("name: a\nmodel: openai/" + strings.Repeat("m", 100000) + "\ninstruction: x\n")},
			"root_agent.yaml:2:8: model: model name of 100007 bytes, over the limit of 256"},
		{"agents 33 levels deep", deep,
			"d32.yaml:5:"},
		// Not hostile, but misread: goccy/go-yaml gives key "user" here,
		// YAML 1.2 and google-adk's PyYAML the key "user:plan".
		{"prefixed key in a flow mapping", map[string][]byte{"root_agent.yaml": []byte("name: a\nmodel: m\ninstruction: x\ngenerate_content_config: {labels: {user:plan: basic}}\n")},
			`root_agent.yaml:4:36: a flow mapping key holds ':' followed by a non-space; quote the key (e.g. {"user:plan": basic})`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, took, alloc := loadErr(t, tc.fs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			var de *appdef.Error
			if !errors.As(err, &de) || de.File == "" {
				t.Errorf("error %v is not located", err)
			}
			if len(err.Error()) > 64<<10 {
				t.Errorf("the error is %d bytes", len(err.Error()))
			}
			// Generous bounds: the attacks cost seconds and gigabytes.
			if alloc > 64<<20 {
				t.Errorf("the load allocated %d MiB", alloc>>20)
			}
			t.Logf("refused in %s, %d KiB allocated", took, alloc>>10)
		})
	}
}

// TestModelWithoutBackend: a definition whose model this server has no
// backend for loads with a located warning (google-adk loads such a config
// and fails at the model call), its model calls fail with ValueError; with
// StrictModels it is refused as before.
func TestModelWithoutBackend(t *testing.T) {
	fs := map[string][]byte{"root_agent.yaml": []byte("name: a\nmodel: gemini-2.5-flash\ninstruction: x\n")}
	env := appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}}
	app, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer app.Close(context.Background())
	if len(app.Warnings) != 1 || !strings.Contains(app.Warnings[0], `root_agent.yaml:2:8: model: model "gemini-2.5-flash" has no backend on this server; the app loads, and its model calls fail`) {
		t.Errorf("warnings = %q", app.Warnings)
	}
	env.StrictModels = true
	_, err = appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, env)
	if !errors.Is(err, appdef.ErrNoBackend) {
		t.Errorf("strict: err = %v, want ErrNoBackend", err)
	}
}

// TestAgentToolConfig: google-adk's AgentTool config shape loads: the
// agent named by config_path runs as a tool, in a tree of its own, and its
// answer is the function response.
func TestAgentToolConfig(t *testing.T) {
	fs := map[string][]byte{
		"root_agent.yaml": []byte(`name: root_agent
model: scripted
instruction: Ask the researcher.
tools:
  - name: AgentTool
    args:
      agent:
        config_path: research_agent.yaml
      skip_summarization: false
`),
		"research_agent.yaml": []byte("name: research_agent\nmodel: scripted\ndescription: Researches.\ninstruction: Research.\n"),
		"scripted_model.yaml": []byte(`rules:
  - when: {instruction_contains: Research.}
    respond: {text: 'found: {{text}}'}
  - when: {function_response: research_agent}
    respond: {text: 'root got {{response.result}}'}
  - respond: {function_calls: [{name: research_agent, args: {request: '{{text}}'}}]}
`),
	}
	app := load(t, "app", fs, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: app.Root, Sessions: session.NewInMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for ev, err := range r.Run(context.Background(), "u", "s", genai.NewContentFromText("cats", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ev.Content.Parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
			if fr := p.FunctionResponse; fr != nil {
				texts = append(texts, fmt.Sprint(fr.Response["result"]))
			}
		}
	}
	if got := strings.Join(texts, " | "); got != "found: cats | root got found: cats" {
		t.Errorf("turn: %s", got)
	}
	// The same file as a sub-agent too is refused: one agent per file.
	fs["root_agent.yaml"] = append(fs["root_agent.yaml"], []byte("sub_agents:\n  - config_path: research_agent.yaml\n")...)
	_, err = appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	if err == nil || !strings.Contains(err.Error(), "research_agent.yaml is already the config of another agent") {
		t.Errorf("agent both tool and sub-agent: %v", err)
	}
}

// TestVertexAiSearchToolConfig: google-adk's VertexAiSearchTool config
// shape loads and puts the retrieval tool in the request; without a data
// store or engine it is refused with google-adk's message.
func TestVertexAiSearchToolConfig(t *testing.T) {
	fs := map[string][]byte{"root_agent.yaml": []byte(`name: a
model: scripted
instruction: Search.
tools:
  - name: VertexAiSearchTool
    args: {data_store_id: projects/p/locations/global/collections/default_collection/dataStores/ds, max_results: 3}
`), "scripted_model.yaml": []byte("rules:\n  - respond: {text: ok}\n")}
	app := load(t, "app", fs, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	// The scripted model is not Gemini: the tool is in place, and refuses
	// it as google-adk does.
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: app.Root, Sessions: session.NewInMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	for _, err := range r.Run(context.Background(), "u", "s", genai.NewContentFromText("x", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			runErr = err
		}
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "Vertex AI search tool is not supported for model scripted") {
		t.Errorf("run error = %v", runErr)
	}
	fs["root_agent.yaml"] = []byte("name: a\nmodel: scripted\ninstruction: x\ntools:\n  - name: VertexAiSearchTool\n    args: {filter: x}\n")
	_, err = appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	if err == nil || !strings.Contains(err.Error(), "root_agent.yaml:6:11: tools[0].args: VertexAiSearchTool: Either data_store_id or search_engine_id must be specified.") {
		t.Errorf("err = %v", err)
	}
}

// TestExampleToolConfig: google-adk's ExampleTool config shape loads with
// its examples (integers kept apart from floats, as Python prints them);
// a Python provider reference and malformed examples are refused.
func TestExampleToolConfig(t *testing.T) {
	fs := map[string][]byte{"root_agent.yaml": []byte(`name: a
model: scripted
instruction: Help.
tools:
  - name: google.adk.tools.ExampleTool
    args:
      examples:
        - input: {role: user, parts: [{text: Add 2 and 0.5.}]}
          output:
            - {role: model, parts: [{function_call: {name: add, args: {b: 0.5, a: 2, o: {y: 1, x: 2}}}}]}
            - {role: user, parts: [{function_response: {name: add, response: {result: 2.5, n: 1}}}]}
            - {role: model, parts: [{text: It is 2.5.}]}
`), "scripted_model.yaml": []byte("rules:\n  - respond: {text: ok}\n")}
	app := load(t, "app", fs, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	tools := app.Root.(*engine.LlmAgent).Config().Tools
	et, ok := tools[0].(*engine.ExampleTool)
	if len(tools) != 1 || !ok || len(et.Examples) != 1 || len(et.Examples[0].Output) != 3 {
		t.Fatalf("tools = %#v", tools)
	}
	si := engine.ExamplesInstruction(et.Examples, "scripted")
	// Python keeps the keys in the order written, and prints 2 as 2.
	for _, want := range []string{"[user]\nAdd 2 and 0.5.\n[model]\n```tool_code\nadd(b=0.5, a=2, o={'y': 1, 'x': 2})\n```\n", "'response': {'result': 2.5, 'n': 1}}", "[model]\nIt is 2.5.\nEnd example"} {
		if !strings.Contains(si, want) {
			t.Errorf("instruction lacks %q:\n%s", want, si)
		}
	}
	for yaml, want := range map[string]string{
		"  - name: ExampleTool\n": "tools[0]: ExampleTool needs args",
		"  - name: ExampleTool\n    args: {examples: my.module.provider}\n":                         "not supported: Python code references (my.module.provider)",
		"  - name: ExampleTool\n    args: {examples: [{output: []}]}\n":                             "an example needs input",
		"  - name: ExampleTool\n    args: {examples: [{input: {role: user, parts: [{txt: x}]}}]}\n": `unknown field "txt" of genai Part`,
		"  - name: ExampleTool\n    args: {exampels: []}\n":                                         `unknown field "exampels" (did you mean examples?)`,
	} {
		fs["root_agent.yaml"] = []byte("name: a\nmodel: scripted\ninstruction: x\ntools:\n" + yaml)
		_, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", yaml, err, want)
		}
	}
}

// TestCodeExecutorConfig: code_executor names google-adk's
// BuiltInCodeExecutor; on the scripted model (not Gemini) the run fails
// with google-adk's ValueError, as the request is built. Executors that
// would run code on the host are refused.
func TestCodeExecutorConfig(t *testing.T) {
	fs := map[string][]byte{"root_agent.yaml": []byte(`name: a
model: scripted
instruction: Compute.
code_executor: {name: google.adk.code_executors.BuiltInCodeExecutor}
`), "scripted_model.yaml": []byte("rules:\n  - respond: {text: ok}\n")}
	app := load(t, "app", fs, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
	if app.Root.(*engine.LlmAgent).Config().CodeExecutor == nil {
		t.Fatal("no code executor")
	}
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: app.Root, Sessions: session.NewInMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	for _, err := range r.Run(context.Background(), "u", "s", genai.NewContentFromText("x", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			runErr = err
		}
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "Gemini code execution tool is not supported for model scripted") {
		t.Errorf("run error = %v", runErr)
	}
	for yaml, want := range map[string]string{
		"code_executor: BuiltInCodeExecutor\n": "",
		"code_executor: null\n":                "",
		"code_executor: {name: google.adk.code_executors.UnsafeLocalCodeExecutor}\n":     "root_agent.yaml:4:16: code_executor: code executor \"google.adk.code_executors.UnsafeLocalCodeExecutor\" is not supported: adkhost runs no code on the host",
		"code_executor: {name: BuiltInCodeExecutor, args: {optimize_data_file: true}}\n": "BuiltInCodeExecutor takes no args",
		"code_executor: [BuiltInCodeExecutor]\n":                                         "want {name: BuiltInCodeExecutor}, got a list",
	} {
		fs["root_agent.yaml"] = []byte("name: a\nmodel: scripted\ninstruction: x\n" + yaml)
		_, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", yaml, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err = %v, want %q", yaml, err, want)
		}
	}
}
