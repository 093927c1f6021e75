package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

func TestFromYAML(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantName string
		// want holds each step as response JSON, or "error: <text>".
		want []string
	}{
		{
			name: "mapping with every kind of step",
			yaml: `
name: weather-model
responses:
  - text: Hello!
  - thought: The user wants the weather.
    text: Let me check.
    function_calls:
      - name: get_weather
        args: {city: Paris, days: 2, opts: {metric: true}}
        id: call-1
      - name: get_time
  - error: backend unavailable
  - error_code: SAFETY
    error_message: blocked
  - text: Bye.
    finish_reason: STOP
    usage_metadata: {promptTokenCount: 10, candidatesTokenCount: 2}
    custom_metadata: {k: v}
    model_version: v-1
    turn_complete: true
  - content:
      role: model
      parts:
        - functionCall: {name: f, args: {x: 1}}
        - text: after the call
`,
			wantName: "weather-model",
			want: []string{
				`{"content":{"role":"model","parts":[{"text":"Hello!"}]}}`,
				`{"content":{"role":"model","parts":[
					{"text":"The user wants the weather.","thought":true},
					{"text":"Let me check."},
					{"functionCall":{"id":"call-1","name":"get_weather","args":{"city":"Paris","days":2,"opts":{"metric":true}}}},
					{"functionCall":{"name":"get_time"}}]}}`,
				`error: backend unavailable`,
				`{"errorCode":"SAFETY","errorMessage":"blocked"}`,
				`{"content":{"role":"model","parts":[{"text":"Bye."}]},"finishReason":"STOP",
					"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2},"customMetadata":{"k":"v"},"modelVersion":"v-1","turnComplete":true}`,
				`{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":1}}},{"text":"after the call"}]}}`,
			},
		},
		{
			name:     "bare list",
			yaml:     "- text: one\n- text: two\n",
			wantName: DefaultName,
			want: []string{
				`{"content":{"role":"model","parts":[{"text":"one"}]}}`,
				`{"content":{"role":"model","parts":[{"text":"two"}]}}`,
			},
		},
		{
			name:     "empty document",
			yaml:     "",
			wantName: DefaultName,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := FromYAML([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("FromYAML: %v", err)
			}
			if m.Name() != tt.wantName {
				t.Errorf("name = %q, want %q", m.Name(), tt.wantName)
			}
			if len(m.steps) != len(tt.want) {
				t.Fatalf("%d steps, want %d", len(m.steps), len(tt.want))
			}
			for i, w := range tt.want {
				st := m.steps[i]
				if msg, ok := strings.CutPrefix(w, "error: "); ok {
					if st.Err == nil || st.Err.Error() != msg || st.Response != nil {
						t.Errorf("step %d = %+v, want error %q", i, st, msg)
					}
					continue
				}
				var want, got any
				if err := json.Unmarshal([]byte(w), &want); err != nil {
					t.Fatal(err)
				}
				data, _ := json.Marshal(st.Response)
				json.Unmarshal(data, &got)
				if st.Err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("step %d = %s (err %v)\nwant %s", i, data, st.Err, w)
				}
			}
		})
	}
}

func TestArgsAreJSONNumbers(t *testing.T) {
	m, err := FromYAML([]byte("- function_calls: [{name: f, args: {n: 3, l: [1, 2]}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	args := m.steps[0].Response.Content.Parts[0].FunctionCall.Args
	if _, ok := args["n"].(float64); !ok {
		t.Errorf("args n is %T, want float64 as decoded from a real backend", args["n"])
	}
	if l, ok := args["l"].([]any); !ok || len(l) != 2 {
		t.Errorf("args l = %#v", args["l"])
	}
}

func TestFromYAMLErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key", "responses:\n  - txt: hi\n", "txt"},
		{"unknown top key", "name: x\nresponse:\n  - text: hi\n", "response"},
		{"error with more", "- error: boom\n  text: hi\n", "response 0: error cannot be combined"},
		{"content with text", "- text: hi\n  content: {parts: [{text: x}]}\n", "content cannot be combined"},
		{"bad content field", "- content: {parts: [{txt: x}]}\n", "content"},
		{"call without name", "- text: ok\n- function_calls: [{args: {a: 1}}]\n", "response 1: function_calls[0]: name is required"},
		{"scalar document", "just text\n", "want a mapping"},
		{"broken yaml", "- text: [unclosed\n", "parse YAML"},
		{"two documents", "- text: a\n---\n- text: b\n", "one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromYAML([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestScriptedYAMLModelPlays(t *testing.T) {
	m, err := FromYAML([]byte("name: demo\nresponses:\n  - text: hi there\n  - error: down\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, m, &model.Request{}, true)
	if err != nil || len(got) != 3 || got[2].Content.Parts[0].Text != "hi there" {
		t.Fatalf("first call: %v, %d responses", err, len(got))
	}
	if _, err := run(t, m, &model.Request{}, false); err == nil || err.Error() != "down" {
		t.Fatalf("second call error = %v, want down", err)
	}
}

// A script comes with an app definition and is checked as its files are,
// before it is decoded. Aliases of aliases expanded exponentially (this
// 521-byte script took 700 MB and 7 s, and a tenth level would have taken
// ten times more), 20,000 nested brackets took 640 MB to refuse, and tags
// loaded quietly: !!binary as its decoded bytes, !!python/object:… and
// local tags as plain text.
func TestParseScriptHostileYAML(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("x0: &a0 [lololololololololololololololololololol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "x%d: &a%d [*a%d%s]\n", i, i, i-1, strings.Repeat(fmt.Sprintf(", *a%d", i-1), 8))
	}
	laughs.WriteString("responses:\n  - {text: hi, custom_metadata: {k: *a8}}\n")
	aliases := "r: &r {text: hi}\nresponses: [" + strings.Repeat("*r, ", 100) + "*r]\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"nested aliases", laughs.String(), "line 2, column 10: the value of anchor &a1 holds an alias: aliases may not nest"},
		{"too many aliases", aliases, "line 2, column 413: too many YAML aliases (101; at most 100)"},
		{"deep nesting", "responses:\n  - {text: hi, custom_metadata: {k: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}}\n", "line 2, column 1: YAML nests too deep"},
		{"binary", "responses:\n  - text: !!binary aGVsbG8=\n", "line 2, column 11: YAML tag !!binary is not supported: a script is plain YAML; remove the tag"},
		{"python object", "responses:\n  - text: !!python/object:os.system hi\n", "YAML tag !!python/object:os.system is not supported"},
		{"local tag", "- text: !foo hi\n", "YAML tag !foo is not supported"},
		{"str on a number", "- function_calls: [{name: t, args: {n: !!str 5}}]\n", `YAML tag !!str on a number: write the value as it is, or quote it for a string ("5")`},
		{"float on an integer", "- function_calls: [{name: t, args: {n: !!float 5}}]\n", "YAML tag !!float on the integer 5: write 5.0 for a float"},
		{"colon in a flow key", "- function_calls: [{name: t, args: {user:plan: x}}]\n", "flow mapping key holds ':'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// What stays: aliases of plain values, and core tags on their own kind.
	m, err := FromYAML([]byte("responses: [&r {text: hi}, *r, {text: !!str x, function_calls: [{name: t, args: {f: !!float 0.5, i: !!int 5}}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Remaining() != 3 {
		t.Errorf("steps = %d, want 3", m.Remaining())
	}
}

// A server's scripted model serves every session of its app for the app's
// life. It recorded a copy of every request, each a session's whole
// history, calls after the script ran out included: memory grew with every
// call. A model built from a script records the first
// MaxRecordedRequests only, and still counts the calls.
func TestScriptRecordsBoundedRequests(t *testing.T) {
	m, err := Parse([]byte("responses:\n  - text: hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Contents: []*genai.Content{genai.NewContentFromText(strings.Repeat("history ", 1000), genai.RoleUser)}}
	var last error
	for range 100 {
		for _, err := range m.GenerateContent(context.Background(), req, false) {
			last = err
		}
	}
	if last == nil || !strings.Contains(last.Error(), "call 100 has no answer, the script holds 1") {
		t.Errorf("last call: %v, want the 100th call to find the script exhausted", last)
	}
	if n := len(m.(*Model).Requests()); n != MaxRecordedRequests {
		t.Errorf("recorded %d requests, want the first %d", n, MaxRecordedRequests)
	}
	// A model built in code for a test records every request.
	all := FromSteps("m")
	for range 20 {
		for range all.GenerateContent(context.Background(), req, false) {
		}
	}
	if n := len(all.Requests()); n != 20 {
		t.Errorf("FromSteps recorded %d requests, want 20", n)
	}
}
