package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// TestEventSizeTyped checks EventSize's typed walk against reflectSize, the
// walk of every exported field: on events whose exported fields, down
// through every type an event holds, are filled at random, the two must
// agree to the byte. A field the typed walk leaves out (one genai adds,
// say) fails here by name of the event's JSON.
func TestEventSizeTyped(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		ev := &Event{}
		// The first event fills everything; the rest about half.
		fill(reflect.ValueOf(ev).Elem(), r, i == 0, nil)
		got, want := EventSize(ev), reflectSize(reflect.ValueOf(ev).Elem(), 0)
		if got != want {
			b, _ := json.Marshal(ev)
			t.Fatalf("event %d: EventSize = %d, reflectSize = %d\n%s", i, got, want, b)
		}
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				if p == nil {
					continue
				}
				if got, want := PartSize(p), reflectSize(reflect.ValueOf(p).Elem(), 0); got != want {
					b, _ := json.Marshal(p)
					t.Fatalf("event %d: PartSize = %d, reflectSize = %d\n%s", i, got, want, b)
				}
			}
		}
	}
}

// fill sets the exported fields of v (a settable value) to non-zero
// values: all of them if all, else each with probability one half.
// path holds the struct types being filled: a type that contains itself
// (genai.Schema) is filled one level deep.
func fill(v reflect.Value, r *rand.Rand, all bool, path []reflect.Type) {
	if v.Kind() == reflect.Struct {
		if slices.Contains(path, v.Type()) {
			return
		}
		path = append(path, v.Type())
	}
	pick := func() bool { return all || r.IntN(2) == 0 }
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && pick() {
				fill(v.Field(i), r, all, path)
			}
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), r, all, path)
		v.Set(p)
	case reflect.Slice:
		n := 1 + r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for j := range n {
			if v.Type().Elem().Kind() != reflect.Pointer || pick() {
				fill(s.Index(j), r, all, path)
			}
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 1 + r.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fill(k, r, true, path)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, r, all, path)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		vals := []any{"text", 2.5, true, nil, map[string]any{"k": []any{"v", 1.0}}, []any{map[string]any{}}, json.Number("12"),
			struct{ A string }{"go value"}, &genai.Blob{Data: []byte("blob")}}
		if x := vals[r.IntN(len(vals))]; x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.String:
		v.SetString(string(rune('a'+r.IntN(26))) + "xyz"[:r.IntN(4)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(1 + r.IntN(100)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(1 + r.IntN(100)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5 + float64(r.IntN(100)))
	}
}

// BenchmarkEventSizeWalk compares the typed walk with reflectSize on a
// served turn's four events.
func BenchmarkEventSizeWalk(b *testing.B) {
	turn := []*Event{
		{ID: "e1", InvocationID: "e-1", Author: "user", Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Paris"}}}}},
		{ID: "e2", InvocationID: "e-1", Author: "agent", NodeInfo: &NodeInfo{Path: "agent"}, Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "adk-1", Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}}}},
		{ID: "e3", InvocationID: "e-1", Author: "agent", NodeInfo: &NodeInfo{Path: "agent"}, Actions: EventActions{StateDelta: map[string]any{"user:last_city": "Paris"}},
			Response: model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "adk-1", Name: "get_weather",
				Response: map[string]any{"city": "Paris", "days": []any{map[string]any{"summary": "sunny", "highC": 21.0}}}}}}}}},
		{ID: "e4", InvocationID: "e-1", Author: "agent", NodeInfo: &NodeInfo{Path: "agent"}, Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "weather in Paris"}}}}},
	}
	for _, w := range []struct {
		name string
		fn   func(*Event) int64
	}{{"typed", EventSize}, {"reflect", func(e *Event) int64 { return reflectSize(reflect.ValueOf(e).Elem(), 0) }}} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, e := range turn {
					w.fn(e)
				}
			}
		})
	}
}
