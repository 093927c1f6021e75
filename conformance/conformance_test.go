package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestConformance runs every scenario on adkhost and compares its trace with
// the committed golden (google-adk 2.13). Scenarios listed in
// KNOWN_DIFFS.md are logged, not failed; a listed scenario that now matches
// is reported (t.Log) so the list can be pruned.
func TestConformance(t *testing.T) {
	files, err := ScenarioFiles("scenarios")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	known, err := LoadKnownDiffs("KNOWN_DIFFS.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range files {
		names[strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))] = true
	}
	for name := range known {
		if !names[name] {
			t.Errorf("KNOWN_DIFFS.md lists %q, which is not a scenario", name)
		}
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := CheckFile(f, "golden", CompareOptions{})
			section, listed := known[name]
			switch {
			case o.Passed() && listed && strings.Contains(section, "Flaky"):
				t.Logf("%s matched its golden in this run; KNOWN_DIFFS.md lists it as flaky", name)
			case o.Passed() && listed:
				t.Logf("WARNING: %s now matches its golden but is listed in KNOWN_DIFFS.md; remove it from the list", name)
			case o.Passed():
			case listed:
				t.Logf("known difference (KNOWN_DIFFS.md):\n%s", o.Report())
			default:
				t.Errorf("adkhost differs from google-adk:\n%s", o.Report())
			}
		})
	}
}

// TestRunnerSchemas checks the parts of a trace the Go runner itself
// produces against a trace of the Python runner: the pydantic JSON schemas
// of tool declarations and output-schema models, tool argument defaults
// (callback_log) and final state. It does not depend on engine conformance.
func TestRunnerSchemas(t *testing.T) {
	res, err := RunFile("testdata/runner/runner_schema_coverage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	mustJSON(t, res.Trace, &got)
	data, err := os.ReadFile("testdata/runner/runner_schema_coverage.json")
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, data, &want)
	for _, k := range []string{"callback_log", "final_state", "model_responses_used"} {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: got %v, want %v", k, got[k], want[k])
		}
	}
	wreqs, greqs := want["llm_requests"].([]any), got["llm_requests"].([]any)
	if len(wreqs) != len(greqs) {
		t.Fatalf("%d requests, want %d", len(greqs), len(wreqs))
	}
	for i := range wreqs {
		wr, gr := wreqs[i].(map[string]any), greqs[i].(map[string]any)
		wd, gd := scenarioDecls(wr), scenarioDecls(gr)
		if !reflect.DeepEqual(wd, gd) {
			t.Errorf("llm_requests[%d]: tool declarations\n got %v\nwant %v", i, gd, wd)
		}
		if ws := responseSchema(wr); ws != nil && !reflect.DeepEqual(ws, responseSchema(gr)) {
			t.Errorf("llm_requests[%d]: output schema\n got %v\nwant %v", i, responseSchema(gr), ws)
		}
	}
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// scenarioDecls are a request's declarations of scenario tools (not the
// engine's transfer_to_agent).
func scenarioDecls(req map[string]any) []any {
	var out []any
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		decls, _ := t.(map[string]any)["function_declarations"].([]any)
		for _, d := range decls {
			if d.(map[string]any)["name"] != "transfer_to_agent" {
				out = append(out, d)
			}
		}
	}
	return out
}

// responseSchema is the output schema of a request, wherever it is: the
// Python trace shows the pydantic class, adkhost a JSON schema.
func responseSchema(req map[string]any) any {
	cfg, _ := req["config"].(map[string]any)
	if rs, ok := cfg["response_schema"].(map[string]any); ok {
		if js, ok := rs["json_schema"]; ok {
			return js
		}
		return rs
	}
	return cfg["response_json_schema"]
}

func TestPyJSON(t *testing.T) {
	v := map[string]any{
		"z": []any{int64(1), 2.0, 1e-05, 1e16, 1e15, 0.1, negZero(), 123456789.125, 1.5e-7, map[string]any{}},
		"a": map[string]any{"é": "\u2028<>&\"\\\n\t\x01\x7f", "b": []any{}},
		"n": nil,
		"t": true,
	}
	// json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) in Python.
	want := "{\n  \"a\": {\n    \"b\": [],\n    \"é\": \"\u2028<>&\\\"\\\\\\n\\t\\u0001\x7f\"\n  },\n  \"n\": null,\n  \"t\": true,\n  \"z\": [\n    1,\n    2.0,\n    1e-05,\n    1e+16,\n    1000000000000000.0,\n    0.1,\n    -0.0,\n    123456789.125,\n    1.5e-07,\n    {}\n  ]\n}"
	got, err := pyJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestNormalizeIDs(t *testing.T) {
	in := `"adk-11111111-1111-4111-8111-111111111111" "e-22222222-2222-4222-8222-222222222222" "33333333-3333-4333-8333-333333333333" "44444444-4444-4444-8444-444444444444" "adk-11111111-1111-4111-8111-111111111111" "33333333-3333-4333-8333-333333333333" call_1`
	got := string(normalizeIDs([]byte(in), map[string]bool{"33333333-3333-4333-8333-333333333333": true}))
	want := `"adk-1" "inv-1" "evt-1" "uuid-1" "adk-1" "evt-1" call_1`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestYAMLCoreSchemaAndStrictness(t *testing.T) {
	n, err := parseYAML("x.yaml", []byte("a: yes\nb: 010\nc: 1e3\nd: ~\ne: True\nf: '1'\ng: 0x1F\nh: .5\ni: 2024-01-01\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "yes", "b": int64(10), "c": 1000.0, "d": nil, "e": true, "f": "1", "g": "0x1F", "h": 0.5, "i": "2024-01-01"}
	if got := n.value(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	src := "name: bad\nagent:\n  name: a\n  instrution: typo\nturns: [hi]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadScenario(path)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:4:") || !strings.Contains(err.Error(), `"instrution"`) {
		t.Errorf("unknown key: got error %v, want one naming bad.yaml:4 and the key", err)
	}
}

func TestFieldTitle(t *testing.T) {
	for in, want := range map[string]string{"city": "City", "agent_name": "Agent Name", "x2y_value": "X2Y Value", "record_id": "Record Id"} {
		if got := fieldTitle(in); got != want {
			t.Errorf("fieldTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareReportsFirstDifference(t *testing.T) {
	a := []byte("{\n  \"a\": 1,\n  \"b\": [\n    \"x\"\n  ]\n}\n")
	b := []byte("{\n  \"a\": 1,\n  \"b\": [\n    \"y\"\n  ]\n}\n")
	d := Compare(a, b, CompareOptions{})
	if d == nil || d.Path != "b[0]" || d.Expected != `"x"` || d.Got != `"y"` || !strings.Contains(d.Context, `>     4     "y"`) {
		t.Errorf("got %+v", d)
	}
	if Compare(a, a, CompareOptions{}) != nil {
		t.Error("equal texts differ")
	}
}
