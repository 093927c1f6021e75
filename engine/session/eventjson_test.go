package session

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// checkEventJSON compares MarshalJSON with the reflective encoding.
func checkEventJSON(t *testing.T, e *Event) {
	t.Helper()
	got, err := e.MarshalJSON()
	want, werr := marshalEventReflect(*e)
	if (err != nil) != (werr != nil) {
		t.Fatalf("MarshalJSON error %v, reflective encoding error %v", err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalJSON:\n%s\nreflective encoding:\n%s", got, want)
	}
}

// encoderEvents are events with every kind of field and value the
// encoder handles (some it must refuse: NaN, Inf).
func encoderEvents() []*Event {
	yes := true
	ts := time.Unix(1732500000, 123456000)
	return []*Event{
		{ID: "e1", InvocationID: "i", Author: "user", Timestamp: ts,
			Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "a <b> & \"c\"\n\t\u2028 \xff é \x01\x08\x0c"}}}}},
		{ID: "e2", Author: "agent", Branch: "a.b", Timestamp: ts, LongRunningToolIDs: []string{"x", "<y>"},
			Response: model.Response{
				Content: &genai.Content{Role: "model", Parts: []*genai.Part{
					{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f", Args: map[string]any{"b": int64(1), "a": []any{1.5, 1e21, 1e-7, -0.0, "s", nil, true, map[string]any{"z": 1, "y": struct{ A int }{2}}}}, WillContinue: &yes}},
					{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "f", Response: map[string]any{"r": map[string]string{"k": "v"}}, Scheduling: "WHEN_IDLE"}},
					{}, nil, {Text: "t", Thought: true, ThoughtSignature: []byte{1, 2, 3, 250}},
					{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("png")}, PartMetadata: map[string]any{"k": 1}},
				}},
				KeyOrder:           []json.RawMessage{json.RawMessage(`{"b":0,"a":[0,0,0,0,0,0,0,{"z":0,"y":0}]}`), json.RawMessage(`{"r":0}`)},
				UsageMetadata:      &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 3},
				CustomMetadata:     map[string]any{},
				AvgLogprobs:        -0.25,
				FinishReason:       genai.FinishReasonStop,
				TurnComplete:       true,
				InputTranscription: &genai.Transcription{Text: "hi", Finished: true},
			},
			Actions: EventActions{StateDelta: map[string]any{"b": 1.0, "a": "x"}, ArtifactDelta: map[string]int{"f": 1},
				RequestedToolConfirmations: map[string]ToolConfirmation{"c": {Hint: "h"}}, AgentState: map[string]any{},
				Compaction: &EventCompaction{StartTimestamp: 1, CompactedContent: &genai.Content{}}, SetModelResponse: map[string]any{"x": 1}},
			NodeInfo: &NodeInfo{Path: "p"}, Output: []any{1, "x"}, IsolationScope: "s"},
		{ID: "e3", Actions: EventActions{StateDelta: map[string]any{"x": math.NaN()}}},
		{ID: "e4", Response: model.Response{AvgLogprobs: math.Inf(1)}},
		{ID: "e5", Response: model.Response{Content: &genai.Content{}}},
		{ID: "e6", Actions: EventActions{ArtifactDelta: map[string]int{}}},
		{ID: "e8", NodeInfo: &NodeInfo{Path: "a/<b>\u2028", OutputFor: []string{"a", "", "\xff"}, MessageAsOutput: true}},
		{ID: "e9", NodeInfo: &NodeInfo{OutputFor: []string{}}},
		{ID: "e7", Actions: EventActions{ArtifactDelta: map[string]int{"b.txt": 2, "a<&>\u2028\xff": -1, "": 0, "é": 1 << 40}}},
	}
}

func TestEventJSONMatchesReflection(t *testing.T) {
	for _, e := range encoderEvents() {
		checkEventJSON(t, e)
	}
}

// FuzzEventJSON decodes events from the fuzzer's JSON (every field genai
// and the engine define, key orders read back) and compares the encoder
// with the reflective encoding.
func FuzzEventJSON(f *testing.F) {
	for _, s := range eventJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Event
		if json.Unmarshal(data, &e) != nil {
			return
		}
		checkEventJSON(t, &e)
	})
}

// eventJSONSeeds are events with most fields genai and the engine define,
// and dicts out of sorted order: seeds of both fuzzers.
var eventJSONSeeds = []string{
	`{"content":{"parts":[{"functionCall":{"id":"c","name":"f","args":{"b":1,"a":{"d":[{"y":1,"x":2}],"c":"<&>"}}}}],"role":"model"},"id":"e","invocationId":"i","author":"a","actions":{"stateDelta":{"k":1}},"timestamp":1.5}`,
	`{"content":{"parts":[{"text":""},{"functionResponse":{"name":"f","response":{"z":1,"a":null}},"thoughtSignature":"AQID"}]},"actions":{},"usageMetadata":{"promptTokenCount":1},"groundingMetadata":{"webSearchQueries":["q"]},"errorCode":"E","partial":true,"longRunningToolIds":["x"]}`,
	`{"content":{"parts":[{"text":"a"}],"role":"model"},"groundingMetadata":{"webSearchQueries":["q"]},"partial":false,"turnComplete":true,"customMetadata":{"partial":true}}`,
	`{"actions":{"requestedAuthConfigs":{"a":{"b":1}},"agentState":{},"endOfAgent":true,"escalate":true,"transferToAgent":"t","rewindBeforeInvocationId":"r","compaction":{"startTimestamp":1,"endTimestamp":2,"compactedContent":{"parts":[{"text":"s"}]}}},"nodeInfo":{"path":"a/b"},"output":{"b":1,"a":2},"avgLogprobs":1e-9,"timestamp":1e21}`,
	`{"nodeInfo":{"path":"p","outputFor":["a","b"],"messageAsOutput":true},"id":"e"}`,
	`{"actions":{"artifactDelta":{"z":1,"a":0,"\u003c":3}},"id":"e"}`,
}

// BenchmarkEventJSON encodes a served turn's four events (the user's
// message, a call, its response with a key order, the answer).
func BenchmarkEventJSON(b *testing.B) {
	turn := func() []*Event {
		ts := time.Now()
		return []*Event{
			{ID: "e1", InvocationID: "e-1", Author: "user", Timestamp: ts, Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Paris"}}}}},
			{ID: "e2", InvocationID: "e-1", Author: "agent", Timestamp: ts, NodeInfo: &NodeInfo{Path: "agent"}, Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "adk-1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}}}},
			{ID: "e3", InvocationID: "e-1", Author: "agent", Timestamp: ts, NodeInfo: &NodeInfo{Path: "agent"}, Actions: EventActions{StateDelta: map[string]any{"user:last_city": "Paris"}},
				Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "adk-1", Name: "get_weather",
					Response: map[string]any{"city": "Paris", "days": []any{map[string]any{"summary": "sunny", "highC": 21.0}}}}}}},
					KeyOrder: []json.RawMessage{json.RawMessage(`{"city":0,"days":[{"summary":0,"highC":0}]}`)}}},
			{ID: "e4", InvocationID: "e-1", Author: "agent", Timestamp: ts, NodeInfo: &NodeInfo{Path: "agent"}, Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "weather in Paris"}}}}},
		}
	}()
	for _, enc := range []struct {
		name string
		fn   func(Event) ([]byte, error)
	}{{"encoder", Event.MarshalJSON}, {"reflect", marshalEventReflect}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range turn {
					if _, err := enc.fn(*e); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
