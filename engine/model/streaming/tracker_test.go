package streaming

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestJSONPathTracker replays chunk sequences through the tracker and
// compares each chunk's partial arguments with google-adk 2.13's
// _JsonPathTracker (testdata/tracker.json, written by testdata/tracker.py
// with google-adk's venv: python testdata/tracker.py > testdata/tracker.json).
func TestJSONPathTracker(t *testing.T) {
	data, err := os.ReadFile("testdata/tracker.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Chunks []string           `json:"chunks"`
		Args   [][]map[string]any `json:"args"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cases {
		tr := NewJSONPathTracker()
		for i, chunk := range tc.Chunks {
			got := []map[string]any{}
			for _, p := range tr.handle(chunk) {
				m := map[string]any{"json_path": p.path, "will_continue": p.willContinue}
				if p.str != nil {
					m["string_value"] = *p.str
				}
				if p.num != nil {
					m["number_value"] = *p.num
				}
				if p.boolean != nil {
					m["bool_value"] = *p.boolean
				}
				if p.null {
					m["null_value"] = "NULL_VALUE"
				}
				got = append(got, m)
			}
			want := tc.Args[i]
			if want == nil {
				want = []map[string]any{}
			}
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("chunks %q, chunk %d %q:\n got %s\nwant %s", tc.Chunks, i, chunk, gj, wj)
			}
		}
	}
	// The genai form: will_continue always set, "" for a closed string.
	args := NewJSONPathTracker().HandleChunk(`{"a": "x", "b": 2}`)
	if len(args) != 2 || args[0].JsonPath != "$.a" || args[0].StringValue != "x" || args[1].NumberValue == nil || *args[1].NumberValue != 2 || args[1].WillContinue == nil || *args[1].WillContinue {
		t.Errorf("HandleChunk = %+v", args)
	}
}
