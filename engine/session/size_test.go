package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// EventSize is the measure of run byte bounds: it must see the bytes of
// every field a guest or a model can fill, whatever its type, close to
// what the event's JSON holds.
func TestEventSize(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		ev   *session.Event
	}{
		{"text", &session.Event{Response: model.Response{Content: genai.NewContentFromText(big, "model")}}},
		{"function response", &session.Event{Response: model.Response{Content: &genai.Content{Parts: []*genai.Part{{
			FunctionResponse: &genai.FunctionResponse{Name: "t", Response: map[string]any{"a": []any{big, map[string]any{"b": big}}}}}}}}}},
		{"inline data", &session.Event{Response: model.Response{Content: &genai.Content{Parts: []*genai.Part{{
			InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte(big)}}}}}}},
		{"grounding metadata", &session.Event{Response: model.Response{GroundingMetadata: &genai.GroundingMetadata{
			WebSearchQueries: []string{big}}}}},
		{"state delta", &session.Event{Actions: session.EventActions{StateDelta: map[string]any{"k": big, "n": 1.5, "ok": true}}}},
		{"tool confirmation payload", &session.Event{Actions: session.EventActions{RequestedToolConfirmations: map[string]session.ToolConfirmation{
			"c": {Hint: "h", Payload: map[string]any{"p": big}}}}}},
		{"custom metadata", &session.Event{Response: model.Response{CustomMetadata: map[string]any{"m": big}}}},
		{"go struct output", &session.Event{Output: struct{ A, B string }{big, big}}},
		{"error message", &session.Event{Response: model.Response{ErrorMessage: big}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			got, want := session.EventSize(tc.ev), int64(len(b))
			if got < want*9/10 || got > want*11/10 {
				t.Errorf("EventSize = %d, JSON is %d bytes", got, want)
			}
		})
	}
}

func TestEventSizeCyclicValue(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	ev := &session.Event{Actions: session.EventActions{StateDelta: m}}
	if n := session.EventSize(ev); n <= 0 {
		t.Errorf("EventSize = %d", n)
	}
}

func BenchmarkEventSize(b *testing.B) {
	ev := &session.Event{ID: "e", Author: "a", Response: model.Response{Content: &genai.Content{Parts: []*genai.Part{{
		FunctionResponse: &genai.FunctionResponse{Name: "t", Response: map[string]any{"city": "Paris", "temp": 7.0, "list": []any{"a", "b"}}}}}}},
		Actions: session.EventActions{StateDelta: map[string]any{"k": "v"}}}
	b.ReportAllocs()
	for b.Loop() {
		session.EventSize(ev)
	}
}
