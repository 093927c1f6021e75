package postgres

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// normalized is JSON text decoded (numbers as written) and encoded again:
// keys sorted, no whitespace.
func normalized(t testing.TB, b []byte) string {
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// hasDuplicateKeys reports whether some object in b has a key twice.
func hasDuplicateKeys(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, _ := d.Token()
				ks, _ := k.(string)
				if seen[ks] {
					return true
				}
				seen[ks] = true
				if walk() {
					return true
				}
			}
			d.Token()
		case json.Delim('['):
			for d.More() {
				if walk() {
					return true
				}
			}
			d.Token()
		}
		return false
	}
	return walk()
}

// checkRewrite compares rewrite with convert on src, both ways.
func checkRewrite(t testing.TB, src []byte) {
	for _, toPython := range []bool{true, false} {
		got, err := rewrite(nil, src, eventType, toPython)
		v, derr := decodeJSON(src)
		if derr != nil || !json.Valid(src) {
			if err == nil && !json.Valid(got) {
				t.Fatalf("rewrite of invalid %q gave invalid %q", src, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("rewrite(%q, toPython=%v): %v", src, toPython, err)
		}
		if !json.Valid(got) {
			t.Fatalf("rewrite(%q) = invalid %q", src, got)
		}
		if hasDuplicateKeys(got) {
			continue // convert's maps keep one of them, at random
		}
		want, err := json.Marshal(convert(v, eventType, toPython, 0))
		if err != nil {
			t.Fatal(err)
		}
		if g, w := normalized(t, got), normalized(t, want); g != w {
			t.Fatalf("rewrite(%q, toPython=%v)\n got %s\nwant %s", src, toPython, g, w)
		}
	}
}

func sampleEvents() []*session.Event {
	ts := time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)
	call := session.NewEvent("inv", "agent", "b")
	call.Timestamp = ts
	call.Response = model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "get_weather", Args: map[string]any{"city": "Paris", "nested": map[string]any{"longRunningToolIds": []any{1.5, "x<y&z"}}}}},
		{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0xfb, 0xff, 0xfe, 0x3e, 0x3f, 0x00}}},
	}}, UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12}}
	call.LongRunningToolIDs = []string{"c1"}
	call.Actions.StateDelta = map[string]any{"user:n": 2, "camelKey": map[string]any{"innerKey": true}}
	resp := session.NewEvent("inv", "agent", "")
	resp.Timestamp = ts.Add(time.Second)
	resp.Response = model.Response{Content: &genai.Content{Role: "user", Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "get_weather", Response: map[string]any{"result": "sunny \u2603 \"q\""}}}}}}
	resp.Actions.ArtifactDelta = map[string]int{"report.txt": 1}
	resp.Actions.TransferToAgent = "other"
	return []*session.Event{call, resp, session.NewEvent("i", "user", "")}
}

func TestRewriteMatchesConvert(t *testing.T) {
	for _, e := range sampleEvents() {
		camel, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		checkRewrite(t, camel)
		py, err := json.Marshal(convert(mustDecode(t, camel), eventType, true, 0))
		if err != nil {
			t.Fatal(err)
		}
		checkRewrite(t, py)
		// As PostgreSQL's jsonb prints it: a space after ':' and ','.
		checkRewrite(t, bytes.ReplaceAll(bytes.ReplaceAll(py, []byte(`":`), []byte(`": `)), []byte(`,"`), []byte(`, "`)))
		// The one-pass encoder's output decodes to the event the old one's does.
		fast, _, err := eventToPython(e)
		if err != nil {
			t.Fatal(err)
		}
		if normalized(t, fast) != normalized(t, py) {
			t.Fatalf("eventToPython = %s\nwant %s", fast, py)
		}
		back, err := eventFromPython(fast)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e)
		got, _ := json.Marshal(back)
		if normalized(t, got) != normalized(t, want) {
			t.Fatalf("round trip = %s\nwant %s", got, want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `{"a" 1}`, `[1,]`, `{"content":{"parts":[{"text":"x"}]`, `"unterminated`, `tru`, `{"a":1}x`} {
		if out, err := rewrite(nil, []byte(bad), eventType, true); err == nil {
			t.Errorf("rewrite(%q) = %q, want an error", bad, out)
		}
	}
}

func mustDecode(t testing.TB, b []byte) any {
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzRewrite: rewrite never panics, gives valid JSON or an error, and
// agrees with convert wherever convert is defined (no duplicate keys).
func FuzzRewrite(f *testing.F) {
	for _, e := range sampleEvents() {
		b, _ := json.Marshal(e)
		f.Add(b)
	}
	f.Add([]byte(`{"actions":{"state_delta":{"a":1}},"content":{"parts":[{"inline_data":{"data":"-_8"}}]}}`))
	f.Add([]byte(`{"content": {"parts": [{"inlineData": {"data": "+/8\/"}}]}, "timestamp": 1.5e9}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		checkRewrite(t, src)
	})
}
