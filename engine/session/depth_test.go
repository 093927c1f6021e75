package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
)

// The bounded service is still a Service: nothing the suite writes nests
// deep enough to be refused.
func TestDepthLimitConformance(t *testing.T) {
	newSvc := func(*testing.T) session.Service {
		return session.WithDepthLimit(session.NewInMemoryService(), 0)
	}
	sessiontest.Run(t, newSvc)
	sessiontest.RunKeyOrder(t, newSvc)
}

// nested is n objects inside each other: {"a": {"a": ... 1}}.
func nested(n int) any {
	var v any = 1.0
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// A client's function response, a tool's result or a state delta nesting
// 9,000 levels was stored (encoding/json reads 10,000), and Python's json
// raises RecursionError past about 1,000: google-adk could no longer load
// a session it shares with adkhost. Past the bound the write is refused
// naming the field; the bound itself passes.
func TestDepthLimit(t *testing.T) {
	ctx := context.Background()
	svc := session.WithDepthLimit(session.NewInMemoryService(), 10)
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s", State: map[string]any{"k": nested(9)}})
	if err != nil {
		t.Fatalf("a state at the bound: %v", err)
	}
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s2", State: map[string]any{"k": nested(10)}})
	tooDeep(t, err, "the initial state", "state")

	resp := session.NewEvent("inv", "tools", "")
	resp.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "t", Response: map[string]any{"deep": nested(10)}}}}}
	tooDeep(t, svc.AppendEvent(ctx, s, resp), `an event of "tools"`, "a function response")

	delta := session.NewEvent("inv", "user", "")
	delta.Actions.StateDelta = map[string]any{"k": []any{nested(9)}}
	tooDeep(t, svc.AppendEvent(ctx, s, delta), `an event of "user"`, "state delta")

	ok := session.NewEvent("inv", "user", "")
	ok.Actions.StateDelta = map[string]any{"k": nested(9), "raw": json.RawMessage(`[[[[1]]]]`)}
	if err := svc.AppendEvent(ctx, s, ok); err != nil {
		t.Fatalf("a delta at the bound: %v", err)
	}
	typed := session.NewEvent("inv", "user", "")
	typed.Actions.StateDelta = map[string]any{"raw": json.RawMessage(strings.Repeat("[", 11) + strings.Repeat("]", 11))}
	tooDeep(t, svc.AppendEvent(ctx, s, typed), `an event of "user"`, "state delta")

	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Events()); n != 1 {
		t.Errorf("stored %d events, want only the one within the bound", n)
	}
}

func tooDeep(t *testing.T, err error, what, field string) {
	t.Helper()
	var e *session.TooDeepError
	if !errors.As(err, &e) || !errors.Is(err, session.ErrTooDeep) || e.What != what || e.Field != field || e.Limit != 10 {
		t.Fatalf("err = %v, want a TooDeepError for %s, %s", err, what, field)
	}
	if msg := err.Error(); !strings.Contains(msg, "more than 10 levels") || !strings.Contains(msg, field) {
		t.Errorf("message %q does not name the field and the bound", msg)
	}
}

// EventTooDeep must look at every field of an event that may hold any
// value: a field genai or the engine adds is named here, so the walker
// has to learn it.
func TestEventTooDeepCoversEveryValue(t *testing.T) {
	var paths []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		switch t.Kind() {
		case reflect.Interface:
			paths = append(paths, path)
			return
		case reflect.Pointer, reflect.Slice, reflect.Array:
			if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Interface {
				paths = append(paths, path)
				return
			}
			walk(t.Elem(), path)
			return
		case reflect.Map:
			if t.Elem().Kind() == reflect.Interface {
				paths = append(paths, path)
				return
			}
			walk(t.Elem(), path+"[]")
			return
		case reflect.Struct:
			if seen[t] {
				return
			}
			seen[t] = true
			defer delete(seen, t)
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() || f.Tag.Get("json") == "-" {
					continue
				}
				p := f.Name
				if !f.Anonymous {
					p = strings.TrimPrefix(path+"."+f.Name, ".")
				} else {
					p = path
				}
				walk(f.Type, p)
			}
		}
	}
	walk(reflect.TypeFor[session.Event](), "")
	slices.Sort(paths)
	covered := []string{
		"Actions.AgentState", "Actions.Compaction.CompactedContent.Parts.FunctionCall.Args",
		"Actions.Compaction.CompactedContent.Parts.FunctionResponse.Response",
		"Actions.Compaction.CompactedContent.Parts.PartMetadata",
		"Actions.Compaction.CompactedContent.Parts.ToolCall.Args",
		"Actions.Compaction.CompactedContent.Parts.ToolResponse.Response",
		"Actions.RequestedAuthConfigs", "Actions.RequestedToolConfirmations[].Payload",
		"Actions.SetModelResponse", "Actions.StateDelta",
		"Content.Parts.FunctionCall.Args", "Content.Parts.FunctionResponse.Response", "Content.Parts.PartMetadata",
		"Content.Parts.ToolCall.Args", "Content.Parts.ToolResponse.Response",
		"CustomMetadata", "Output",
	}
	if !slices.Equal(paths, covered) {
		t.Errorf("fields of Event that hold any value:\n%s\nEventTooDeep covers:\n%s", strings.Join(paths, "\n"), strings.Join(covered, "\n"))
	}
}

func TestJSONDepth(t *testing.T) {
	for s, want := range map[string]int{
		`1`: 0, `"[["`: 0, `[]`: 1, `{"a":[1,{"b":"]]]\"["}]}`: 3, `[[],[[]]]`: 3, `{"\\":[]}`: 2,
	} {
		if got := session.JSONDepth([]byte(s)); got != want {
			t.Errorf("JSONDepth(%s) = %d, want %d", s, got, want)
		}
	}
}

// FuzzJSONDepth checks the scan against the depth of the decoded value.
func FuzzJSONDepth(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"]"}]}`, `"\\\""`, `[[[]]]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		var depth func(v any) int
		depth = func(v any) int {
			d := 0
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					d = max(d, depth(e))
				}
				return d + 1
			case []any:
				for _, e := range x {
					d = max(d, depth(e))
				}
				return d + 1
			}
			return 0
		}
		if got, want := session.JSONDepth(b), depth(v); got != want {
			t.Fatalf("JSONDepth(%q) = %d, the value nests %d", b, got, want)
		}
	})
}
