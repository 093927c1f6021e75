package streaming

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"
)

func ids() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("adk-%d", n) }
}

func decodeChunk(t *testing.T, s string) *genai.GenerateContentResponse {
	t.Helper()
	var r genai.GenerateContentResponse
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("bad chunk %s: %v", s, err)
	}
	return &r
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func parseJSON(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad JSON in test %s: %v", s, err)
	}
	return out
}

func cand(parts string, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"candidates":[{"content":{"role":"model","parts":` + parts + `}` + extra + `}]}`
}

func TestAggregatorFinal(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{
			name: "consecutive text merges, thoughts apart",
			chunks: []string{
				cand(`[{"text":"Think ","thought":true}]`, ""),
				cand(`[{"text":"hard.","thought":true,"thoughtSignature":"AQ=="}]`, ""),
				cand(`[{"text":"Answer "}]`, ""),
				cand(`[{"text":"is 42."}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[{"text":"Think hard.","thought":true,"thoughtSignature":"AQ=="},{"text":"Answer is 42."}]},"finishReason":"STOP"}`,
		},
		{
			name: "a blob splits the text runs",
			chunks: []string{
				cand(`[{"text":"Here is a dog."}]`, ""),
				cand(`[{"inlineData":{"mimeType":"image/png","data":"AQI="}}]`, ""),
				cand(`[{"text":"It runs"},{"text":" around."}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[{"text":"Here is a dog."},{"inlineData":{"mimeType":"image/png","data":"AQI="}},{"text":"It runs around."}]},"finishReason":"STOP"}`,
		},
		{
			name: "function calls keep order and get ids",
			chunks: []string{
				cand(`[{"text":"Checking both."}]`, ""),
				cand(`[{"functionCall":{"name":"weather","args":{"city":"Tokyo"}}}]`, ""),
				cand(`[{"functionCall":{"name":"weather","args":{"city":"NYC"}}}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[{"text":"Checking both."},
				{"functionCall":{"id":"adk-1","name":"weather","args":{"city":"Tokyo"}}},
				{"functionCall":{"id":"adk-2","name":"weather","args":{"city":"NYC"}}}]},"finishReason":"STOP"}`,
		},
		{
			name: "model ids repeated across chunks are deduplicated",
			chunks: []string{
				cand(`[{"functionCall":{"id":"m-1","name":"f","args":{"a":1}}}]`, ""),
				cand(`[{"functionCall":{"id":"m-1","name":"f","args":{"a":1}}}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[{"functionCall":{"id":"m-1","name":"f","args":{"a":1}}}]},"finishReason":"STOP"}`,
		},
		{
			name: "streamed function call arguments",
			chunks: []string{
				cand(`[{"text":"Writing."}]`, ""),
				cand(`[{"functionCall":{"name":"write","willContinue":true},"thoughtSignature":"Ag=="}]`, ""),
				cand(`[{"functionCall":{"partialArgs":[{"jsonPath":"$.path","stringValue":"/tmp/"},{"jsonPath":"$.opts.mode","numberValue":420}],"willContinue":true}}]`, ""),
				cand(`[{"functionCall":{"partialArgs":[{"jsonPath":"$.path","stringValue":"a.txt"},{"jsonPath":"$.lines[1]","stringValue":"two"},{"jsonPath":"$['odd key']","boolValue":true}],"willContinue":true}}]`, ""),
				cand(`[{"functionCall":{"partialArgs":[{"jsonPath":"$.path","stringValue":""},{"jsonPath":"$.gone","nullValue":"NULL_VALUE"}]}}]`, ""),
				cand(`[{"text":"Done."}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[{"text":"Writing."},
				{"functionCall":{"id":"adk-1","name":"write","args":{"path":"/tmp/a.txt","opts":{"mode":420},"lines":[null,"two"],"odd key":true,"gone":null}},"thoughtSignature":"Ag=="},
				{"text":"Done."}]},"finishReason":"STOP"}`,
		},
		{
			name: "a new call name closes the open one",
			chunks: []string{
				cand(`[{"functionCall":{"id":"v-1","name":"a","willContinue":true}}]`, ""),
				cand(`[{"functionCall":{"partialArgs":[{"jsonPath":"$.x","stringValue":"1"}],"willContinue":true}}]`, ""),
				cand(`[{"functionCall":{"id":"v-2","name":"b","args":{"y":2},"willContinue":false}}]`, `"finishReason":"STOP"`),
			},
			want: `{"content":{"role":"model","parts":[
				{"functionCall":{"id":"v-1","name":"a","args":{"x":"1"}}},
				{"functionCall":{"id":"v-2","name":"b","args":{"y":2}}}]},"finishReason":"STOP"}`,
		},
		{
			name: "finish reason other than stop is an error",
			chunks: []string{
				cand(`[{"text":"Once"}]`, ""),
				cand(`[{"text":" upon"}]`, `"finishReason":"MAX_TOKENS","finishMessage":"cut"`),
			},
			want: `{"content":{"role":"model","parts":[{"text":"Once upon"}]},"finishReason":"MAX_TOKENS","errorCode":"MAX_TOKENS","errorMessage":"cut"}`,
		},
		{
			name: "finish reason is kept from an earlier chunk",
			chunks: []string{
				cand(`[{"text":"Hi"}]`, `"finishReason":"STOP"`),
				`{"usageMetadata":{"totalTokenCount":4},"modelVersion":"v2"}`,
			},
			want: `{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP","usageMetadata":{"totalTokenCount":4},"modelVersion":"v2"}`,
		},
		{
			name: "blocked prompt",
			chunks: []string{
				`{"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"nope"}}`,
			},
			want: `{"errorCode":"SAFETY","errorMessage":"nope"}`,
		},
		{
			name: "metadata keeps the last value seen",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"groundingMetadata":{"webSearchQueries":["q1"]}}],"usageMetadata":{"promptTokenCount":1}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"b"}]},"citationMetadata":{"citations":[{"uri":"u"}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"c"}]},"finishReason":"STOP"}]}`,
			},
			want: `{"content":{"role":"model","parts":[{"text":"abc"}]},"finishReason":"STOP","groundingMetadata":{"webSearchQueries":["q1"]},
				"citationMetadata":{"citations":[{"uri":"u"}]},"usageMetadata":{"promptTokenCount":1}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(ids())
			for i, c := range tt.chunks {
				p := a.Process(decodeChunk(t, c))
				if !p.Partial {
					t.Errorf("chunk %d: response not partial", i)
				}
			}
			final := a.Close()
			if final == nil {
				t.Fatal("Close returned nil")
			}
			if final.Partial {
				t.Error("final response is partial")
			}
			if got, want := asJSON(t, final), parseJSON(t, tt.want); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("final = %s\nwant    %s", g, strings.Join(strings.Fields(tt.want), " "))
			}
		})
	}
}

func TestAggregatorPartials(t *testing.T) {
	a := New(ids())
	p := a.Process(decodeChunk(t, cand(`[{"functionCall":{"name":"f","args":{"k":"v"}}}]`, `"finishReason":"STOP"`)))
	want := `{"partial":true,"content":{"role":"model","parts":[{"functionCall":{"id":"adk-1","name":"f","args":{"k":"v"}}}]},"finishReason":"STOP"}`
	if got := asJSON(t, p); !reflect.DeepEqual(got, parseJSON(t, want)) {
		t.Errorf("partial = %v\nwant      %s", got, want)
	}
	// Changing the partial must not reach the final response.
	p.Content.Parts[0].FunctionCall.Args["k"] = "changed"
	final := a.Close()
	if v := final.Content.Parts[0].FunctionCall.Args["k"]; v != "v" {
		t.Errorf("final args k = %v, want v", v)
	}
	if !final.Aggregated || final.Partial {
		t.Errorf("final Aggregated, Partial = %v, %v; want true, false (google-adk's partial=False)", final.Aggregated, final.Partial)
	}
}

func TestAggregatorNoChunks(t *testing.T) {
	if got := New(nil).Close(); got != nil {
		t.Fatalf("Close without chunks = %+v, want nil", got)
	}
}

func TestDefaultIDs(t *testing.T) {
	a := New(nil)
	a.Process(decodeChunk(t, cand(`[{"functionCall":{"name":"f"}}]`, "")))
	id := a.Close().Content.Parts[0].FunctionCall.ID
	if !strings.HasPrefix(id, ClientFunctionCallIDPrefix) || len(id) != len(ClientFunctionCallIDPrefix)+36 {
		t.Fatalf("id %q is not adk-<uuid>", id)
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want []any
	}{
		{"$.a", []any{"a"}},
		{"$.a.b[2].c", []any{"a", "b", 2, "c"}},
		{"$['odd key'][ 3 ]", []any{"odd key", 3}},
		{`$["q\"uote"]`, []any{`q"uote`}},
		{`$.tab\tkey`, []any{"tab\tkey"}},
		{`$.\u0041b`, []any{"Ab"}},
		{"a.b", []any{"a", "b"}},
		{"$", nil},
		{"$.a[x]", []any{"a", "x"}},
	}
	for _, tt := range tests {
		if got := parsePath(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePath(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestSetPath(t *testing.T) {
	tests := []struct {
		name  string
		start string
		path  string
		value any
		want  string
	}{
		{"new nested map", `{}`, "$.a.b", "x", `{"a":{"b":"x"}}`},
		{"grow list", `{}`, "$.l[2]", 1.0, `{"l":[null,null,1]}`},
		{"list of maps", `{}`, "$.l[0].k", true, `{"l":[{"k":true}]}`},
		{"type clash is ignored", `{"a":"s"}`, "$.a.b", 1.0, `{"a":"s"}`},
		{"index too large is ignored", `{}`, "$.l[10001]", 1.0, `{"l":[]}`},
		{"overwrite", `{"a":{"b":1}}`, "$.a.b", 2.0, `{"a":{"b":2}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tt.start), &m); err != nil {
				t.Fatal(err)
			}
			setPath(m, parsePath(tt.path), tt.value)
			if got, want := asJSON(t, m), parseJSON(t, tt.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if v, ok := getPath(m, parsePath(tt.path)); ok && tt.name == "overwrite" && v != 2.0 {
				t.Errorf("getPath = %v", v)
			}
		})
	}
}
