package server

import (
	"reflect"
	"strings"
	"testing"
)

// runBodies are run requests on the edges of what fastRunRequest takes.
var runBodies = []string{
	`{"appName":"weather_assistant","userId":"u17","sessionId":"s-17-3","newMessage":{"role":"user","parts":[{"text":"What is the weather in Paris?"}]},"streaming":false}`,
	` { "newMessage" : { "parts" : [ { "text" : "a" } , { "text" : "" } ] , "role" : "user" } , "appName" : "a" , "userId" : "u" , "sessionId" : "s" , "streaming" : true } `,
	"{\n\t\"appName\": \"a\",\r\n\"userId\": \"u\", \"sessionId\": \"s\", \"newMessage\": {\"role\": \"user\", \"parts\": [{\"text\": \"é 😀 \x7f\"}]}}",
	`{"appName":"a","userId":"u","sessionId":"s"}`, `{"appName":"a"}`, `{}`, `[]`, `null`, ``, `{"appName":"a",}`, `{,"appName":"a"}`,
	`{"appName":"a" "userId":"u"}`, `{"appName":"a","appName":"b"}`, `{"AppName":"a"}`, `{"app_name":"a","user_id":"u"}`,
	`{"appName":"a\"b"}`, `{"appName":"a\u0062"}`, "{\"appName\":\"a\x01\"}", "{\"appName\":\"\xff\"}", `{"appName":null}`, `{"appName":1}`,
	`{"streaming":"true"}`, `{"streaming":tru}`, `{"streaming":null}`, `{"stateDelta":{"k":1}}`, `{"invocationId":"e-1"}`,
	`{"newMessage":null}`, `{"newMessage":{}}`, `{"newMessage":{"role":"user"}}`, `{"newMessage":{"parts":[]}}`, `{"newMessage":{"role":"user","parts":[]}}`,
	`{"newMessage":{"role":"user","parts":[{"text":"a"}],"role":"model"}}`, `{"newMessage":{"role":"user","parts":[{"text":"a","thought":true}]}}`,
	`{"newMessage":{"role":"user","parts":[{"Text":"a"}]}}`, `{"newMessage":{"role":"user","parts":[{"text":"a"},]}}`, `{"newMessage":{"role":"user","parts":[{"text":"a"}}}`,
	`{"appName":"a"}x`, `{"appName":"a"}{}`, `{"appName":"a"`, `{"appName"`, `{"appName":"` + strings.Repeat("x", 5000) + `"}`,
}

// checkRunFast fails if fastRunRequest takes body and decodes it otherwise
// than decodeCamel does.
func checkRunFast(t *testing.T, body []byte) bool {
	t.Helper()
	var fast runRequest
	if !fastRunRequest(body, &fast) {
		return false
	}
	var slow runRequest
	if err := decodeCamel(body, &slow); err != nil {
		t.Fatalf("fastRunRequest took %q, which decodeCamel refuses: %v", body, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fastRunRequest gave %+v, decodeCamel %+v", body, fast, slow)
	}
	return true
}

func TestFastRunRequest(t *testing.T) {
	took := 0
	for _, b := range runBodies {
		if checkRunFast(t, []byte(b)) {
			took++
		}
	}
	// The first four: the web UI's shape, spaced, with other characters,
	// without a message.
	for _, b := range runBodies[:4] {
		var r runRequest
		if !fastRunRequest([]byte(b), &r) {
			t.Errorf("fastRunRequest refused %s", b)
		}
	}
	if took > 6 {
		t.Errorf("fastRunRequest took %d of the edge cases; only the first four and two plain ones are its shape", took)
	}
}

// FuzzFastRunRequest is the differential fuzz of fastRunRequest against
// decodeCamel: `go test -fuzz=FuzzFastRunRequest ./host/server`.
func FuzzFastRunRequest(f *testing.F) {
	for _, b := range runBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkRunFast(t, body) })
}

// BenchmarkRunRequestDecode: the web UI's run request, by fastRunRequest
// (fast) and by decodeCamel (json).
func BenchmarkRunRequestDecode(b *testing.B) {
	body := []byte(runBodies[0])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r runRequest
			if !fastRunRequest(body, &r) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r runRequest
			if err := decodeCamel(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
