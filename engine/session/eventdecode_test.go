package session

import (
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// turnEventsJSON is a served turn's four events as the store keeps them:
// the user's message, the model's call with its args, the tool's response
// (keys out of sorted order, so with a key-order hint) and the model's
// answer with a state change, each agent event with its node path.
func turnEventsJSON(tb testing.TB) [][]byte {
	ts := time.Unix(1795588512, 987037000)
	node := &NodeInfo{Path: "weather_agent@1"}
	const inv = "e-574282bc-2cdf-43a5-9399-4785aacfc171"
	events := []*Event{
		{ID: "2b0cf1a8-5c8e-4d51-9d0e-7f1c2f0a6a11", InvocationID: inv, Author: "user", Timestamp: ts,
			Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "What's the weather in Paris?"}}}}},
		{ID: "e225cd3e-5752-4afb-b615-de948a59fd33", InvocationID: inv, Author: "weather_agent", Timestamp: ts, NodeInfo: node,
			Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				ID: "adk-ac19900a-61d3-4653-bc57-6af626697205", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": 3.0}}}}}}},
		{ID: "4f1c6da1-0519-4cbf-b0dd-9f908f965d50", InvocationID: inv, Author: "weather_agent", Timestamp: ts, NodeInfo: node,
			Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				ID: "adk-ac19900a-61d3-4653-bc57-6af626697205", Name: "get_weather",
				Response: map[string]any{"city": "Paris", "days": []any{map[string]any{"summary": "sunny", "highC": 21.0}}}}}}},
				KeyOrder: []json.RawMessage{json.RawMessage(`{"city":0,"days":[{"summary":0,"highC":0}]}`)}}},
		{ID: "bfd09c53-25a2-4f25-8e9d-29a79428b07a", InvocationID: inv, Author: "weather_agent", Timestamp: ts, NodeInfo: node,
			Actions:  EventActions{StateDelta: map[string]any{"user:last_city": "Paris"}},
			Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "It is sunny in Paris, 21 °C.\nTake sunglasses."}}}}},
	}
	out := make([][]byte, len(events))
	for i, e := range events {
		b, err := e.MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// BenchmarkEventUnmarshal decodes a served turn's four events, as the
// bbolt store does on each Get of a session.
func BenchmarkEventUnmarshal(b *testing.B) {
	turn := turnEventsJSON(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range turn {
			var e Event
			if err := e.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	}
}
