package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeCamel checks that snake_case keys are renamed wherever they
// are, escaped or not, and that an underscore only in values leaves the
// body to the one-pass decode with the same result.
func TestDecodeCamel(t *testing.T) {
	want := runRequest{AppName: "weather_assistant", UserID: "u_1", SessionID: "s", InvocationID: "i"}
	for _, body := range []string{
		`{"appName":"weather_assistant","userId":"u_1","sessionId":"s","invocationId":"i"}`,
		`{"app_name":"weather_assistant","user_id":"u_1","session_id":"s","invocation_id":"i"}`,
		`{"appName":"weather_assistant","user_id":"u_1","sessionId":"s","invocation_id":"i"}`,
		`{"app\u005fname":"weather_assistant","userId":"u_1","sessionId":"s","invocationId":"i"}`,
		` {"appName" : "weather_assistant", "userId":"u_1" ,"sessionId":"s","invocationId":"i","x_y":{"a_b":[1,"_"]}} `,
	} {
		var got runRequest
		if err := decodeCamel([]byte(body), &got); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", body, got, want)
		}
	}
	for _, body := range []string{`[1]`, `{"appName":}`, `{"app_name":1}`, `{"appName":"a"`, ``} {
		var got runRequest
		if err := decodeCamel([]byte(body), &got); err == nil {
			t.Errorf("%q: no error", body)
		}
	}
}

func TestHasSnakeKey(t *testing.T) {
	for body, want := range map[string]bool{
		`{"appName":"a_b","newMessage":{"parts":[{"function_call":{}}]}}`: false,
		`{"a":1,"b_c":2}`:     true,
		`{"a\u005fb":1}`:      true,
		`{}`:                  false,
		`not json`:            true,
		`{"a":"x_y","b":"_"}`: false,
	} {
		if got := hasSnakeKey([]byte(body)); got != want {
			t.Errorf("hasSnakeKey(%s) = %v, want %v", body, got, want)
		}
	}
}

// FuzzHasSnakeKey checks that no valid object with a snake_case key, as
// encoding/json decodes its keys, takes the one-pass path.
func FuzzHasSnakeKey(f *testing.F) {
	for _, s := range []string{`{"a_b":1}`, `{"a\u005fb":1}`, `{"a":"_","b":{"c_d":1}}`, `{"\"":[{"_":1}],"x":"\\_"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || m == nil {
			return
		}
		for k := range m {
			if strings.Contains(k, "_") && !hasSnakeKey(b) {
				t.Fatalf("%q has key %q, yet hasSnakeKey is false", b, k)
			}
		}
	})
}

// BenchmarkDecodeCamel decodes a run request as bench-peers' clients send
// it (an app name with an underscore, as google-adk's app names have).
func BenchmarkDecodeCamel(b *testing.B) {
	body := []byte(`{"appName":"weather_assistant","userId":"u17","sessionId":"c17-s3","newMessage":{"role":"user","parts":[{"text":"What's the weather in Paris?"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		var req runRequest
		if err := decodeCamel(body, &req); err != nil || req.AppName == "" {
			b.Fatal(err)
		}
	}
}
