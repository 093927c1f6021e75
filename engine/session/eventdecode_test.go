package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// checkUnmarshal decodes data with UnmarshalJSON and with the reflective
// decoding, each into a receiver from fresh(), and fails unless the
// events and errors are the same. It reports whether the decoder took
// the input itself.
func checkUnmarshal(t *testing.T, data []byte, fresh func() *Event) (decoded bool) {
	t.Helper()
	got, want := fresh(), fresh()
	err := got.UnmarshalJSON(data)
	werr := unmarshalEventReflect(want, data)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("UnmarshalJSON(%q): error %v, reflective decoding: %v", data, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UnmarshalJSON(%q):\n%#v\nreflective decoding:\n%#v", data, *got, *want)
	}
	probe := fresh()
	if !decodeEvent(data, probe) {
		return false
	}
	if werr != nil || !reflect.DeepEqual(probe, want) {
		t.Fatalf("decodeEvent(%q) took an input the reflective decoding gives\n%#v, %v", data, *want, werr)
	}
	return true
}

// zeroEvent is the receiver the stores decode into.
func zeroEvent() *Event { return new(Event) }

// filledEvent is a receiver that already holds an event with most
// fields set, which encoding/json decodes into, merging.
func filledEvent() *Event {
	e := new(Event)
	err := unmarshalEventReflect(e, []byte(`{"content":{"parts":[{"functionCall":{"id":"c","name":"f","args":{"b":1,"a":2}}},{"text":"t"}],"role":"model"},`+
		`"usageMetadata":{"promptTokenCount":1},"customMetadata":{"m":1},"id":"e","invocationId":"i","author":"a","branch":"b",`+
		`"actions":{"stateDelta":{"k":1},"artifactDelta":{"f":1},"requestedAuthConfigs":{"c":{}},"requestedToolConfirmations":{"c":{"hint":"h"}},"agentState":{"s":0},"setModelResponse":{"x":1},"escalate":true},`+
		`"longRunningToolIds":["c"],"nodeInfo":{"path":"p","outputFor":["o"]},"output":{"o":1},"timestamp":1.5}`))
	if err != nil {
		panic(err)
	}
	e.Actions.StateKeyOrder = map[string]json.RawMessage{"k": json.RawMessage(`0`)}
	return e
}

// unmarshalSeeds are events as they are stored and sent: the turn's, the
// encoder's test events, the fuzzers' seeds, google-adk's own events
// (testdata/adk_events) and the conformance goldens' events, their
// snake_case keys (FORMAT.md) made camelCase again.
func unmarshalSeeds(tb testing.TB) [][]byte {
	out := turnEventsJSON(tb)
	for _, e := range encoderEvents() {
		if b, err := e.MarshalJSON(); err == nil {
			out = append(out, b)
		}
	}
	for _, s := range eventJSONSeeds {
		out = append(out, []byte(s))
	}
	files, _ := filepath.Glob("testdata/adk_events/*.json")
	golden, _ := filepath.Glob("../../conformance/golden/*.json")
	if len(files) == 0 || len(golden) == 0 {
		tb.Fatal("no event fixtures in testdata/adk_events or conformance/golden")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	for _, f := range golden {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var g struct {
			Sessions, Turns []struct{ Events []any }
		}
		if err := json.Unmarshal(b, &g); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, s := range append(g.Sessions, g.Turns...) {
			for _, ev := range s.Events {
				b, err := json.Marshal(camelKeys(ev))
				if err != nil {
					tb.Fatal(err)
				}
				out = append(out, b)
				// And as the store writes it, when it decodes.
				var e Event
				if unmarshalEventReflect(&e, b) == nil {
					if b, err := e.MarshalJSON(); err == nil {
						out = append(out, b)
					}
				}
			}
		}
	}
	return out
}

// camelKeys renames the keys of every object in v from snake_case.
func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			parts := strings.Split(k, "_")
			for i := 1; i < len(parts); i++ {
				if parts[i] != "" {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
			}
			m[strings.Join(parts, "")] = camelKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = camelKeys(e)
		}
	}
	return v
}

func TestEventUnmarshalMatchesReflection(t *testing.T) {
	decoded := 0
	seeds := unmarshalSeeds(t)
	for _, data := range seeds {
		if checkUnmarshal(t, data, zeroEvent) {
			decoded++
		}
		checkUnmarshal(t, data, filledEvent)
	}
	t.Logf("decoded %d of %d", decoded, len(seeds))
	// Most real events are the decoder's own: a seed it leaves to
	// reflection has a rare field (grounding, blobs, compaction...).
	if decoded < len(seeds)*3/4 {
		t.Errorf("the decoder took %d of %d seed events", decoded, len(seeds))
	}
	for _, data := range turnEventsJSON(t) {
		if !checkUnmarshal(t, data, zeroEvent) {
			t.Errorf("the decoder left a turn's event to reflection: %s", data)
		}
	}
}

// FuzzEventUnmarshal checks UnmarshalJSON against the reflective
// decoding, into an empty event and into one that holds an event.
func FuzzEventUnmarshal(f *testing.F) {
	for _, data := range unmarshalSeeds(f) {
		f.Add(data)
	}
	for _, c := range unmarshalEdgeCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkUnmarshal(t, data, zeroEvent)
		checkUnmarshal(t, data, filledEvent)
	})
}

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

// unmarshalEdgeCases are inputs where encoding/json does something
// particular: the decoder handles some itself (decoded) and must leave
// the others to reflection. Each fallback of the decoder has a case here
// that gives another event or error without it.
var unmarshalEdgeCases = []struct {
	name    string
	data    string
	into    func() *Event // nil: an empty event
	decoded bool
}{
	// Handled by the decoder.
	{name: "empty", data: `{}`, decoded: true},
	{name: "white space", data: " \t\n\r{ \"id\" : \"e\" ,\n\"content\" : { \"parts\" : [ { \"text\" : \"x\" } , {} ] } }\r\n", decoded: true},
	{name: "escapes", data: `{"content":{"parts":[{"text":"a\nb \"q\" \\ \/ \b\f\r\t \u003c\u0026\u003e \u2028 \u00e9 \u0000 \ud83d\ude00 \uFFFD"}]},"id":"e"}`, decoded: true},
	{name: "lone surrogates", data: `{"id":"\ud800x \udc00 \ud800\u0041 \ud83d\ud83d\ude00 \udbff","author":"\ud800"}`, decoded: true},
	{name: "UTF-8", data: "{\"author\":\"é 日本 \xef\xbf\xbd\",\"content\":{\"parts\":[{\"text\":\"\xf0\x9f\x98\x80\"}]}}", decoded: true},
	{name: "escaped keys in values", data: `{"actions":{"stateDelta":{"\u0062":1,"a":{"y\n":1,"x":2,"\u00e9":3}}},"content":{"parts":[{"functionCall":{"args":{"\u0062":1,"a":2}}}]}}`, decoded: true},
	{name: "duplicate scalar keys", data: `{"id":"a","id":"b","partial":true,"partial":false,"timestamp":1,"timestamp":2,"actions":{"escalate":true},"actions":{"transferToAgent":"t"}}`, decoded: true},
	{name: "duplicate keys in values", data: `{"actions":{"stateDelta":{"a":1,"a":{"b":2}},"artifactDelta":{"f":1,"f":2}},"content":{"parts":[{"functionCall":{"name":"f","args":{"b":1,"a":2,"b":3}}},{"functionCall":{"args":{"b":{"y":1,"x":2},"a":2,"b":{"y":1,"x":2}}}}]}}`, decoded: true},
	{name: "key orders", data: `{"content":{"parts":[{"functionResponse":{"name":"g","response":{"z":1,"a":2}},"functionCall":{"name":"f","args":{"x":2,"y":1}}},{"functionResponse":{"response":{"a":[{"d":1,"c":2}],"b":2}}},{"text":"t"},{"functionCall":{"args":{"a":{"":1,"b":2},"b":[]}}},{"functionResponse":{"response":{"b":1,"a":2}}}]}}`, decoded: true},
	{name: "empty containers", data: `{"content":{"parts":[]},"longRunningToolIds":[],"actions":{"stateDelta":{},"artifactDelta":{},"requestedAuthConfigs":{},"requestedToolConfirmations":{},"agentState":{}},"nodeInfo":{"path":"","outputFor":[]},"output":[],"customMetadata":{}}`, decoded: true},
	{name: "numbers", data: `{"timestamp":-0,"avgLogprobs":1E-2,"actions":{"stateDelta":{"a":-0.0,"b":1e308,"c":12345678901234567890,"d":5e-324,"e":1e-400,"f":0.1e+1,"g":[0,-1]},"artifactDelta":{"f":-0,"g":9223372036854775807}}}`, decoded: true},
	{name: "null in values", data: `{"actions":{"stateDelta":{"a":null,"b":[null]},"setModelResponse":null},"output":null,"content":{"parts":[{"functionResponse":{"response":{"result":null}}}]}}`, decoded: true},
	{name: "thought signatures", data: `{"content":{"parts":[{"thoughtSignature":"","thought":true},{"thoughtSignature":"AQ\nID","text":"t"},{"thoughtSignature":"AQID+g=="}]}}`, decoded: true},
	{name: "usage", data: `{"usageMetadata":{"promptTokenCount":2147483647,"candidatesTokenCount":-2147483648,"totalTokenCount":0,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3},{}],"cacheTokensDetails":[],"trafficType":"ON_DEMAND"},"finishReason":"STOP","modelVersion":"m","interactionId":"x"}`, decoded: true},
	{name: "scalars into an event", data: `{"id":"x","author":"b","partial":true,"timestamp":2}`, into: filledEvent, decoded: true},
	{name: "explicit partial false", data: `{"partial":false,"turnComplete":true}`, decoded: true},
	{name: "partial twice", data: `{"partial":true,"partial":false}`, decoded: true},
	{name: "no partial into an event", data: `{"id":"x"}`, into: func() *Event { return &Event{Response: model.Response{Partial: true, Aggregated: true}} }, decoded: true},

	// Left to reflection.
	{name: "unknown key", data: `{"id":"e","invocation_id":"i"}`},
	{name: "key in another case", data: `{"ID":"x","Content":{"Parts":[{"Text":"t"}]},"actions":{"StateDelta":{"a":1}}}`},
	{name: "key folded by Unicode", data: "{\"i\u017folationScope\":\"s\"}"},
	{name: "escaped key", data: `{"\u0069d":"x","content":{"p\u0061rts":[{"text":"t"}]}}`},
	{name: "duplicate content", data: `{"content":{"parts":[{"text":"a"}]},"content":{"role":"model"}}`},
	{name: "duplicate parts", data: `{"content":{"parts":[{"text":"a","thought":true}],"parts":[{"text":"b"}]}}`},
	{name: "duplicate call", data: `{"content":{"parts":[{"functionCall":{"id":"a","name":"f"},"functionCall":{"id":"b"}}]}}`},
	{name: "duplicate response", data: `{"content":{"parts":[{"functionResponse":{"id":"a","name":"f"},"functionResponse":{"id":"b"}}]}}`},
	{name: "duplicate args", data: `{"content":{"parts":[{"functionCall":{"args":{"a":1},"args":{"b":2}}}]}}`},
	{name: "duplicate response value", data: `{"content":{"parts":[{"functionResponse":{"response":{"a":1},"response":{"b":2}}}]}}`},
	{name: "duplicate state delta", data: `{"actions":{"stateDelta":{"a":1}},"actions":{"stateDelta":{"b":2}}}`},
	{name: "duplicate artifact delta", data: `{"actions":{"artifactDelta":{"a":1},"artifactDelta":{"b":2}}}`},
	{name: "duplicate node info", data: `{"nodeInfo":{"path":"p","messageAsOutput":true},"nodeInfo":{"outputFor":["o"]}}`},
	{name: "duplicate usage", data: `{"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"totalTokenCount":2}}`},
	{name: "duplicate usage details", data: `{"usageMetadata":{"promptTokensDetails":[{"modality":"TEXT"}],"promptTokensDetails":[{"tokenCount":2}]}}`},
	{name: "duplicate output", data: `{"output":{"a":1},"output":{"b":2}}`},
	{name: "into an event", data: `{"content":{"parts":[{"text":"x"}]},"actions":{"stateDelta":{"n":2},"artifactDelta":{"g":2},"setModelResponse":{"y":2}},"usageMetadata":{"totalTokenCount":3},"nodeInfo":{"path":"q"},"customMetadata":{"c":1},"longRunningToolIds":["d"]}`, into: filledEvent},
	{name: "into an event's maps", data: `{"actions":{"requestedAuthConfigs":{"a":{}},"agentState":{"t":1}}}`, into: filledEvent},
	{name: "empty into an event's state delta", data: `{"actions":{"stateDelta":{}}}`, into: filledEvent},
	{name: "empty into an event's artifact delta", data: `{"actions":{"artifactDelta":{}}}`, into: filledEvent},
	{name: "empty into an event's auth configs", data: `{"actions":{"requestedAuthConfigs":{}}}`, into: filledEvent},
	{name: "empty into an event's agent state", data: `{"actions":{"agentState":{}}}`, into: filledEvent},
	{name: "empty into an event's tool confirmations", data: `{"actions":{"requestedToolConfirmations":{}}}`, into: filledEvent},
	{name: "empty into an event's custom metadata", data: `{"customMetadata":{}}`, into: filledEvent},
	{name: "list into an event", data: `{"longRunningToolIds":["x","y"]}`, into: filledEvent, decoded: true},
	{name: "list of strings twice", data: `{"longRunningToolIds":["a","b"],"longRunningToolIds":["c"],"nodeInfo":{"outputFor":["a"],"outputFor":[]}}`, decoded: true},
	{name: "into an output that points", data: `{"output":{"new":1}}`, into: func() *Event { return &Event{Output: &map[string]any{"old": 1.0}} }},
	{name: "null content into an event", data: `{"content":null,"id":null,"usageMetadata":null}`, into: filledEvent},
	{name: "null partial", data: `{"partial":true,"partial":null}`},
	{name: "null fields", data: `{"id":null,"partial":null,"actions":null,"nodeInfo":null,"timestamp":null,"longRunningToolIds":null}`, into: filledEvent},
	{name: "null part", data: `{"content":{"parts":[{"text":"a"},null]}}`},
	{name: "null in a list of strings", data: `{"longRunningToolIds":["a",null]}`},
	{name: "null args", data: `{"content":{"parts":[{"functionCall":{"name":"f","args":null}}]}}`},
	{name: "null event", data: `null`},
	{name: "bytes not UTF-8", data: "{\"id\":\"\xff\",\"content\":{\"parts\":[{\"text\":\"a\xc3(\xed\xa0\x80\"}]}}"},
	{name: "bytes not UTF-8 in a key", data: "{\"actions\":{\"stateDelta\":{\"\xfe\":1}}}"},
	{name: "rare part field", data: `{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"cG5n"},"text":"t"}]}}`},
	{name: "rare event field", data: `{"groundingMetadata":{"webSearchQueries":["q"]},"id":"e"}`},
	{name: "rare call field", data: `{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}`},
	{name: "rare response field", data: `{"content":{"parts":[{"functionResponse":{"name":"f","scheduling":"SILENT"}}]}}`},
	{name: "tool confirmations", data: `{"actions":{"requestedToolConfirmations":{"c":{"hint":"h","confirmed":true}}}}`},
	{name: "compaction", data: `{"actions":{"compaction":{"startTimestamp":1,"compactedContent":{"parts":[{"text":"s"}]}}}}`},
	{name: "deep value", data: `{"output":` + strings.Repeat("[", maxDecodeDepth+1) + strings.Repeat("]", maxDecodeDepth+1) + `}`},

	// Errors, left to reflection to word them.
	{name: "too deep", data: `{"output":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`},
	{name: "timestamp out of range", data: `{"id":"e","timestamp":1e400}`},
	{name: "value out of range", data: `{"actions":{"stateDelta":{"a":-1e309}}}`},
	{name: "fraction in an int", data: `{"actions":{"artifactDelta":{"f":1.5}}}`},
	{name: "exponent in an int", data: `{"actions":{"artifactDelta":{"f":1e2}}}`},
	{name: "int out of range", data: `{"actions":{"artifactDelta":{"f":9223372036854775808}}}`},
	{name: "int32 out of range", data: `{"usageMetadata":{"totalTokenCount":2147483648}}`},
	{name: "negative int32 out of range", data: `{"usageMetadata":{"promptTokensDetails":[{"tokenCount":-2147483649}]}}`},
	{name: "string for a number", data: `{"id":1}`},
	{name: "string for a bool", data: `{"partial":"true"}`},
	{name: "list for content", data: `{"content":[]}`},
	{name: "object for parts", data: `{"content":{"parts":{}}}`},
	{name: "list for a map", data: `{"actions":{"stateDelta":[]}}`},
	{name: "not base64", data: `{"content":{"parts":[{"thoughtSignature":"A"}]}}`},
	{name: "number for base64", data: `{"content":{"parts":[{"thoughtSignature":1}]}}`},
	{name: "truncated", data: `{"id":"a"`},
	{name: "truncated string", data: `{"id":"a`},
	{name: "after the event", data: `{"id":"a"} x`},
	{name: "two events", data: `{}{}`},
	{name: "trailing comma", data: `{"id":"a",}`},
	{name: "trailing comma in a list", data: `{"actions":{"stateDelta":{"a":[1,]}}}`},
	{name: "lone comma", data: `{,}`},
	{name: "missing colon", data: `{"id" "a"}`},
	{name: "leading zero", data: `{"timestamp":01}`},
	{name: "bare point", data: `{"timestamp":1.}`},
	{name: "leading point", data: `{"timestamp":.5}`},
	{name: "bare minus", data: `{"timestamp":-}`},
	{name: "plus", data: `{"timestamp":+1}`},
	{name: "bare exponent", data: `{"actions":{"stateDelta":{"a":1e}}}`},
	{name: "short literal", data: `{"partial":tru}`},
	{name: "wrong literal", data: `{"partial":trux,"id":"a"}`},
	{name: "wrong literal in a value", data: `{"output":[nul,1]}`},
	{name: "long literal", data: `{"actions":{"stateDelta":{"a":nullx}}}`},
	{name: "bad escape", data: `{"id":"\x"}`},
	{name: "bad unicode escape", data: `{"id":"\u12g4"}`},
	{name: "short unicode escape", data: `{"id":"\u12"}`},
	{name: "control byte", data: "{\"id\":\"a\tb\"}"},
	{name: "list", data: `[]`},
	{name: "nothing", data: ``},
}

func TestEventUnmarshalFallbacks(t *testing.T) {
	for _, c := range unmarshalEdgeCases {
		t.Run(c.name, func(t *testing.T) {
			into := c.into
			if into == nil {
				into = zeroEvent
			}
			if got := checkUnmarshal(t, []byte(c.data), into); got != c.decoded {
				t.Errorf("decoded by the decoder: %v, want %v", got, c.decoded)
			}
		})
	}
}
