package gemini

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

// recorded is one request the fake Gemini server received.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
}

// fakeGemini is an httptest server speaking Gemini's REST wire format. Its
// handle func writes the answer; requests are recorded before it runs.
type fakeGemini struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *fakeGemini {
	t.Helper()
	f := &fakeGemini{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if len(data) > 0 {
			if err := json.Unmarshal(data, &body); err != nil {
				t.Errorf("request body is not JSON: %v: %s", err, data)
			}
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGemini) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// jsonAnswer answers every request with body as JSON.
func jsonAnswer(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sseAnswer answers with one Server-Sent Event per chunk.
func sseAnswer(chunks ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\r\n\r\n", c)
			w.(http.Flusher).Flush()
		}
	}
}

func newModel(t *testing.T, f *fakeGemini, mutate ...func(*Config)) *Model {
	t.Helper()
	cfg := Config{
		Model:             "gemini-test",
		APIKey:            "test-key",
		Backend:           genai.BackendGeminiAPI,
		BaseURL:           f.URL,
		HTTPClient:        f.Client(),
		NewFunctionCallID: sequentialIDs(),
	}
	for _, m := range mutate {
		m(&cfg)
	}
	m, err := New(context.Background(), cfg)
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

func collect(t *testing.T, seq func(func(*model.Response, error) bool)) ([]*model.Response, error) {
	t.Helper()
	var out []*model.Response
	for r, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func toJSON(t *testing.T, v any) any {
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

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	return out
}

func sampleRequest() *model.Request {
	req := &model.Request{
		Model: "gemini-2.5-flash",
		Contents: []*genai.Content{
			genai.NewContentFromText("What is the weather in Paris?", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: "call-1", Name: "get_weather", Response: map[string]any{"result": "sunny"}}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}, DisplayName: "chart.png"}},
			}},
		},
		Config: &genai.GenerateContentConfig{
			Temperature:      genai.Ptr[float32](0.5),
			MaxOutputTokens:  256,
			ResponseMIMEType: "text/plain",
			Labels:           map[string]string{"team": "a"},
		},
	}
	req.AppendInstructions("You are a weather bot.", "Be brief.")
	req.AppendFunctionDeclarations(&genai.FunctionDeclaration{
		Name:        "get_weather",
		Description: "Returns the weather for a city.",
		Parameters: &genai.Schema{
			Type:       genai.TypeObject,
			Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}},
			Required:   []string{"city"},
		},
	})
	return req
}

func TestRequestWireFormat(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*Config)
		wantPath string
		wantBody string
	}{
		{
			name:     "gemini api",
			wantPath: "/v1beta/models/gemini-2.5-flash:generateContent",
			wantBody: `{
				"contents": [
					{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
					{"role": "model", "parts": [{"functionCall": {"id": "call-1", "name": "get_weather", "args": {"city": "Paris"}}}]},
					{"role": "user", "parts": [
						{"functionResponse": {"id": "call-1", "name": "get_weather", "response": {"result": "sunny"}}},
						{"inlineData": {"mimeType": "image/png", "data": "AQID"}}
					]}
				],
				"systemInstruction": {"role": "user", "parts": [{"text": "You are a weather bot.\n\nBe brief."}]},
				"tools": [{"functionDeclarations": [{
					"name": "get_weather",
					"description": "Returns the weather for a city.",
					"parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}
				}]}],
				"generationConfig": {"temperature": 0.5, "maxOutputTokens": 256, "responseMimeType": "text/plain"}
			}`,
		},
		{
			name: "vertex keeps labels and display names",
			mutate: func(c *Config) {
				c.Backend = genai.BackendVertexAI
				c.APIKey = ""
				c.Project = "proj"
				c.Location = "us-central1"
			},
			wantPath: "/v1beta1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
			wantBody: `{
				"contents": [
					{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
					{"role": "model", "parts": [{"functionCall": {"id": "call-1", "name": "get_weather", "args": {"city": "Paris"}}}]},
					{"role": "user", "parts": [
						{"functionResponse": {"id": "call-1", "name": "get_weather", "response": {"result": "sunny"}}},
						{"inlineData": {"mimeType": "image/png", "data": "AQID", "displayName": "chart.png"}}
					]}
				],
				"systemInstruction": {"role": "user", "parts": [{"text": "You are a weather bot.\n\nBe brief."}]},
				"tools": [{"functionDeclarations": [{
					"name": "get_weather",
					"description": "Returns the weather for a city.",
					"parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}
				}]}],
				"labels": {"team": "a"},
				"generationConfig": {"temperature": 0.5, "maxOutputTokens": 256, "responseMimeType": "text/plain"}
			}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonAnswer(200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`))
			m := newModel(t, f, func(c *Config) {
				if tt.mutate != nil {
					tt.mutate(c)
				}
			})
			req := sampleRequest()
			before := toJSON(t, req)
			if _, err := collect(t, m.GenerateContent(context.Background(), req, false)); err != nil {
				t.Fatalf("GenerateContent: %v", err)
			}
			if after := toJSON(t, req); !reflect.DeepEqual(before, after) {
				t.Errorf("request was modified:\nbefore %v\nafter  %v", before, after)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if got.Method != http.MethodPost || got.Path != tt.wantPath {
				t.Errorf("request line = %s %s, want POST %s", got.Method, got.Path, tt.wantPath)
			}
			if tt.mutate == nil {
				if k := got.Header.Get("x-goog-api-key"); k != "test-key" {
					t.Errorf("x-goog-api-key = %q, want test-key", k)
				}
			}
			if want := mustJSON(t, tt.wantBody); !reflect.DeepEqual(any(got.Body), want) {
				gotJSON, _ := json.MarshalIndent(got.Body, "", "  ")
				t.Errorf("request body:\n%s\nwant:\n%s", gotJSON, tt.wantBody)
			}
		})
	}
}

func TestUserTurnAppended(t *testing.T) {
	tests := []struct {
		name     string
		contents []*genai.Content
		wantLast string
		wantLen  int
	}{
		{"empty history", nil, emptyContentsHint, 1},
		{"ends with model", []*genai.Content{
			genai.NewContentFromText("hi", genai.RoleUser),
			genai.NewContentFromText("hello", genai.RoleModel),
		}, continueHint, 3},
		{"ends with user", []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, "hi", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonAnswer(200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]}}]}`))
			m := newModel(t, f)
			req := &model.Request{Contents: tt.contents}
			if _, err := collect(t, m.GenerateContent(context.Background(), req, false)); err != nil {
				t.Fatal(err)
			}
			if len(req.Contents) != len(tt.contents) {
				t.Errorf("request contents changed to %d entries", len(req.Contents))
			}
			body := f.requests()[0]
			if body.Path != "/v1beta/models/gemini-test:generateContent" {
				t.Errorf("path %s, want the configured model", body.Path)
			}
			contents := body.Body["contents"].([]any)
			if len(contents) != tt.wantLen {
				t.Fatalf("sent %d contents, want %d", len(contents), tt.wantLen)
			}
			last := contents[len(contents)-1].(map[string]any)
			text := last["parts"].([]any)[0].(map[string]any)["text"]
			if last["role"] != "user" || text != tt.wantLast {
				t.Errorf("last content = %v, want user %q", last, tt.wantLast)
			}
		})
	}
}

func TestResponseMapping(t *testing.T) {
	tests := []struct {
		name   string
		vertex bool
		body   string
		want   string
	}{
		{
			name: "text",
			body: `{"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny."}]},"finishReason":"STOP","avgLogprobs":-0.5}],
				"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"totalTokenCount":12},"modelVersion":"gemini-2.5-flash-001"}`,
			want: `{"content":{"role":"model","parts":[{"text":"Sunny."}]},"finishReason":"STOP","avgLogprobs":-0.5,
				"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"totalTokenCount":12},"modelVersion":"gemini-2.5-flash-001"}`,
		},
		{
			name: "function calls and thought",
			body: `{"candidates":[{"content":{"role":"model","parts":[
				{"text":"Need weather.","thought":true},
				{"functionCall":{"name":"get_weather","args":{"city":"Paris","days":2}},"thoughtSignature":"c2ln"},
				{"functionCall":{"id":"fc-2","name":"get_time","args":{}}}]},"finishReason":"STOP"}]}`,
			want: `{"content":{"role":"model","parts":[
				{"text":"Need weather.","thought":true},
				{"functionCall":{"name":"get_weather","args":{"city":"Paris","days":2}},"thoughtSignature":"c2ln"},
				{"functionCall":{"id":"fc-2","name":"get_time"}}]},"finishReason":"STOP"}`,
		},
		{
			// genai drops finishMessage from Gemini API answers.
			name: "safety block",
			body: `{"candidates":[{"finishReason":"SAFETY","finishMessage":"blocked for safety"}]}`,
			want: `{"finishReason":"SAFETY","errorCode":"SAFETY"}`,
		},
		{
			name:   "safety block on vertex",
			vertex: true,
			body:   `{"candidates":[{"finishReason":"SAFETY","finishMessage":"blocked for safety","groundingMetadata":{"webSearchQueries":["q"]}}]}`,
			want:   `{"finishReason":"SAFETY","errorCode":"SAFETY","errorMessage":"blocked for safety"}`,
		},
		{
			name: "prompt feedback",
			body: `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"no"}}`,
			want: `{"errorCode":"PROHIBITED_CONTENT","errorMessage":"no"}`,
		},
		{
			name: "no candidates",
			body: `{"usageMetadata":{"promptTokenCount":3}}`,
			want: `{"content":{"role":"model"},"usageMetadata":{"promptTokenCount":3}}`,
		},
		{
			name: "stop without content",
			body: `{"candidates":[{"finishReason":"STOP"}]}`,
			want: `{"finishReason":"STOP"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonAnswer(200, tt.body))
			m := newModel(t, f, func(c *Config) {
				if tt.vertex {
					c.Backend, c.APIKey, c.Project, c.Location = genai.BackendVertexAI, "", "p", "l"
				}
			})
			got, err := collect(t, m.GenerateContent(context.Background(), sampleRequest(), false))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d responses, want 1", len(got))
			}
			if got[0].Partial {
				t.Error("non-streaming response is partial")
			}
			if g, w := toJSON(t, got[0]), mustJSON(t, tt.want); !reflect.DeepEqual(g, w) {
				t.Errorf("response = %v\nwant      %v", g, w)
			}
		})
	}
}

func TestStreaming(t *testing.T) {
	tests := []struct {
		name        string
		chunks      []string
		wantPartial []string
		wantFinal   string
	}{
		{
			name: "thought, text and a function call",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me ","thought":true}]}}],"usageMetadata":{"promptTokenCount":5}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"think.","thought":true,"thoughtSignature":"c2ln"}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"The weather "}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"is sunny."}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"log","args":{"n":1}}}]},"finishReason":"STOP"}],
				  "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"totalTokenCount":12},"modelVersion":"v-1"}`,
			},
			wantPartial: []string{
				`{"partial":true,"content":{"role":"model","parts":[{"text":"Let me ","thought":true}]},"usageMetadata":{"promptTokenCount":5}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"text":"think.","thought":true,"thoughtSignature":"c2ln"}]}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"text":"The weather "}]}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"text":"is sunny."}]}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"functionCall":{"id":"adk-test-1","name":"log","args":{"n":1}}}]},"finishReason":"STOP",
				  "usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"totalTokenCount":12},"modelVersion":"v-1"}`,
			},
			wantFinal: `{"content":{"role":"model","parts":[
					{"text":"Let me think.","thought":true,"thoughtSignature":"c2ln"},
					{"text":"The weather is sunny."},
					{"functionCall":{"id":"adk-test-1","name":"log","args":{"n":1}}}]},
				"finishReason":"STOP","usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"totalTokenCount":12},"modelVersion":"v-1"}`,
		},
		{
			name: "max tokens becomes an error code on the final response",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"Once upon"}]}}]}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":" a time"}]},"finishReason":"MAX_TOKENS","finishMessage":"too long"}]}`,
			},
			wantPartial: []string{
				`{"partial":true,"content":{"role":"model","parts":[{"text":"Once upon"}]}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"text":" a time"}]},"finishReason":"MAX_TOKENS"}`,
			},
			wantFinal: `{"content":{"role":"model","parts":[{"text":"Once upon a time"}]},"finishReason":"MAX_TOKENS","errorCode":"MAX_TOKENS"}`,
		},
		{
			name: "other candidates are dropped and usage-only chunks still count",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"A"}]}},{"index":1,"content":{"role":"model","parts":[{"text":"B"}]}}]}`,
				`{"candidates":[{"index":1,"content":{"role":"model","parts":[{"text":"C"}]}}],"usageMetadata":{"totalTokenCount":9}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"D"}]},"finishReason":"STOP"}]}`,
			},
			wantPartial: []string{
				`{"partial":true,"content":{"role":"model","parts":[{"text":"A"}]}}`,
				`{"partial":true,"content":{"role":"model","parts":[{"text":"D"}]},"finishReason":"STOP"}`,
			},
			wantFinal: `{"content":{"role":"model","parts":[{"text":"AD"}]},"finishReason":"STOP","usageMetadata":{"totalTokenCount":9}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, sseAnswer(tt.chunks...))
			m := newModel(t, f)
			got, err := collect(t, m.GenerateContent(context.Background(), sampleRequest(), true))
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || reqs[0].Query != "alt=sse" {
				t.Fatalf("requests = %+v, want one streamGenerateContent?alt=sse", reqs)
			}
			if len(got) != len(tt.wantPartial)+1 {
				t.Fatalf("got %d responses, want %d partial + 1 final", len(got), len(tt.wantPartial))
			}
			for i, w := range tt.wantPartial {
				if g := toJSON(t, got[i]); !reflect.DeepEqual(g, mustJSON(t, w)) {
					t.Errorf("partial %d = %v\nwant        %s", i, g, w)
				}
			}
			final := got[len(got)-1]
			if final.Partial {
				t.Error("final response is partial")
			}
			if g := toJSON(t, final); !reflect.DeepEqual(g, mustJSON(t, tt.wantFinal)) {
				t.Errorf("final = %v\nwant    %s", g, tt.wantFinal)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		wantCode   int
		wantStatus string
		wantMsg    string
	}{
		{"rate limited", 429, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
			429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."},
		{"bad request", 400, `{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}}`,
			400, "INVALID_ARGUMENT", "Invalid JSON payload received."},
		{"status without code", 503, `{"error":{"message":"overloaded","status":"UNAVAILABLE"}}`,
			503, "UNAVAILABLE", "overloaded"},
		{"plain text", 500, `upstream failure`, 500, "500 Internal Server Error", "upstream failure"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				f := newFake(t, jsonAnswer(tt.status, tt.body))
				m := newModel(t, f)
				got, err := collect(t, m.GenerateContent(context.Background(), sampleRequest(), stream))
				if len(got) != 0 {
					t.Errorf("got %d responses before the error", len(got))
				}
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v (%T) is not *APIError", err, err)
				}
				if ae.StatusCode != tt.wantCode || ae.Status != tt.wantStatus || ae.Message != tt.wantMsg || ae.Model != "gemini-2.5-flash" {
					t.Errorf("APIError = %+v, want %d %q %q", ae, tt.wantCode, tt.wantStatus, tt.wantMsg)
				}
				var gerr genai.APIError
				if !errors.As(err, &gerr) {
					t.Error("genai.APIError is not reachable with errors.As")
				}
				if !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), fmt.Sprint(tt.wantCode)) {
					t.Errorf("error text %q lacks code or message", err)
				}
				if tt.wantCode == 429 && !strings.Contains(err.Error(), "429-resource_exhausted") {
					t.Errorf("429 error text %q lacks the quota hint", err)
				}
			})
		}
	}
}

func TestErrorInStream(t *testing.T) {
	f := newFake(t, sseAnswer(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"partial"}]}}]}`,
		`{"error":{"code":500,"message":"stream broke","status":"INTERNAL"}}`,
	))
	m := newModel(t, f)
	got, err := collect(t, m.GenerateContent(context.Background(), sampleRequest(), true))
	if len(got) != 1 || !got[0].Partial {
		t.Fatalf("got %d responses before the error, want the one partial", len(got))
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Message != "stream broke" {
		t.Fatalf("error = %v, want APIError 500 stream broke", err)
	}
}

func TestContextCancellation(t *testing.T) {
	t.Run("unary", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		m := newModel(t, f)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := collect(t, m.GenerateContent(ctx, sampleRequest(), false))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("stream", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"first\"}]}}]}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		m := newModel(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []*model.Response
		var gotErr error
		for r, err := range m.GenerateContent(ctx, sampleRequest(), true) {
			if err != nil {
				gotErr = err
				break
			}
			got = append(got, r)
			cancel()
		}
		if len(got) != 1 || !got[0].Partial {
			t.Fatalf("got %d responses, want the first partial only", len(got))
		}
		if !errors.Is(gotErr, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", gotErr)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		f := newFake(t, jsonAnswer(200, `{}`))
		m := newModel(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := collect(t, m.GenerateContent(ctx, sampleRequest(), false))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	})
}

func TestStopEarly(t *testing.T) {
	f := newFake(t, sseAnswer(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"b"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"c"}]},"finishReason":"STOP"}]}`,
	))
	m := newModel(t, f)
	n := 0
	for _, err := range m.GenerateContent(context.Background(), sampleRequest(), true) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("loop ran %d times", n)
	}
}

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no model", Config{APIKey: "k", Backend: genai.BackendGeminiAPI}},
		{"project on gemini api", Config{Model: "m", APIKey: "k", Backend: genai.BackendGeminiAPI, Project: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(context.Background(), tt.cfg); err == nil {
				t.Fatal("New succeeded, want an error")
			}
		})
	}
}

func TestSplitAPIVersion(t *testing.T) {
	tests := []struct {
		in, wantBase, wantVersion string
	}{
		{"", "", ""},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"https://generativelanguage.googleapis.com/v1", "https://generativelanguage.googleapis.com/", "v1"},
		{"https://us-aiplatform.googleapis.com/v1beta1/", "https://us-aiplatform.googleapis.com/", "v1beta1"},
		{"https://generativelanguage.googleapis.com/", "https://generativelanguage.googleapis.com/", ""},
		{"https://generativelanguage.googleapis.com/proxy/v1", "https://generativelanguage.googleapis.com/proxy/v1", ""},
		{"https://proxy.example.com/v1", "https://proxy.example.com/v1", ""},
	}
	for _, tt := range tests {
		base, version := splitAPIVersion(tt.in)
		if base != tt.wantBase || version != tt.wantVersion {
			t.Errorf("splitAPIVersion(%q) = %q, %q; want %q, %q", tt.in, base, version, tt.wantBase, tt.wantVersion)
		}
	}
}

func TestAPIVersionFromBaseURL(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]}}]}`))
	m := newModel(t, f, func(c *Config) { c.APIVersion = "v1alpha"; c.Headers = http.Header{"X-Test": {"yes"}} })
	if _, err := collect(t, m.GenerateContent(context.Background(), &model.Request{}, false)); err != nil {
		t.Fatal(err)
	}
	got := f.requests()[0]
	if got.Path != "/v1alpha/models/gemini-test:generateContent" || got.Header.Get("X-Test") != "yes" {
		t.Errorf("request %s with X-Test %q, want v1alpha path and header", got.Path, got.Header.Get("X-Test"))
	}
}

func TestSupportsOutputSchemaWithTools(t *testing.T) {
	vertex := func(c *Config) { c.Backend, c.APIKey, c.Project, c.Location = genai.BackendVertexAI, "", "p", "l" }
	for _, tc := range []struct {
		name, model string
		vertex      bool
		expect      bool
	}{
		{"gemini api", "gemini-2.5-flash", false, false},
		{"vertex gemini", "gemini-2.5-flash", true, true},
		{"vertex resource name", "projects/p/locations/l/publishers/google/models/gemini-2.5-pro", true, true},
		{"vertex other model", "claude-3", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := []func(*Config){func(c *Config) { c.Model = tc.model }}
			if tc.vertex {
				mutate = append(mutate, vertex)
			}
			m := newModel(t, newFake(t, jsonAnswer(200, "{}")), mutate...)
			if got := m.SupportsOutputSchemaWithTools(); got != tc.expect {
				t.Fatalf("SupportsOutputSchemaWithTools() = %v, want %v", got, tc.expect)
			}
		})
	}
}
