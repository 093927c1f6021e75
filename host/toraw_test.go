package host

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// nullSlice marshals itself even when nil: toRaw must ask it.
type nullSlice []int

func (s nullSlice) MarshalJSON() ([]byte, error) { return []byte(`"mine"`), nil }

// TestToRawMatchesMarshal: toRaw is json.Marshal with null made absent,
// nil values included, and a nil pointer costs no allocation (the
// pass-through fields of every part, config and tool are nil).
func TestToRawMatchesMarshal(t *testing.T) {
	for _, v := range []any{
		nil, (*genai.VideoMetadata)(nil), &genai.VideoMetadata{FPS: genai.Ptr(2.0)},
		(*genai.Schema)(nil), []*genai.SafetySetting(nil), []*genai.SafetySetting{},
		map[string]any(nil), map[string]any{"a": 1}, nullSlice(nil), nullSlice{1},
		(*nullSlice)(nil), 0, "", false, any(nil),
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) == "null" {
			want = nil
		}
		got, err := toRaw(v)
		if err != nil || string(got) != string(want) {
			t.Errorf("toRaw(%#v) = %s, %v; want %s", v, got, err, want)
		}
	}
	var vm *genai.VideoMetadata
	if n := testing.AllocsPerRun(100, func() { toRaw(vm) }); n != 0 {
		t.Errorf("toRaw of a nil pointer: %.0f allocations, want 0", n)
	}
}

// BenchmarkRequestToABI converts what a before_model callback is sent: a
// 20-turn history (a question, a function call and its response, an
// answer per turn) with a system instruction and one function tool.
func BenchmarkRequestToABI(b *testing.B) {
	req := &model.Request{Model: "gemini-2.5-flash", Config: &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Call get_weather for the city they ask about.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Description: "Returns the weather forecast of a city.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		}}}},
	}}
	for i := range 20 {
		req.Contents = append(req.Contents,
			genai.NewContentFromText("Weather in Paris?", genai.RoleUser),
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"})}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("get_weather", map[string]any{"highC": 21 + i})}},
			genai.NewContentFromText("It is sunny in Paris.", genai.RoleModel))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RequestToABI(req); err != nil {
			b.Fatal(err)
		}
	}
}
