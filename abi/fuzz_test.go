package abi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
)

// The fuzz targets decode untrusted bytes as the host does: what a guest
// returns, and what a guest host call passes. Each checks that Decode never
// panics, and that what decodes re-encodes, decodes again, and encodes to
// the same bytes. `go test` runs the seeds; `go test -fuzz=FuzzDecodeOutput
// ./abi` explores.

var content = `{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"aGk="}},` +
	`{"functionCall":{"id":"c1","name":"get","args":{"q":"x","n":[1,2.5,null]}}},` +
	`{"functionResponse":{"id":"c1","name":"get","response":{"ok":true}}},{"thought":true,"thoughtSignature":"c2ln"}]}`

var ctxJSON = `"context":{"appName":"a","userId":"u","sessionId":"s","invocationId":"e-1","agentName":"root","branch":"root","functionCallId":"c1","userContent":` + content + `}`

var request = `{"model":"gemini-2.5-flash","contents":[` + content + `],"config":{"systemInstruction":{"parts":[{"text":"be brief"}]},` +
	`"temperature":0.2,"maxOutputTokens":100,"tools":[{"functionDeclarations":[{"name":"get","parametersJsonSchema":{"type":"object"}}]},{"googleSearch":{}}],` +
	`"thinkingConfig":{"includeThoughts":true,"thinkingBudget":64},"labels":{"k":"v"}}}`

var response = `{"content":` + content + `,"partial":true,"finishReason":"STOP","usageMetadata":{"promptTokenCount":3,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3}]},` +
	`"groundingMetadata":{"webSearchQueries":["q"]},"customMetadata":{"k":1},"modelVersion":"m"}`

var event = `{"content":` + content + `,"id":"e1","invocationId":"i1","author":"root","actions":{"stateDelta":{"temp:x":1},"artifactDelta":{"a":0},` +
	`"escalate":true,"requestedToolConfirmations":{"c1":{"hint":"ok?","confirmed":false,"payload":{"n":1}}},"compaction":{"startTimestamp":1,"endTimestamp":2,"compactedContent":` + content + `}},` +
	`"longRunningToolIds":["c1"],"timestamp":1712345678.123456}`

var inputSeeds = []string{
	`{"abiVersion":1,` + ctxJSON + `,"tool":"get","args":{"q":"x"},"confirmation":{"hint":"h","confirmed":true}}`,
	`{"abiVersion":1,` + ctxJSON + `}`,
	`{"abiVersion":1,` + ctxJSON + `,"request":` + request + `}`,
	`{"abiVersion":1,` + ctxJSON + `,"response":` + response + `}`,
	`{"abiVersion":1,` + ctxJSON + `,"request":` + request + `,"error":"quota"}`,
	`{"abiVersion":1,` + ctxJSON + `,"tool":{"name":"get","description":"d","longRunning":true},"args":{},"result":{"r":1}}`,
	`{"abiVersion":1,` + ctxJSON + `,"tool":{"name":"get"},"args":{},"error":"boom"}`,
	`{"abiVersion":1,` + ctxJSON + `,"message":` + content + `}`,
	`{"abiVersion":1,` + ctxJSON + `,"event":` + event + `}`,
	`{"abiVersion":1,` + ctxJSON + `,"error":"ValueError: agent failed"}`,
}

var outputSeeds = []string{
	`{"abiVersion":1,"result":{"temp":21.5,"unit":"C"}}`,
	`{"abiVersion":1,"result":"plain"}`,
	`{"abiVersion":1,"error":"no such city"}`,
	`{"abiVersion":1,"content":` + content + `}`,
	`{"abiVersion":1,"response":` + response + `,"request":` + request + `}`,
	`{"abiVersion":1,"result":{"x":1},"args":{"q":"y"}}`,
	`{"abiVersion":1,"message":` + content + `}`,
	`{"abiVersion":1,"event":` + event + `}`,
	`{"abiVersion":1}`,
}

var badSeeds = []string{
	``, `null`, `{}`, `[]`, `"x"`, `{"abiVersion":1}{"abiVersion":1}`, `{"abiVersion":1,"nope":1}`,
	`{"abiVersion":1.5}`, `{"abiVersion":99999999999999999999}`, `{"abiVersion":1,"result":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`,
	"{\"abiVersion\":1,\"error\":\"\xff\xfe\"}", `{"abiVersion":1,"content":{"parts":[{"videoMetadata":null}]}}`,
	`{"abiVersion":1,"content":{"parts":[{"inlineData":{"data":"not base64!"}}]}}`,
}

func addSeeds(f *testing.F, seeds ...[]string) {
	for _, s := range seeds {
		for _, x := range s {
			f.Add([]byte(x))
		}
	}
}

// roundTrip decodes data into fresh messages from newMsg and, if that
// works, checks that encoding is stable.
func roundTrip(t *testing.T, data []byte, newMsg func() abi.Message) {
	m := newMsg()
	if err := abi.Decode(data, m, 1<<20); err != nil {
		return
	}
	enc1, err := abi.Encode(m)
	if err != nil {
		t.Fatalf("decoded but cannot encode: %v", err)
	}
	m2 := newMsg()
	if err := abi.Decode(enc1, m2, 0); err != nil {
		t.Fatalf("re-decoding %s: %v", enc1, err)
	}
	enc2, err := abi.Encode(m2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc1, enc2) {
		t.Fatalf("unstable encoding:\n%s\n%s", enc1, enc2)
	}
}

func FuzzDecodeInput(f *testing.F) {
	addSeeds(f, inputSeeds, badSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range abi.Hooks() {
			roundTrip(t, data, h.NewInput)
		}
	})
}

func FuzzDecodeOutput(f *testing.F) {
	addSeeds(f, outputSeeds, badSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, h := range abi.Hooks() {
			roundTrip(t, data, h.NewOutput)
		}
	})
}

func FuzzDecodeDescribe(f *testing.F) {
	addSeeds(f, badSeeds, []string{
		`{"abiVersion":1,"name":"weather","version":"1.2.0","tools":[{"name":"get_weather","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"longRunning":true}],"hooks":["tool_call","before_model"],"capabilities":["http","state"]}`,
		`{"abiVersion":1,"name":"p","hooks":["on_event","after_run"]}`,
		`{"abiVersion":1,"name":"p","hooks":["on_agent_error","on_run_error"]}`,
		`{"abiVersion":1,"name":"p","tools":[{"name":"t","description":"","parameters":[]}],"hooks":["tool_call"]}`,
		`{"abiVersion":1,"name":"p","hooks":["tool_call"],"capabilities":["root"]}`,
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var d abi.Describe
		if abi.Decode(data, &d, 1<<20) != nil {
			return
		}
		_ = d.Validate() // must not panic
		roundTrip(t, data, func() abi.Message { return new(abi.Describe) })
	})
}

func FuzzDecodeHostCall(f *testing.F) {
	addSeeds(f, badSeeds, []string{
		`{"abiVersion":1,"op":"state_get","key":"user:name"}`,
		`{"abiVersion":1,"op":"state_set","key":"temp:n","value":{"a":[1,2]}}`,
		`{"abiVersion":1,"op":"request_confirmation","hint":"really?","value":{"amount":3}}`,
		`{"abiVersion":1,"op":"artifact_load","name":"report.pdf","version":2}`,
		`{"abiVersion":1,"op":"artifact_save","name":"a.txt","value":{"text":"hi"}}`,
		`{"abiVersion":1,"op":"log","level":-4,"message":"debug line"}`,
		`{"abiVersion":1,"op":"http_request","value":{"method":"POST","url":"https://api.example.com/x","headers":{"a":"b"},"body":"e30="}}`,
		`{"abiVersion":1,"op":"memory_search","query":"tea"}`,
		`{"abiVersion":1,"op":"memory_add_session"}`,
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, func() abi.Message { return new(abi.HostCall) })
		var c abi.HostCall
		if abi.Decode(data, &c, 1<<20) != nil || len(c.Value) == 0 {
			return
		}
		// The nested values the host decodes on its own.
		var part abi.Part
		_ = abi.DecodeValue(c.Value, &part, 1<<20)
		var req abi.HTTPRequest
		_ = abi.DecodeValue(c.Value, &req, 1<<20)
		if !json.Valid(c.Value) {
			t.Fatalf("decoded a HostCall with an invalid value %q", c.Value)
		}
	})
}

// TestSeedsDecode makes sure the good seeds are good, so the fuzz targets
// start from messages that reach deep into the types.
func TestSeedsDecode(t *testing.T) {
	hooks := abi.Hooks()
	for _, s := range inputSeeds {
		ok := false
		for _, h := range hooks {
			if abi.Decode([]byte(s), h.NewInput(), 0) == nil {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no input type decodes %s", s)
		}
	}
	for _, s := range outputSeeds {
		ok := false
		for _, h := range hooks {
			if abi.Decode([]byte(s), h.NewOutput(), 0) == nil {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no output type decodes %s", s)
		}
	}
}
