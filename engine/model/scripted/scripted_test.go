package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

func textResponse(s string) *model.Response {
	return &model.Response{Content: genai.NewContentFromText(s, genai.RoleModel)}
}

func run(t *testing.T, m *Model, req *model.Request, stream bool) ([]*model.Response, error) {
	t.Helper()
	var out []*model.Response
	for r, err := range m.GenerateContent(context.Background(), req, stream) {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestAnswersInOrderAndRecords(t *testing.T) {
	m := New("mock", textResponse("one"), textResponse("two"))
	if m.Name() != "mock" {
		t.Fatalf("Name = %q", m.Name())
	}
	req := &model.Request{Model: "mock", Contents: []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}}
	req.AppendInstructions("Be nice.")
	for _, want := range []string{"one", "two"} {
		got, err := run(t, m, req, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Content.Parts[0].Text != want || got[0].Partial {
			t.Fatalf("got %s, want one response %q", asJSON(t, got), want)
		}
		// The engine changes the request after the call.
		req.Contents = append(req.Contents, got[0].Content)
		req.Contents[0].Parts[0].Text = "mutated"
		req.AppendInstructions("More.")
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("recorded %d requests, want 2", len(reqs))
	}
	if got := reqs[0].Contents[0].Parts[0].Text; got != "hi" {
		t.Errorf("first record saw later mutation: text %q", got)
	}
	if len(reqs[0].Contents) != 1 || len(reqs[1].Contents) != 2 {
		t.Errorf("recorded contents %d and %d, want 1 and 2", len(reqs[0].Contents), len(reqs[1].Contents))
	}
	if got := reqs[0].SystemInstructionText(); got != "Be nice." {
		t.Errorf("first record's instruction = %q", got)
	}
	// Changing what Requests returned must not change the record either.
	reqs[1].Contents = nil
	if len(m.Requests()[1].Contents) != 2 {
		t.Error("Requests returned the record itself")
	}
	if m.Remaining() != 0 {
		t.Errorf("Remaining = %d", m.Remaining())
	}
}

func TestResponsesAreCopies(t *testing.T) {
	orig := textResponse("keep")
	m := New("mock", orig, orig)
	got, _ := run(t, m, &model.Request{}, false)
	got[0].Content.Parts[0].Text = "changed"
	got, _ = run(t, m, &model.Request{}, false)
	if got[0].Content.Parts[0].Text != "keep" || orig.Content.Parts[0].Text != "keep" {
		t.Fatal("a yielded response shares content with the script")
	}
}

func TestExhausted(t *testing.T) {
	m := New("my-model", textResponse("only"))
	if _, err := run(t, m, &model.Request{}, false); err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		_, err := run(t, m, &model.Request{}, stream)
		if !errors.Is(err, ErrExhausted) {
			t.Fatalf("error = %v, want ErrExhausted", err)
		}
		for _, want := range []string{`"my-model"`, "call ", "holds 1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	}
	if !strings.Contains(fmt.Sprint(func() error { _, err := run(t, m, nil, false); return err }()), "call 4") {
		t.Error("call count is not in the error")
	}
	if n := len(m.Requests()); n != 4 {
		t.Errorf("recorded %d requests, want 4", n)
	}
}

func TestStepError(t *testing.T) {
	boom := errors.New("boom")
	m := FromSteps("mock", Step{Err: boom}, Step{Response: textResponse("after")})
	for _, stream := range []bool{true, false} {
		got, err := run(t, m, &model.Request{}, stream)
		if stream {
			if !errors.Is(err, boom) || len(got) != 0 {
				t.Fatalf("got %d responses and %v, want only boom", len(got), err)
			}
		} else if err != nil || got[0].Content.Parts[0].Text != "after" {
			t.Fatalf("second call: %v", err)
		}
	}
}

func TestStreaming(t *testing.T) {
	usage := &genai.GenerateContentResponseUsageMetadata{TotalTokenCount: 7}
	tests := []struct {
		name string
		resp *model.Response
		want []string
	}{
		{
			name: "text split in two",
			resp: &model.Response{Content: genai.NewContentFromText("Hello there, world", genai.RoleModel), FinishReason: genai.FinishReasonStop, UsageMetadata: usage},
			want: []string{
				`{"content":{"parts":[{"text":"Hello "}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"there, world"}],"role":"model"},"partial":true,"finishReason":"STOP","usageMetadata":{"totalTokenCount":7}}`,
				`{"content":{"parts":[{"text":"Hello there, world"}],"role":"model"},"finishReason":"STOP","usageMetadata":{"totalTokenCount":7}}`,
			},
		},
		{
			name: "thought, text and a call",
			resp: &model.Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "hmm", Thought: true},
				{Text: "ok"},
				{FunctionCall: &genai.FunctionCall{Name: "f", Args: map[string]any{"a": 1.0}}},
			}}},
			want: []string{
				`{"content":{"parts":[{"text":"h","thought":true}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"mm","thought":true}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"o"}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"k"}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"functionCall":{"args":{"a":1},"name":"f"}}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"hmm","thought":true},{"text":"ok"},{"functionCall":{"args":{"a":1},"name":"f"}}],"role":"model"}}`,
			},
		},
		{
			name: "error response",
			resp: &model.Response{ErrorCode: "SAFETY", ErrorMessage: "blocked"},
			want: []string{
				`{"partial":true,"errorCode":"SAFETY","errorMessage":"blocked"}`,
				`{"errorCode":"SAFETY","errorMessage":"blocked"}`,
			},
		},
		{
			name: "one rune",
			resp: textResponse("é"),
			want: []string{
				`{"content":{"parts":[{"text":"é"}],"role":"model"},"partial":true}`,
				`{"content":{"parts":[{"text":"é"}],"role":"model"}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run(t, New("mock", tt.resp), &model.Request{}, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d responses: %s", len(got), asJSON(t, got))
			}
			for i, w := range tt.want {
				var want, have any
				json.Unmarshal([]byte(w), &want)
				json.Unmarshal([]byte(asJSON(t, got[i])), &have)
				if !reflect.DeepEqual(have, want) {
					t.Errorf("response %d = %s\nwant %s", i, asJSON(t, got[i]), w)
				}
			}
		})
	}
}

func TestSplitText(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"ab", []string{"a", "b"}},
		{"one two three four", []string{"one two ", "three four"}},
		{"nospaceshere", []string{"nospac", "eshere"}},
		{"héllo wörld", []string{"héllo ", "wörld"}},
		{"日本語テキスト", []string{"日本語", "テキスト"}},
	}
	for _, tt := range tests {
		got := splitText(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("splitText(%q) lost text", tt.in)
		}
	}
}

func TestStopEarlyAndCancel(t *testing.T) {
	m := New("mock", textResponse("some longer text"), textResponse("next"))
	n := 0
	for range m.GenerateContent(context.Background(), &model.Request{}, true) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("loop ran %d times", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range m.GenerateContent(ctx, &model.Request{}, false) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	}
	if m.Remaining() != 1 {
		t.Errorf("a cancelled call used a step: remaining %d", m.Remaining())
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var got []*model.Response
	var gotErr error
	for r, err := range m.GenerateContent(ctx, &model.Request{}, true) {
		if err != nil {
			gotErr = err
			break
		}
		got = append(got, r)
		cancel()
	}
	if len(got) != 1 || !errors.Is(gotErr, context.Canceled) {
		t.Fatalf("got %d responses and %v, want 1 then context.Canceled", len(got), gotErr)
	}
}

func TestConcurrentUse(t *testing.T) {
	const n = 50
	resps := make([]*model.Response, n)
	for i := range resps {
		resps[i] = textResponse(fmt.Sprint(i))
	}
	m := New("mock", resps...)
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &model.Request{Contents: []*genai.Content{genai.NewContentFromText("q", genai.RoleUser)}}
			for r, err := range m.GenerateContent(context.Background(), req, i%2 == 0) {
				if err != nil {
					t.Error(err)
					return
				}
				if !r.Partial {
					seen <- r.Content.Parts[0].Text
				}
			}
		}()
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for s := range seen {
		got[s] = true
	}
	if len(got) != n || len(m.Requests()) != n {
		t.Fatalf("%d distinct answers and %d requests, want %d each", len(got), len(m.Requests()), n)
	}
}
