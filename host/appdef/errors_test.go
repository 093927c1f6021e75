package appdef_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/sandbox"
)

// wantErr is one expected error: where, which field, and a piece of its
// message.
type wantErr struct {
	file         string
	line, column int
	field        string
	msg          string
}

func (w wantErr) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: ...%s...", w.file, w.line, w.column, w.field, w.msg)
}

func (w wantErr) matches(e *appdef.Error) bool {
	return e.File == w.file && e.Line == w.line && e.Column == w.column && e.Field == w.field && strings.Contains(e.Msg, w.msg)
}

const root = "root_agent.yaml"

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string][]byte
		modules bool // an Env with the test module; else stub models only
		want    []wantErr
		is      error // errors.Is target, when set
	}{
		{
			name: "unknown field with a suggestion, and the required field it misspells",
			files: files(root, `
name: a
model: gemini-2.5-flash
instructions: hi
`),
			want: []wantErr{
				{root, 3, 1, "instructions", "unknown field \"instructions\" (did you mean instruction?)"},
				{root, 1, 1, "instruction", "missing required field instruction"},
			},
		},
		{
			name:  "wrong type",
			files: files(root, "name: [a, b]\nmodel: m\ninstruction: x\n"),
			want:  []wantErr{{root, 1, 7, "name", "want a string, got a list"}},
		},
		{
			name:  "missing name",
			files: files(root, "model: m\ninstruction: x\n"),
			want:  []wantErr{{root, 1, 1, "name", "missing required field name"}},
		},
		{
			name:  "invalid name",
			files: files(root, "name: my-agent\nmodel: m\ninstruction: x\n"),
			want:  []wantErr{{root, 1, 7, "name", "invalid agent name \"my-agent\""}},
		},
		{
			name:  "unknown agent_class",
			files: files(root, "agent_class: SequentalAgent\nname: a\n"),
			want:  []wantErr{{root, 1, 14, "agent_class", "unknown agent_class \"SequentalAgent\"; supported: LlmAgent (or Agent), SequentialAgent, ParallelAgent, LoopAgent (did you mean SequentialAgent?)"}},
		},
		{
			name:  "a field of another class",
			files: files(root, "name: a\nmodel: m\ninstruction: x\nmax_iterations: 3\n"),
			want:  []wantErr{{root, 4, 1, "max_iterations", "it is not a field of a LlmAgent"}},
		},
		{
			name: "config_path to a missing file",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - config_path: agents/missing.yaml
`),
			want: []wantErr{{root, 4, 18, "sub_agents[0].config_path", "no such file in the definition: agents/missing.yaml"}},
		},
		{
			name: "config_path escaping the bundle, and absolute",
			files: files(root, `
agent_class: ParallelAgent
name: par
sub_agents:
  - config_path: ../outside.yaml
  - {config_path: /etc/agent.yaml}
`, "outside.yaml", "name: o\n"),
			want: []wantErr{
				{root, 4, 18, "sub_agents[0].config_path", "leads outside the definition's files"},
				{root, 5, 19, "sub_agents[1].config_path", "is absolute"},
			},
		},
		{
			name: "config_path relative to the referencing file",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - config_path: team/lead.yaml
`, "team/lead.yaml", `
agent_class: LoopAgent
name: lead
sub_agents:
  - config_path: lead.yaml
  - config_path: ../root_agent.yaml
`),
			want: []wantErr{
				{"team/lead.yaml", 4, 18, "sub_agents[0].config_path", "config_path cycle: team/lead.yaml -> team/lead.yaml"},
				{"team/lead.yaml", 5, 18, "sub_agents[1].config_path", "config_path cycle: root_agent.yaml -> team/lead.yaml -> root_agent.yaml"},
			},
		},
		{
			name: "duplicate agent names across files",
			files: files(root, `
agent_class: SequentialAgent
name: dup
sub_agents:
  - config_path: a.yaml
  - config_path: a.yaml
`, "a.yaml", "name: dup\nmodel: m\ninstruction: x\n"),
			want: []wantErr{
				{"a.yaml", 1, 7, "name", "duplicate agent name \"dup\", already used at root_agent.yaml:2:7"},
				// The second reference to a.yaml is refused as such: each
				// config file makes one agent.
				{"root_agent.yaml", 5, 18, "sub_agents[1].config_path", "a.yaml is already the config of another agent (referenced at root_agent.yaml:4): an agent config makes one agent, and an agent has one parent; copy the file to make a second agent"},
			},
		},
		{
			name: "sub-agent by Python code reference",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - code: my_library.agents.helper
`),
			want: []wantErr{{root, 4, 11, "sub_agents[0].code", "not supported: Python code references"}},
		},
		{
			name: "unsupported built-in tool and Python tool",
			files: files(root, `
name: a
model: m
instruction: x
tools:
  - name: google_serch
  - name: my_tools.lookup
  - name: exit_loop
    args: {x: 1}
`),
			want: []wantErr{
				{root, 5, 11, "tools[0].name", "unknown built-in tool \"google_serch\" (did you mean google_search?); supported: the built-ins exit_loop, load_memory, preload_memory, load_artifacts, get_user_choice, transfer_to_agent, google_search"},
				{root, 6, 11, "tools[1].name", "not supported: Python code references (my_tools.lookup)"},
				{root, 8, 5, "tools[2].args", "exit_loop takes no args"},
			},
		},
		{
			name: "Python callback references",
			files: files(root, `
name: a
model: m
instruction: x
before_model_callbacks:
  - name: my_library.callbacks.before_model
after_agent_callbacks:
  - my_library.callbacks.after_agent
`),
			want: []wantErr{
				{root, 5, 11, "before_model_callbacks[0].name", "not supported: Python code references (my_library.callbacks.before_model); a callback is a Wasm module's hook: {module: <ref>, hook: before_model}"},
				{root, 7, 5, "after_agent_callbacks[0]", "not supported: Python code references (my_library.callbacks.after_agent)"},
			},
		},
		{
			name: "callback hook that cannot serve its list",
			files: files(root, `
name: a
model: m
instruction: x
before_model_callbacks:
  - {module: weather, hook: after_model}
`),
			want: []wantErr{{root, 5, 29, "before_model_callbacks[0].hook", "hook \"after_model\" cannot serve this list"}},
		},
		{
			name:  "model no backend serves",
			files: files(root, "name: a\nmodel: bad-model\ninstruction: x\n"),
			want:  []wantErr{{root, 2, 8, "model", "model \"bad-model\": no backend for bad-model"}},
		},
		{
			name: "no model on the agent or its ancestors",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - config_path: a.yaml
`, "a.yaml", "name: a\ninstruction: x\n"),
			want: []wantErr{{"a.yaml", 1, 1, "model", "no model: set model on this agent or on an ancestor LlmAgent"}},
		},
		{
			name:  "malformed YAML",
			files: files(root, "name: a\ninstruction: [unclosed\nmodel: m\n"),
			want:  []wantErr{{root, 3, 1, "", "invalid YAML: ',' or ']' must be specified"}},
		},
		{
			name: "malformed YAML in a sub-agent's file",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - config_path: a.yaml
`, "a.yaml", "name: a\n  bad indent: x\n"),
			want: []wantErr{{"a.yaml", 1, 7, "", "invalid YAML: mapping value is not allowed in this context"}},
		},
		{
			name:  "missing root file",
			files: files("other.yaml", "name: a\n"),
			want:  []wantErr{{root, 0, 0, "", "no such file in the definition"}},
		},
		{
			name: "generate_content_config fields",
			files: files(root, `
name: a
model: m
instruction: x
generate_content_config:
  temprature: 0.2
  max_output_tokens: lots
  thinking_config: {thinking_budgett: 10}
`),
			want: []wantErr{
				{root, 5, 3, "generate_content_config.temprature", "unknown field \"temprature\" of genai GenerateContentConfig (did you mean temperature?)"},
				{root, 6, 22, "generate_content_config.max_output_tokens", "want an integer, got a string"},
				{root, 7, 21, "generate_content_config.thinking_config.thinking_budgett", "(did you mean thinking_budget?)"},
			},
		},
		{
			name: "generate_content_config fields google-adk puts elsewhere",
			files: files(root, `
name: a
model: m
instruction: x
generate_content_config:
  systemInstruction: be brief
`),
			want: []wantErr{{root, 5, 3, "generate_content_config.systemInstruction", "goes in the agent's instruction"}},
		},
		{
			name: "bad include_contents and output_schema reference",
			files: files(root, `
name: a
model: m
instruction: x
include_contents: some
output_schema: {name: my_lib.Answer}
`),
			want: []wantErr{
				{root, 4, 19, "include_contents", `include_contents is "default" or "none", not "some"`},
				{root, 5, 16, "output_schema", "not supported: Python code references (my_lib.Answer)"},
			},
		},
		{
			name: "adkhost block outside the root file",
			files: files(root, `
agent_class: SequentialAgent
name: seq
sub_agents:
  - config_path: a.yaml
`, "a.yaml", "name: a\nmodel: m\ninstruction: x\nadkhost: {plugins: []}\n"),
			want: []wantErr{{"a.yaml", 4, 1, "adkhost", "the adkhost block belongs in the root agent's file, root_agent.yaml"}},
		},
		{
			name: "runner settings in the adkhost block",
			files: files(root, `
name: a
model: m
instruction: x
adkhost:
  resumable: maybe
  compaction: {compaction_interval: 0, overlap: 1, token_threshold: 100}
`),
			want: []wantErr{
				{root, 5, 14, "adkhost.resumable", "want true or false, got a string"},
				{root, 6, 37, "adkhost.compaction.compaction_interval", "want a positive integer, got 0"},
				{root, 6, 40, "adkhost.compaction.overlap", "unknown compaction setting \"overlap\"; settings: compaction_interval, overlap_size, token_threshold, event_retention_size"},
			},
		},
		{
			name:  "compaction settings that do not go together",
			files: files(root, "name: a\nmodel: m\ninstruction: x\nadkhost:\n  compaction: {compaction_interval: 2, token_threshold: 100}\n"),
			want:  []wantErr{{root, 5, 15, "adkhost.compaction", "token_threshold and event_retention_size must be set together"}},
		},
		{
			name: "adkhost block fields",
			files: files(root, `
name: a
model: m
instruction: x
adkhost:
  plugin: []
  modules:
    weather:
      grants: {state: yes, dirs: [/]}
      limits: {timeout: forever, memory: 10}
`),
			want: []wantErr{
				{root, 5, 3, "adkhost.plugin", "unknown field \"plugin\" (did you mean plugins?)"},
				{root, 8, 23, "adkhost.modules.weather.grants.state", "want true or false, got a string"},
				{root, 8, 28, "adkhost.modules.weather.grants.dirs", "host directories cannot be granted"},
				{root, 9, 25, "adkhost.modules.weather.limits.timeout", "want a positive duration"},
				{root, 9, 34, "adkhost.modules.weather.limits.memory", "unknown limit \"memory\"; limits: memory_pages, timeout"},
			},
		},
		{
			name: "memory grant",
			files: files(root, `
name: a
model: m
instruction: x
adkhost:
  modules:
    weather:
      grants: {memory: 1, memroy: true}
`),
			want: []wantErr{
				{root, 7, 24, "adkhost.modules.weather.grants.memory", "want true or false"},
				{root, 7, 27, "adkhost.modules.weather.grants.memroy", `unknown grant "memroy" (did you mean memory?); grants: state, actions, artifacts, memory, config, http, env, clock, random`},
			},
		},
		{
			name:    "unknown module",
			modules: true,
			files: files(root, `
name: a
model: scripted
instruction: x
tools:
  - module: wether
`, "scripted_model.yaml", "rules: [{respond: {text: hi}}]\n"),
			want: []wantErr{{root, 5, 13, "tools[0].module", "unknown module \"wether\": no module \"wether\" in the registry"}},
		},
		{
			name:    "module lacking the tool and the hooks",
			modules: true,
			files: files(root, `
name: a
model: scripted
instruction: x
tools:
  - {module: weather, tool: get_wether}
after_tool_callbacks:
  - {module: weather}
adkhost:
  modules:
    weather: {grants: {state: true}}
`, "scripted_model.yaml", "rules: [{respond: {text: hi}}]\n"),
			want: []wantErr{
				{root, 5, 29, "tools[0].tool", "module \"weather\" (weather) has no tool \"get_wether\" (did you mean get_weather?); its tools: get_weather, get_time"},
				{root, 7, 14, "after_tool_callbacks[0].module", "does not implement hook after_tool; it implements: tool_call, before_model, on_user_message"},
			},
		},
		{
			name:    "module asking for what is not granted",
			modules: true,
			files: files(root, `
name: a
model: scripted
instruction: x
tools:
  - module: weather
`, "scripted_model.yaml", "rules: [{respond: {text: hi}}]\n"),
			want: []wantErr{{root, 5, 13, "tools[0].module", "grant what it asks for under adkhost.modules.weather.grants"}},
			is:   sandbox.ErrNotGranted,
		},
		{
			name:    "two settings for the same module",
			modules: true,
			files: files(root, `
name: a
model: scripted
instruction: x
tools:
  - module: weather
  - module: pinned
adkhost:
  modules:
    weather: {grants: {state: true}}
    pinned: {ref: weather, grants: {state: true, actions: true}}
`, "scripted_model.yaml", "rules: [{respond: {text: hi}}]\n"),
			want: []wantErr{{root, 10, 13, "adkhost.modules.pinned", "module settings \"weather\" and \"pinned\" name the same module"}},
		},
		{
			name:    "the same tool twice",
			modules: true,
			files: files(root, `
name: a
model: scripted
instruction: x
tools:
  - module: weather
  - {module: weather, tool: get_time}
adkhost:
  modules:
    weather: {grants: {state: true}}
`, "scripted_model.yaml", "rules: [{respond: {text: hi}}]\n"),
			want: []wantErr{{root, 6, 5, "tools[1]", "a second tool named \"get_time\" (the first comes from root_agent.yaml:5:5)"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := appdef.Env{Models: &stubModels{}}
			if tc.modules {
				e, _ = env(t)
			}
			app, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: tc.files}, e)
			if err == nil {
				app.Close(context.Background())
				t.Fatalf("Load succeeded, want errors %v", tc.want)
			}
			got := appdef.Errors(err)
			if len(got) == 0 {
				t.Fatalf("error is not an *appdef.Error: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(err, %v) = false; err: %v", tc.is, err)
			}
			unmatched := append([]*appdef.Error(nil), got...)
			for _, w := range tc.want {
				i := indexOf(unmatched, w)
				if i < 0 {
					t.Errorf("missing error %v", w)
					continue
				}
				unmatched = append(unmatched[:i], unmatched[i+1:]...)
			}
			for _, e := range unmatched {
				t.Errorf("unexpected error %q (file %s, line %d, column %d, field %q)", e.Error(), e.File, e.Line, e.Column, e.Field)
			}
			if t.Failed() {
				t.Logf("all errors:\n%s", list(got))
			}
		})
	}
}

func indexOf(errs []*appdef.Error, w wantErr) int {
	for i, e := range errs {
		if w.matches(e) {
			return i
		}
	}
	return -1
}

func list(errs []*appdef.Error) string {
	var lines []string
	for _, e := range errs {
		lines = append(lines, "  "+e.Error())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestErrorFormat(t *testing.T) {
	e := &appdef.Error{File: "a.yaml", Line: 3, Column: 5, Field: "tools[1].module", Msg: "unknown module"}
	if got, want := e.Error(), "a.yaml:3:5: tools[1].module: unknown module"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &appdef.Error{File: "root_agent.yaml", Msg: "no such file"}
	if got, want := e.Error(), "root_agent.yaml: no such file"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
