package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// recorded is one request the fake server received.
type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// fakeServer is an httptest server speaking the Messages API wire format;
// handle writes the answer to the n-th request (from 0).
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, n int)
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, n int)) *fakeServer {
	t.Helper()
	f := &fakeServer{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, recorded{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.handle(w, n)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// jsonAnswers answers the n-th request with bodies[n] (the last one after).
func jsonAnswers(status int, bodies ...string) func(http.ResponseWriter, int) {
	return func(w http.ResponseWriter, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", fmt.Sprintf("req_%d", n))
		w.WriteHeader(status)
		io.WriteString(w, bodies[min(n, len(bodies)-1)])
	}
}

// sseAnswer answers with one SSE event per (type, data) pair.
func sseAnswer(events ...[2]string) func(http.ResponseWriter, int) {
	return func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e[0], e[1])
			w.(http.Flusher).Flush()
		}
	}
}

func newModel(t *testing.T, f *fakeServer, mutate ...func(*Config)) *Model {
	t.Helper()
	cfg := Config{Model: "claude-test", BaseURL: f.URL, APIKey: "test-key", HTTPClient: f.Client(), MaxRetries: -1}
	for _, mu := range mutate {
		mu(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func collect(seq func(func(*model.Response, error) bool)) ([]*model.Response, error) {
	var out []*model.Response
	for r, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func assertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	gotData, _ := json.Marshal(got)
	var g, w any
	_ = json.Unmarshal(gotData, &g)
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, gotData, want)
	}
}

func asJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

const textMessage = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-20250101",
 "content":[{"type":"thinking","thinking":"adding","signature":"sig=="},{"type":"text","text":"4"}],
 "stop_reason":"end_turn","stop_sequence":null,
 "usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":30,"output_tokens_details":{"thinking_tokens":12}}}`

func TestRequestJSON(t *testing.T) {
	f := newFake(t, jsonAnswers(200, textMessage))
	m := newModel(t, f, func(c *Config) { c.Headers = http.Header{"X-Extra": {"1"}} })
	req := &model.Request{
		Model: "claude-test",
		Contents: []*genai.Content{
			{Role: "user", Parts: []*genai.Part{{Text: "What is 2+2? Use the tool."}}},
			{Role: "model", Parts: []*genai.Part{
				{Text: "thinking", Thought: true, ThoughtSignature: []byte("sig1")},
				{FunctionCall: &genai.FunctionCall{ID: "toolu_1", Name: "add", Args: map[string]any{"a": 2.0, "b": 2.0}}},
				{FunctionCall: &genai.FunctionCall{ID: "bad id!", Name: "add", Args: nil}},
			}},
			{Role: "user", Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: "toolu_1", Name: "add", Response: map[string]any{"result": 4.0}}},
				{FunctionResponse: &genai.FunctionResponse{ID: "bad id!", Name: "add", Response: map[string]any{"sum": 4.0, "note": "é"}}},
			}},
			{Role: "model", Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1}}}}},
			{Role: "user", Parts: []*genai.Part{{Text: ""}}},
		},
		Config: &genai.GenerateContentConfig{
			SystemInstruction: &genai.Content{Parts: []*genai.Part{{Text: "Be brief."}, {Text: "Use tools."}}},
			Temperature:       genai.Ptr[float32](0.5),
			TopP:              genai.Ptr[float32](0.25),
			TopK:              genai.Ptr[float32](3),
			StopSequences:     []string{"END"},
			MaxOutputTokens:   100,
			Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
				{Name: "add", Description: "Adds.", Parameters: &genai.Schema{
					Type: genai.TypeObject, Required: []string{"a"},
					Properties: map[string]*genai.Schema{
						"a": {Type: genai.TypeNumber},
						"b": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}},
					},
				}},
				{Name: "now", ParametersJsonSchema: map[string]any{"type": "OBJECT", "properties": map[string]any{"tz": map[string]any{"type": []any{"STRING", "NULL"}}}}},
				{Name: "ping"},
			}}},
		},
	}
	if _, err := collect(m.GenerateContent(context.Background(), req, false)); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages" {
		t.Fatalf("requests = %+v", reqs)
	}
	h := reqs[0].Header
	if h.Get("X-Api-Key") != "test-key" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("X-Extra") != "1" {
		t.Errorf("headers = %v", h)
	}
	assertJSON(t, "request", reqs[0].Body, `{
	  "model": "claude-test",
	  "max_tokens": 100,
	  "system": [{"type": "text", "text": "Be brief.\nUse tools."}],
	  "temperature": 0.5, "top_p": 0.25, "top_k": 3,
	  "stop_sequences": ["END"],
	  "tool_choice": {"type": "auto"},
	  "tools": [
	    {"name": "add", "description": "Adds.", "input_schema": {"type": "object", "required": ["a"],
	      "properties": {"a": {"type": "number"}, "b": {"type": "array", "items": {"type": "integer"}}}}},
	    {"name": "now", "description": "", "input_schema": {"type": "object", "properties": {"tz": {"type": ["string", "null"]}}}},
	    {"name": "ping", "description": "", "input_schema": {"type": "object", "properties": {}}}
	  ],
	  "messages": [
	    {"role": "user", "content": [{"type": "text", "text": "What is 2+2? Use the tool."}]},
	    {"role": "assistant", "content": [
	      {"type": "thinking", "thinking": "thinking", "signature": "sig1"},
	      {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 2}},
	      {"type": "tool_use", "id": "toolu_fallback_0", "name": "add", "input": {}}
	    ]},
	    {"role": "user", "content": [
	      {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": false, "content": [{"type": "text", "text": "4"}]},
	      {"type": "tool_result", "tool_use_id": "toolu_fallback_0", "is_error": false, "content": [{"type": "text", "text": "{\"note\": \"\\u00e9\", \"sum\": 4}"}]}
	    ]},
	    {"role": "user", "content": [{"type": "text", "text": "."}]}
	  ]
	}`)
}

func TestTextAnswer(t *testing.T) {
	f := newFake(t, jsonAnswers(200, textMessage))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "2+2?"}}}},
	}, false))
	if err != nil {
		t.Fatal(err)
	}
	// No max_output_tokens: google-adk's default of 8192; no tools, no
	// tool_choice; no system instruction, no system.
	assertJSON(t, "request", f.requests()[0].Body, `{"model": "claude-test", "max_tokens": 8192,
	  "messages": [{"role": "user", "content": [{"type": "text", "text": "2+2?"}]}]}`)
	want := []*model.Response{{
		Content: &genai.Content{Role: "model", Parts: []*genai.Part{
			{Text: "adding", Thought: true, ThoughtSignature: []byte("sig==")},
			{Text: "4"},
		}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount: 17, CandidatesTokenCount: 18, ThoughtsTokenCount: 12, TotalTokenCount: 47, CachedContentTokenCount: 5,
		},
		FinishReason: genai.FinishReasonStop,
		ModelVersion: "claude-test-20250101",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("responses:\n got %s\nwant %s", asJSON(got), asJSON(want))
	}
}

func TestFinishReasons(t *testing.T) {
	for stop, want := range map[string]genai.FinishReason{
		"end_turn": genai.FinishReasonStop, "stop_sequence": genai.FinishReasonStop, "tool_use": genai.FinishReasonStop,
		"pause_turn": genai.FinishReasonStop, "max_tokens": genai.FinishReasonMaxTokens, "refusal": genai.FinishReasonSafety,
		"something_new": genai.FinishReasonUnspecified,
	} {
		body := `{"id":"m","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"x"}],"stop_reason":"` + stop + `","usage":{"input_tokens":1,"output_tokens":1}}`
		f := newFake(t, jsonAnswers(200, body))
		got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{
			Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}},
		}, false))
		if err != nil {
			t.Fatal(err)
		}
		if got[0].FinishReason != want {
			t.Errorf("stop_reason %s: finish reason %q, want %q", stop, got[0].FinishReason, want)
		}
		// Without cache counts there is no cached count.
		if u := got[0].UsageMetadata; u.PromptTokenCount != 1 || u.CachedContentTokenCount != 0 || u.TotalTokenCount != 2 {
			t.Errorf("usage = %+v", u)
		}
	}
}

// TestToolCallRoundTrip: Claude asks for a tool, the caller answers it, and
// the second request carries the call and its result under the same id.
func TestToolCallRoundTrip(t *testing.T) {
	f := newFake(t, jsonAnswers(200,
		`{"id":"m1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use",
		  "content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris","days":[1,2]}}],
		  "usage":{"input_tokens":20,"output_tokens":8}}`,
		`{"id":"m2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		  "content":[{"type":"text","text":"Sunny."}],"usage":{"input_tokens":40,"output_tokens":2}}`))
	m := newModel(t, f)
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "get_weather", Description: "Weather.", ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	}}}}}
	contents := []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "Weather in Paris?"}}}}
	first, err := collect(m.GenerateContent(context.Background(), &model.Request{Contents: contents, Config: cfg}, false))
	if err != nil {
		t.Fatal(err)
	}
	wantContent := &genai.Content{Role: "model", Parts: []*genai.Part{
		{Text: "Let me check."},
		{FunctionCall: &genai.FunctionCall{ID: "toolu_01A", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": []any{1.0, 2.0}}}},
	}}
	if !reflect.DeepEqual(first[0].Content, wantContent) || first[0].FinishReason != genai.FinishReasonStop {
		t.Fatalf("first answer = %s", asJSON(first[0]))
	}
	contents = append(contents, first[0].Content, &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: "toolu_01A", Name: "get_weather", Response: map[string]any{"result": "sunny, 21 °C"},
	}}}})
	second, err := collect(m.GenerateContent(context.Background(), &model.Request{Contents: contents, Config: cfg}, false))
	if err != nil {
		t.Fatal(err)
	}
	if second[0].Content.Parts[0].Text != "Sunny." {
		t.Errorf("second answer = %s", asJSON(second[0]))
	}
	assertJSON(t, "second request messages", f.requests()[1].Body["messages"], `[
	  {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
	  {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
	    {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris", "days": [1, 2]}}]},
	  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "is_error": false,
	    "content": [{"type": "text", "text": "sunny, 21 °C"}]}]}
	]`)
}

func TestFunctionResponseContent(t *testing.T) {
	for _, tc := range []struct {
		resp map[string]any
		want string
	}{
		{map[string]any{"content": []any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "image", "n": 1.0}, "b"}}, "a\n{'n': 1, 'type': 'image'}\nb"},
		{map[string]any{"content": "plain"}, "plain"},
		{map[string]any{"result": []any{1.0, "x"}}, `[1, "x"]`},
		{map[string]any{"result": true}, "True"},
		{map[string]any{"content": []any{}, "x": 1.0}, `{"content": [], "x": 1}`},
		{map[string]any{}, ""},
	} {
		b, err := toolResult(&genai.FunctionResponse{ID: "t", Name: "f", Response: tc.resp}, &idSanitizer{})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, c := range b.OfToolResult.Content {
			got += c.OfText.Text
		}
		if got != tc.want {
			t.Errorf("response %v: content %q, want %q", tc.resp, got, tc.want)
		}
	}
	// Media the tool attached follows the text; media Claude cannot take is dropped.
	b, err := toolResult(&genai.FunctionResponse{ID: "t", Name: "f", Response: map[string]any{"result": "see"}, Parts: []*genai.FunctionResponsePart{
		{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/PNG; x=1", Data: []byte("img")}},
		{InlineData: &genai.FunctionResponseBlob{MIMEType: "audio/wav", Data: []byte("wav")}},
		{InlineData: &genai.FunctionResponseBlob{MIMEType: "application/pdf", Data: []byte("pdf")}},
	}}, &idSanitizer{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "tool result with media", b, `{"type": "tool_result", "tool_use_id": "t", "is_error": false, "content": [
	  {"type": "text", "text": "see"},
	  {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aW1n"}},
	  {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "cGRm"}}]}`)
}

func TestIDSanitizer(t *testing.T) {
	var s idSanitizer
	got := []string{
		s.sanitize("", "a", true),        // fallback_0, pending under a
		s.sanitize("", "b", true),        // fallback_1, pending under b
		s.sanitize("x y", "c", true),     // fallback_2, mapped
		s.sanitize("", "b", false),       // pairs with b's call
		s.sanitize("", "zzz", false),     // no call of its name: oldest pending
		s.sanitize("x y", "c", false),    // the mapped id
		s.sanitize("ok_id-1", "d", true), // valid ids stay
		s.sanitize("", "e", false),       // nothing pending: a new fallback
	}
	want := []string{"toolu_fallback_0", "toolu_fallback_1", "toolu_fallback_2", "toolu_fallback_1", "toolu_fallback_0", "toolu_fallback_2", "ok_id-1", "toolu_fallback_3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
}

func TestUnsupportedParts(t *testing.T) {
	f := newFake(t, jsonAnswers(200, textMessage))
	m := newModel(t, f)
	for _, p := range []*genai.Part{
		{InlineData: &genai.Blob{MIMEType: "audio/wav", Data: []byte{1}}},
		{InlineData: &genai.Blob{MIMEType: "image/tiff", Data: []byte{1}}},
		{FileData: &genai.FileData{FileURI: "gs://b/f", MIMEType: "image/png"}},
	} {
		_, err := collect(m.GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{p}}}}, false))
		if err == nil || !strings.Contains(err.Error(), "contents[0].parts[0]") {
			t.Errorf("part %s: err = %v, want an error naming the part", asJSON(p), err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent for unsendable contents", n)
	}
	// Code execution parts go as text.
	blocks, err := convertContents([]*genai.Content{{Role: "model", Parts: []*genai.Part{
		{ExecutableCode: &genai.ExecutableCode{Code: "print(1)"}},
		{CodeExecutionResult: &genai.CodeExecutionResult{Output: "1"}},
		{ThoughtSignature: []byte("gemini-sig")}, // another model's bare signature: dropped
	}}})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "code parts", blocks, `[{"role": "assistant", "content": [
	  {"type": "text", "text": "Code:`+"```"+`python\nprint(1)\n`+"```"+`"},
	  {"type": "text", "text": "Execution Result:`+"```"+`code_output\n1\n`+"```"+`"}]}]`)
}

func TestThinkingConfig(t *testing.T) {
	f := newFake(t, jsonAnswers(200, textMessage))
	m := newModel(t, f)
	for _, tc := range []struct {
		budget *int32
		want   string
	}{
		{genai.Ptr[int32](0), `{"type": "disabled"}`},
		{genai.Ptr[int32](-1), `{"type": "adaptive", "display": "summarized"}`},
		{genai.Ptr[int32](2048), `{"type": "enabled", "budget_tokens": 2048}`},
	} {
		_, err := collect(m.GenerateContent(context.Background(), &model.Request{
			Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}},
			Config:   &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: tc.budget}, Temperature: genai.Ptr[float32](0.3)},
		}, false))
		if err != nil {
			t.Fatal(err)
		}
		body := f.requests()[len(f.requests())-1].Body
		assertJSON(t, "thinking", body["thinking"], tc.want)
		// Sampling parameters go only while thinking is off.
		if _, has := body["temperature"]; has != (*tc.budget == 0) {
			t.Errorf("budget %d: temperature sent = %v", *tc.budget, has)
		}
	}
	_, err := collect(m.GenerateContent(context.Background(), &model.Request{
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}},
		Config:   &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}},
	}, false))
	if err == nil || !strings.Contains(err.Error(), "thinking_budget must be set explicitly") {
		t.Errorf("err = %v, want google-adk's thinking_budget error", err)
	}
}

func TestOutputSchema(t *testing.T) {
	f := newFake(t, jsonAnswers(200,
		`{"id":"m","type":"message","role":"assistant","model":"c","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
		  "content":[{"type":"text","text":"Here you go"},{"type":"tool_use","id":"toolu_9","name":"structured_output","input":{"response":["é",1]}}]}`))
	m := newModel(t, f)
	got, err := collect(m.GenerateContent(context.Background(), &model.Request{
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "list"}}}},
		Config:   &genai.GenerateContentConfig{ResponseSchema: &genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}}, ResponseMIMEType: "application/json"},
	}, false))
	if err != nil {
		t.Fatal(err)
	}
	body := f.requests()[0].Body
	assertJSON(t, "tools", body["tools"], `[{"name": "structured_output",
	  "description": "Provide your final answer. Call this tool exactly once, with your whole answer in the structure its input describes.",
	  "input_schema": {"type": "object", "properties": {"response": {"type": "array", "items": {"type": "string"}}}, "required": ["response"]}}]`)
	assertJSON(t, "tool_choice", body["tool_choice"], `{"type": "tool", "name": "structured_output", "disable_parallel_tool_use": true}`)
	if want := []*genai.Part{{Text: `["é", 1]`}}; !reflect.DeepEqual(got[0].Content.Parts, want) {
		t.Errorf("parts = %s, want %s", asJSON(got[0].Content.Parts), asJSON(want))
	}

	// The engine's JSON schema of an agent's output schema: an object, so
	// not nested; thinking on offers the tool instead of forcing it.
	f = newFake(t, jsonAnswers(200,
		`{"id":"m","type":"message","role":"assistant","model":"c","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
		  "content":[{"type":"tool_use","id":"toolu_9","name":"structured_output","input":{"city":"Oslo","area":{"z":1,"a":2}}}]}`))
	got, err = collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "city"}}}},
		Config: &genai.GenerateContentConfig{
			ResponseJsonSchema: map[string]any{"type": "object", "title": "Out", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
			ThinkingConfig:     &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](-1)},
		},
	}, false))
	if err != nil {
		t.Fatal(err)
	}
	body = f.requests()[0].Body
	assertJSON(t, "object schema tool", body["tools"].([]any)[0].(map[string]any)["input_schema"],
		`{"type": "object", "title": "Out", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)
	assertJSON(t, "tool_choice with thinking", body["tool_choice"], `{"type": "auto", "disable_parallel_tool_use": true}`)
	// Keys in the order Claude wrote them, as Python's json.dumps keeps them.
	if want := []*genai.Part{{Text: `{"city": "Oslo", "area": {"z": 1, "a": 2}}`}}; !reflect.DeepEqual(got[0].Content.Parts, want) {
		t.Errorf("parts = %s, want %s", asJSON(got[0].Content.Parts), asJSON(want))
	}
	if got[0].KeyOrder != nil {
		t.Errorf("key order hints left on the unwrapped text: %s", got[0].KeyOrder)
	}
}

// TestToolInputKeyOrder: the order of a tool_use input's keys, which its Go
// map loses, is kept beside it (model.Response.KeyOrder), streamed or not.
func TestToolInputKeyOrder(t *testing.T) {
	f := newFake(t, jsonAnswers(200, `{"id":"m","type":"message","role":"assistant","model":"c","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
	  "content":[{"type":"text","text":"On it."},{"type":"tool_use","id":"toolu_1","name":"book","input":{"trip":{"to":"Oslo","from":"Bergen"}}},
	    {"type":"tool_use","id":"toolu_2","name":"ping","input":{"a":1,"b":2}}]}`))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, false))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", `{"trip":{"to":0,"from":0}}`, ""} {
		if h := got[0].PartKeyOrder(i); string(h) != want {
			t.Errorf("part %d: key order %s, want %s", i, h, want)
		}
	}
	f = newFake(t, sseAnswer(
		sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"On it."}}`),
		sse("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"book","input":{}}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"z\": 1, \"a\": 2}"}}`),
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`),
	))
	got, err = collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, true))
	if err != nil {
		t.Fatal(err)
	}
	final := got[len(got)-1]
	if final.Partial || string(final.PartKeyOrder(0)) != "" || string(final.PartKeyOrder(1)) != `{"z":0,"a":0}` {
		t.Errorf("streamed final: partial %v, key order %s", final.Partial, final.KeyOrder)
	}
}

func sse(typ, data string) [2]string { return [2]string{typ, data} }

func TestStream(t *testing.T) {
	f := newFake(t, sseAnswer(
		sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-test-1","content":[],"stop_reason":null,"usage":{"input_tokens":25,"cache_read_input_tokens":4,"output_tokens":1}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}`),
		sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
		sse("ping", `{"type":"ping"}`),
		sse("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}}`),
		sse("content_block_stop", `{"type":"content_block_stop","index":1}`),
		sse("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_7","name":"get_weather","input":{}}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}`),
		sse("content_block_stop", `{"type":"content_block_stop","index":2}`),
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40,"output_tokens_details":{"thinking_tokens":10}}}`),
		sse("message_stop", `{"type":"message_stop"}`),
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{
		Model:    "claude-test",
		Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}},
	}, true))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := f.requests()[0].Body["stream"].(bool); !s {
		t.Errorf("request did not ask for a stream: %v", f.requests()[0].Body)
	}
	part := func(version string, p *genai.Part) *model.Response {
		return &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{p}}, Partial: true, ModelVersion: version}
	}
	call := func(args ...*genai.PartialArg) *genai.FunctionCall {
		return &genai.FunctionCall{ID: "toolu_7", Name: "get_weather", PartialArgs: args, WillContinue: genai.Ptr(true)}
	}
	want := []*model.Response{
		part("claude-test-1", &genai.Part{Text: "hmm", Thought: true}),
		part("claude-test-1", &genai.Part{Text: "Hello"}),
		part("claude-test-1", &genai.Part{Text: " there"}),
		part("claude-test", &genai.Part{FunctionCall: call()}),
		part("claude-test", &genai.Part{FunctionCall: call(&genai.PartialArg{JsonPath: "$.city", StringValue: "Pa", WillContinue: genai.Ptr(true)})}),
		part("claude-test", &genai.Part{FunctionCall: call(&genai.PartialArg{JsonPath: "$.city", StringValue: "ris", WillContinue: genai.Ptr(false)})}),
		{
			Aggregated: true,
			Content: &genai.Content{Role: "model", Parts: []*genai.Part{
				{Text: "hmm", Thought: true, ThoughtSignature: []byte("SIG")},
				{Text: "Hello there"},
				{FunctionCall: &genai.FunctionCall{ID: "toolu_7", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
			}},
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: 29, CandidatesTokenCount: 30, ThoughtsTokenCount: 10, TotalTokenCount: 69, CachedContentTokenCount: 4,
			},
			FinishReason: genai.FinishReasonStop,
			ModelVersion: "claude-test-1",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("responses:\n got %s\nwant %s", asJSON(got), asJSON(want))
	}
}

func TestStreamStopsWhenYieldReturnsFalse(t *testing.T) {
	f := newFake(t, sseAnswer(
		sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}`),
	))
	n := 0
	for range newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, true) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("got %d responses after break", n)
	}
}

func TestAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body       string
		typ, msg   string
		wantPrefix string
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"},"request_id":"req_x"}`,
			"invalid_request_error", "messages: roles must alternate", `anthropic: model "claude-test": 400 Bad Request (invalid_request_error): messages: roles must alternate`},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			"rate_limit_error", "slow down", RateLimitHelp + "\n\n" + `anthropic: model "claude-test": 429 Too Many Requests (rate_limit_error): slow down`},
		{502, `<html>bad gateway</html>`, "", "<html>bad gateway</html>", `anthropic: model "claude-test": 502 Bad Gateway: <html>bad gateway</html>`},
	} {
		f := newFake(t, jsonAnswers(tc.status, tc.body))
		_, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, false))
		var ae *APIError
		if !errors.As(err, &ae) {
			t.Fatalf("status %d: err = %v (%T), want *APIError", tc.status, err, err)
		}
		if ae.StatusCode != tc.status || ae.Type != tc.typ || ae.Message != tc.msg || ae.RequestID != "req_0" || ae.Model != "claude-test" {
			t.Errorf("status %d: APIError = %+v", tc.status, ae)
		}
		if err.Error() != tc.wantPrefix {
			t.Errorf("status %d: message\n got %q\nwant %q", tc.status, err.Error(), tc.wantPrefix)
		}
		if n := len(f.requests()); n != 1 {
			t.Errorf("status %d: %d requests with retries off", tc.status, n)
		}
	}
}

func TestRetriesByDefault(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, n int) {
		if n == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("retry-after-ms", "1")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		jsonAnswers(200, textMessage)(w, n)
	})
	got, err := collect(newModel(t, f, func(c *Config) { c.MaxRetries = 0 }).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, false))
	if err != nil || len(got) != 1 || len(f.requests()) != 2 {
		t.Fatalf("got %d responses, err %v, %d requests; want one answer after one retry", len(got), err, len(f.requests()))
	}
}

func TestStreamErrorEvent(t *testing.T) {
	f := newFake(t, sseAnswer(
		sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}`),
		sse("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, true))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Type != "overloaded_error" || ae.Message != "Overloaded" {
		t.Fatalf("err = %v, want the stream's overloaded_error", err)
	}
	if len(got) != 1 || got[0].Content.Parts[0].Text != "a" {
		t.Errorf("responses before the error = %s", asJSON(got))
	}
}

func TestCancelled(t *testing.T) {
	f := newFake(t, jsonAnswers(200, textMessage))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := collect(newModel(t, f).GenerateContent(ctx, &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, false))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestNewAndModelNames(t *testing.T) {
	if _, err := New(Config{Model: "claude-x"}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("New without a key: err = %v", err)
	}
	if _, err := New(Config{APIKey: "k"}); err == nil {
		t.Error("New without a model succeeded")
	}
	m, err := New(Config{Model: "claude-x", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"":                       "claude-x",
		"claude-opus-4-1":        "claude-opus-4-1",
		"anthropic/claude-3-5-h": "claude-3-5-h",
		"projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514": "claude-sonnet-4@20250514",
	} {
		if got := m.modelName(&model.Request{Model: in}); got != want {
			t.Errorf("modelName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStreamBound(t *testing.T) {
	chunk := strings.Repeat("x", 1<<20)
	events := []([2]string){
		sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`),
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	}
	for range 70 {
		events = append(events, sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+chunk+`"}}`))
	}
	f := newFake(t, sseAnswer(events...))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), &model.Request{Contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}}}, true))
	if err == nil || !strings.Contains(err.Error(), "streamed more than 67108864 bytes") {
		t.Fatalf("err = %v", err)
	}
	if len(got) != 64 {
		t.Errorf("%d partial responses before the bound, want 64", len(got))
	}
}
