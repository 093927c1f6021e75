package openai

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
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// recorded is one request the fake server received.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
}

// fakeServer is an httptest server speaking the chat-completions wire
// format. Its handle func writes the answer; requests are recorded first.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	f := &fakeServer{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// jsonAnswer answers every request with body.
func jsonAnswer(status int, contentType, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sseAnswer answers with one `data:` event per chunk and then [DONE].
func sseAnswer(chunks ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

func newModel(t *testing.T, f *fakeServer, mutate ...func(*Config)) *Model {
	t.Helper()
	cfg := Config{
		Model:             "test-model",
		BaseURL:           f.URL + "/v1",
		APIKey:            "test-key",
		HTTPClient:        f.Client(),
		NewFunctionCallID: sequentialIDs(),
	}
	for _, mu := range mutate {
		mu(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func sequentialIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("adk-test-%d", n)
	}
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

func userText(s string) *model.Request {
	return &model.Request{Contents: []*genai.Content{genai.NewContentFromText(s, genai.RoleUser)}}
}

// jsonValue decodes s for comparison with a decoded request body.
func jsonValue(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return v
}

func assertJSON(t *testing.T, got map[string]any, want string) {
	t.Helper()
	if w := jsonValue(t, want); !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		e, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("request body:\n%s\nwant:\n%s", g, e)
	}
}

func assertResponses(t *testing.T, got, want []*model.Response) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		e, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("responses:\n%s\nwant:\n%s", g, e)
	}
}

func ptr[T any](v T) *T { return &v }

const textCompletion = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"test-model-0125",
 "choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`

func TestRequestJSON(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", textCompletion))
	m := newModel(t, f, func(c *Config) { c.Headers = http.Header{"X-Team": {"adk"}} })

	req := &model.Request{
		Contents: []*genai.Content{
			genai.NewContentFromText("Weather in Paris?", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "thinking...", Thought: true},
				{Text: "Let me check."},
				{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
				{FunctionCall: &genai.FunctionCall{ID: "call_9", Name: "get_time", Args: map[string]any{}}},
			}},
			{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: "call_9", Name: "get_time", Response: map[string]any{"time": "12:00"}}},
				{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: map[string]any{"result": "sunny", "temp": 21}}},
			}},
			genai.NewContentFromText("It is sunny.", genai.RoleModel),
			{Role: genai.RoleUser, Parts: []*genai.Part{
				{Text: "And this?"},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("png")}},
			}},
		},
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("You are terse.", genai.RoleUser),
			Temperature:       ptr[float32](0.7),
			TopP:              ptr[float32](0.9),
			MaxOutputTokens:   256,
			StopSequences:     []string{"END"},
			Seed:              ptr[int32](42),
			ResponseMIMEType:  "application/json",
			ResponseSchema: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"answer": {Type: genai.TypeString},
			}, Required: []string{"answer"}},
			Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
				{
					Name:        "get_weather",
					Description: "Weather for a city.",
					Parameters: &genai.Schema{
						Type: genai.TypeObject,
						Properties: map[string]*genai.Schema{
							"city":  {Type: genai.TypeString, Description: "City name."},
							"unit":  {Type: genai.TypeString, Enum: []string{"C", "F"}, Nullable: ptr(true)},
							"days":  {Type: genai.TypeInteger, Minimum: ptr(1.0), Maximum: ptr(7.0)},
							"hours": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeNumber}, MaxItems: ptr[int64](24)},
						},
						Required:         []string{"city"},
						PropertyOrdering: []string{"city", "unit"},
					},
				},
				{
					Name:                 "get_time",
					ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string"}}},
				},
				{Name: "ping"},
			}}},
			ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
		},
	}
	if _, err := collect(m.GenerateContent(context.Background(), req, false)); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("X-Team"); got != "adk" {
		t.Errorf("X-Team = %q", got)
	}
	assertJSON(t, r.Body, `{
	  "model": "test-model",
	  "messages": [
	    {"role": "system", "content": "You are terse."},
	    {"role": "user", "content": "Weather in Paris?"},
	    {"role": "assistant", "content": "Let me check.", "tool_calls": [
	      {"id": "call_adk_1_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
	      {"id": "call_9", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_9", "content": "{\"time\":\"12:00\"}"},
	    {"role": "tool", "tool_call_id": "call_adk_1_2", "content": "{\"result\":\"sunny\",\"temp\":21}"},
	    {"role": "assistant", "content": "It is sunny."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "And this?"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,cG5n"}}
	    ]}
	  ],
	  "temperature": 0.7,
	  "top_p": 0.9,
	  "max_tokens": 256,
	  "stop": ["END"],
	  "seed": 42,
	  "response_format": {"type": "json_schema", "json_schema": {"name": "response", "schema": {
	    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}},
	  "tools": [
	    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.", "parameters": {
	      "type": "object",
	      "properties": {
	        "city": {"type": "string", "description": "City name."},
	        "unit": {"type": ["string", "null"], "enum": ["C", "F"]},
	        "days": {"type": "integer", "minimum": 1, "maximum": 7},
	        "hours": {"type": "array", "items": {"type": "number"}, "maxItems": 24}
	      },
	      "required": ["city"]}}},
	    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}},
	    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
	  ],
	  "tool_choice": "required"
	}`)
	// The request must come out the same every time (prompt caching, and
	// ids made for calls without one must be stable).
	if _, err := collect(m.GenerateContent(context.Background(), req, false)); err != nil {
		t.Fatal(err)
	}
	if reqs := f.requests(); !reflect.DeepEqual(reqs[0].Body, reqs[1].Body) {
		t.Errorf("second request differs from the first")
	}
	if req.Contents[1].Parts[2].FunctionCall.ID != "" {
		t.Errorf("request was modified: call id %q", req.Contents[1].Parts[2].FunctionCall.ID)
	}
}

func TestRequestOptions(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", textCompletion))
	m := newModel(t, f, func(c *Config) { c.UseMaxCompletionTokens = true; c.APIKey = "" })
	req := &model.Request{Model: "other-model", Config: &genai.GenerateContentConfig{
		MaxOutputTokens:  100,
		CandidateCount:   2,
		TopK:             ptr[float32](40),
		ResponseMIMEType: "application/json",
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "only", Parameters: &genai.Schema{Type: genai.TypeObject},
		}}}},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
			Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"only"},
		}},
	}}
	if _, err := collect(m.GenerateContent(context.Background(), req, false)); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if got, ok := r.Header["Authorization"]; ok {
		t.Errorf("Authorization sent without an API key: %q", got)
	}
	assertJSON(t, r.Body, `{
	  "model": "other-model",
	  "messages": [{"role": "user", "content": "Handle the requests as specified in the System Instruction."}],
	  "max_completion_tokens": 100,
	  "n": 2,
	  "top_k": 40,
	  "response_format": {"type": "json_object"},
	  "tools": [{"type": "function", "function": {"name": "only", "parameters": {"type": "object"}}}],
	  "tool_choice": {"type": "function", "function": {"name": "only"}}
	}`)
}

func TestRequestErrors(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", textCompletion))
	m := newModel(t, f)
	for _, tc := range []struct {
		name string
		req  *model.Request
		want string
	}{
		{"nil request", nil, "openai: nil request"},
		{"gemini-only tool", &model.Request{Config: &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}},
			"openai: only function declarations are supported as tools, got googleSearch"},
		{"audio", &model.Request{Contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "audio/wav"}}}}}},
			`openai: inline data of type "audio/wav" is not supported`},
		{"non-object schema", &model.Request{Config: &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "f", ParametersJsonSchema: []int{1}}}}}}},
			`openai: tool "f": JSON schema is not an object: [1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := collect(m.GenerateContent(context.Background(), tc.req, false))
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
	if _, err := New(Config{}); err == nil || err.Error() != "openai: Config.Model is required" {
		t.Errorf("New without model: %v", err)
	}
}

func TestTextAnswer(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", textCompletion))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), false))
	if err != nil {
		t.Fatal(err)
	}
	assertResponses(t, got, []*model.Response{{
		Content:       &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Hello there."}}},
		FinishReason:  genai.FinishReasonStop,
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12, CandidatesTokenCount: 3, TotalTokenCount: 15},
		ModelVersion:  "test-model-0125",
	}})
	assertJSON(t, f.requests()[0].Body, `{"model": "test-model", "messages": [{"role": "user", "content": "Hi"}]}`)
}

func TestToolCallAnswer(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", `{"id":"c","object":"chat.completion","created":1,"model":"m",
	 "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
	   {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":2}"}},
	   {"type":"function","function":{"name":"ping","arguments":""}}]}}]}`))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), false))
	if err != nil {
		t.Fatal(err)
	}
	assertResponses(t, got, []*model.Response{{
		Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: &genai.FunctionCall{ID: "call_a", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": 2.0}}},
			{FunctionCall: &genai.FunctionCall{ID: "adk-test-1", Name: "ping", Args: map[string]any{}}},
		}},
		FinishReason: genai.FinishReasonStop,
		ModelVersion: "m",
	}})
}

// TestToolCallArgumentsKeyOrder: the order of the arguments' keys, which
// their Go map loses, is kept beside them (model.Response.KeyOrder).
func TestToolCallArgumentsKeyOrder(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", `{"id":"c","object":"chat.completion","created":1,"model":"m",
	 "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"On it.","tool_calls":[
	   {"id":"call_a","type":"function","function":{"name":"book","arguments":"{\"trip\":{\"to\":\"Oslo\",\"from\":\"Bergen\"}}"}},
	   {"id":"call_b","type":"function","function":{"name":"ping","arguments":"{\"a\":1,\"b\":2}"}}]}}]}`))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), false))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d responses", len(got))
	}
	for i, want := range []string{"", `{"trip":{"to":0,"from":0}}`, ""} {
		if h := got[0].PartKeyOrder(i); string(h) != want {
			t.Errorf("part %d: key order %s, want %s", i, h, want)
		}
	}
}

func TestInvalidToolArguments(t *testing.T) {
	f := newFake(t, jsonAnswer(200, "application/json", `{"id":"c","object":"chat.completion","created":1,"model":"m",
	 "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[
	   {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}`))
	_, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), false))
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		t.Fatalf("error %v (%T) does not wrap a *json.SyntaxError", err, err)
	}
	want := `openai: model "test-model": tool call "call_a" to "get_weather": arguments are not a JSON object: "{\"city\":": unexpected end of JSON input`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

func TestFinishReasonsAndUsage(t *testing.T) {
	for _, tc := range []struct {
		name, choice, usage string
		want                *model.Response
	}{
		{
			name:   "length with text",
			choice: `{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"Once upon"}}`,
			usage:  `{"prompt_tokens":10,"completion_tokens":50,"total_tokens":60,"prompt_tokens_details":{"cached_tokens":8},"completion_tokens_details":{"reasoning_tokens":30}}`,
			want: &model.Response{
				Content:      &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Once upon"}}},
				FinishReason: genai.FinishReasonMaxTokens,
				UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
					PromptTokenCount: 10, CandidatesTokenCount: 20, ThoughtsTokenCount: 30, CachedContentTokenCount: 8, TotalTokenCount: 60,
				},
				ModelVersion: "m",
			},
		},
		{
			name:   "content filter without text",
			choice: `{"index":0,"finish_reason":"content_filter","message":{"role":"assistant","content":null}}`,
			usage:  `null`,
			want:   &model.Response{FinishReason: genai.FinishReasonSafety, ErrorCode: "SAFETY", ModelVersion: "m"},
		},
		{
			name:   "reasoning and unknown reason",
			choice: `{"index":0,"finish_reason":"eos","message":{"role":"assistant","content":"42","reasoning_content":"6 times 7"}}`,
			usage:  `{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`,
			want: &model.Response{
				Content:       &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "6 times 7", Thought: true}, {Text: "42"}}},
				FinishReason:  genai.FinishReasonOther,
				UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1, CandidatesTokenCount: 2, TotalTokenCount: 3},
				ModelVersion:  "m",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[` + tc.choice + `],"usage":` + tc.usage + `}`
			f := newFake(t, jsonAnswer(200, "application/json", body))
			got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), false))
			if err != nil {
				t.Fatal(err)
			}
			assertResponses(t, got, []*model.Response{tc.want})
		})
	}
}

func chunk(delta, finish string) string {
	if finish != "" {
		finish = `"` + finish + `"`
	} else {
		finish = "null"
	}
	return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

const usageChunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`

func TestStreamText(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"Hel"}`, ""),
		chunk(`{"content":"lo"}`, ""),
		chunk(`{}`, "stop"),
		usageChunk,
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) *genai.Content {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: s}}}
	}
	assertResponses(t, got, []*model.Response{
		{Content: text("Hel"), Partial: true, ModelVersion: "m"},
		{Content: text("lo"), Partial: true, ModelVersion: "m"},
		{
			Aggregated:    true,
			Content:       text("Hello"),
			FinishReason:  genai.FinishReasonStop,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 5, CandidatesTokenCount: 2, TotalTokenCount: 7},
			ModelVersion:  "m",
		},
	})
	assertJSON(t, f.requests()[0].Body, `{
	  "model": "test-model",
	  "messages": [{"role": "user", "content": "Hi"}],
	  "stream": true,
	  "stream_options": {"include_usage": true}
	}`)
}

func TestStreamToolCalls(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"role":"assistant","content":"Checking."}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"UTC\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
		usageChunk,
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	if err != nil {
		t.Fatal(err)
	}
	calls := []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "call_a", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
		{FunctionCall: &genai.FunctionCall{ID: "call_b", Name: "get_time", Args: map[string]any{"tz": "UTC"}}},
	}
	assertResponses(t, got, []*model.Response{
		{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Checking."}}}, Partial: true, ModelVersion: "m"},
		{Content: &genai.Content{Role: genai.RoleModel, Parts: calls}, Partial: true, ModelVersion: "m"},
		{
			Aggregated:    true,
			Content:       &genai.Content{Role: genai.RoleModel, Parts: append([]*genai.Part{{Text: "Checking."}}, calls...)},
			FinishReason:  genai.FinishReasonStop,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 5, CandidatesTokenCount: 2, TotalTokenCount: 7},
			ModelVersion:  "m",
		},
	})
}

func TestStreamToolCallsSharingAnIndex(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"a","arguments":"{\"x\":1}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"b","arguments":"{\"y\":2}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"name":"c","arguments":"{}"}}]}`, "tool_calls"),
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d responses, want 2", len(got))
	}
	want := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "call_1", Name: "a", Args: map[string]any{"x": 1.0}}},
		{FunctionCall: &genai.FunctionCall{ID: "call_2", Name: "b", Args: map[string]any{"y": 2.0}}},
		{FunctionCall: &genai.FunctionCall{ID: "adk-test-1", Name: "c", Args: map[string]any{}}},
	}}
	if !reflect.DeepEqual(got[1].Content, want) || got[1].Partial {
		g, _ := json.Marshal(got[1])
		t.Errorf("final response %s", g)
	}
}

func TestStreamInvalidToolArguments(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"f","arguments":"{\"a\":"}}]}`, "tool_calls"),
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) || len(got) != 0 {
		t.Fatalf("got %d responses and error %v, want a JSON syntax error", len(got), err)
	}
	if !strings.Contains(err.Error(), `tool call "call_a" to "f": arguments are not a JSON object`) {
		t.Errorf("error %q does not name the call", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		want        APIError
		text        string
	}{
		{
			name: "openai model not found", status: 404, contentType: "application/json",
			body: `{"error":{"message":"The model 'nope' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			want: APIError{Model: "test-model", StatusCode: 404, Type: "invalid_request_error", Code: "model_not_found", Message: "The model 'nope' does not exist"},
			text: `openai: model "test-model": 404 Not Found (model_not_found): The model 'nope' does not exist`,
		},
		{
			name: "unauthorized", status: 401, contentType: "application/json",
			body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			want: APIError{Model: "test-model", StatusCode: 401, Type: "invalid_request_error", Code: "invalid_api_key", Message: "Incorrect API key provided"},
			text: `openai: model "test-model": 401 Unauthorized (invalid_api_key): Incorrect API key provided`,
		},
		{
			name: "llama.cpp numeric code", status: 503, contentType: "application/json",
			body: `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			want: APIError{Model: "test-model", StatusCode: 503, Type: "unavailable_error", Code: "503", Message: "Loading model"},
			text: `openai: model "test-model": 503 Service Unavailable (503): Loading model`,
		},
		{
			name: "vllm top-level error", status: 400, contentType: "application/json",
			body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			want: APIError{Model: "test-model", StatusCode: 400, Type: "BadRequestError", Code: "400", Message: "max_tokens is too large"},
			text: `openai: model "test-model": 400 Bad Request (400): max_tokens is too large`,
		},
		{
			name: "ollama string error", status: 404, contentType: "application/json",
			body: `{"error":"model \"llama9\" not found, try pulling it first"}`,
			want: APIError{Model: "test-model", StatusCode: 404, Message: `model "llama9" not found, try pulling it first`},
			text: `openai: model "test-model": 404 Not Found: model "llama9" not found, try pulling it first`,
		},
		{
			name: "plain text", status: 502, contentType: "text/plain",
			body: "upstream connect error\n",
			want: APIError{Model: "test-model", StatusCode: 502, Message: "upstream connect error"},
			text: `openai: model "test-model": 502 Bad Gateway: upstream connect error`,
		},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				f := newFake(t, jsonAnswer(tc.status, tc.contentType, tc.body))
				got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), stream))
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v (%T) is not an *APIError", err, err)
				}
				if len(got) != 0 {
					t.Errorf("got %d responses before the error", len(got))
				}
				if ae.Unwrap() == nil {
					t.Errorf("APIError wraps nothing")
				}
				gotFields := *ae
				gotFields.err = nil
				if gotFields != tc.want {
					t.Errorf("APIError = %+v, want %+v", gotFields, tc.want)
				}
				if err.Error() != tc.text {
					t.Errorf("Error() = %q, want %q", err, tc.text)
				}
				// Retries are off by default, as in google-adk.
				if n := len(f.requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
			})
		}
	}
}

func TestRetries(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			jsonAnswer(500, "application/json", `{"error":{"message":"try again"}}`)(w, r)
			return
		}
		jsonAnswer(200, "application/json", textCompletion)(w, r)
	})
	got, err := collect(newModel(t, f, func(c *Config) { c.MaxRetries = 1 }).GenerateContent(context.Background(), userText("Hi"), false))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Content.Parts[0].Text != "Hello there." || len(f.requests()) != 2 {
		t.Errorf("got %d responses after %d requests", len(got), len(f.requests()))
	}
}

func TestStreamErrorEvent(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"content":"Hel"}`, ""),
		`{"error":{"message":"out of memory","type":"server_error","code":500}}`,
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	if ae.StatusCode != 500 || ae.Message != "out of memory" || ae.Type != "server_error" || ae.Code != "" {
		t.Errorf("APIError = %+v", *ae)
	}
	if len(got) != 1 || got[0].Content.Parts[0].Text != "Hel" {
		t.Errorf("responses before the error: %d", len(got))
	}
}

// blockingServer sends the given SSE chunks, then holds the connection
// until the client goes away, and reports that on done.
func blockingServer(t *testing.T, chunks ...string) (*fakeServer, <-chan struct{}) {
	done := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			t.Errorf("client did not close the connection")
		}
	})
	return f, done
}

func TestCancellation(t *testing.T) {
	t.Run("before the answer", func(t *testing.T) {
		f, done := blockingServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for len(f.requests()) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := collect(newModel(t, f).GenerateContent(ctx, userText("Hi"), false))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v is not context.Canceled", err)
		}
		<-done
	})
	t.Run("mid stream", func(t *testing.T) {
		f, done := blockingServer(t, chunk(`{"content":"Hel"}`, ""))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []*model.Response
		var err error
		for r, e := range newModel(t, f).GenerateContent(ctx, userText("Hi"), true) {
			if e != nil {
				err = e
				break
			}
			got = append(got, r)
			cancel()
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v is not context.Canceled", err)
		}
		if !strings.HasPrefix(err.Error(), `openai: model "test-model": context canceled`) {
			t.Errorf("error %q", err)
		}
		if len(got) != 1 || !got[0].Partial {
			t.Errorf("got %d responses before the error", len(got))
		}
		<-done
	})
	t.Run("already cancelled", func(t *testing.T) {
		f := newFake(t, jsonAnswer(200, "application/json", textCompletion))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := collect(newModel(t, f).GenerateContent(ctx, userText("Hi"), true))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v is not context.Canceled", err)
		}
	})
	t.Run("consumer stops", func(t *testing.T) {
		f, done := blockingServer(t, chunk(`{"content":"Hel"}`, ""))
		n := 0
		for _, err := range newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			break
		}
		if n != 1 {
			t.Errorf("got %d responses", n)
		}
		// Breaking out must close the stream, so the server sees the
		// client leave rather than waiting for its timeout.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("stream still open after the consumer stopped")
		}
	})
}

func TestStreamReasoning(t *testing.T) {
	f := newFake(t, sseAnswer(
		chunk(`{"role":"assistant","reasoning_content":"6 times"}`, ""),
		chunk(`{"reasoning_content":" 7"}`, ""),
		chunk(`{"content":"42"}`, "stop"),
	))
	got, err := collect(newModel(t, f).GenerateContent(context.Background(), userText("Hi"), true))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d responses, want 4", len(got))
	}
	want := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "6 times 7", Thought: true}, {Text: "42"}}}
	if !reflect.DeepEqual(got[3].Content, want) || got[3].FinishReason != genai.FinishReasonStop || got[3].UsageMetadata != nil {
		g, _ := json.Marshal(got[3])
		t.Errorf("final response %s", g)
	}
}
