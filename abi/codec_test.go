package abi_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
)

func TestEncodeSetsVersion(t *testing.T) {
	b, err := abi.Encode(&abi.ToolCallOutput{Result: map[string]any{"ok": true}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"abiVersion":1,"result":{"ok":true}}`; got != want {
		t.Fatalf("Encode = %s, want %s", got, want)
	}
	if _, err := abi.Encode(&abi.ToolCallOutput{Header: abi.Header{ABIVersion: 2}}); !errors.Is(err, abi.ErrVersion) {
		t.Fatalf("encoding v2: %v, want ErrVersion", err)
	}
}

func TestDecodeIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		kind     error
		msg      string
	}{
		{"ok", `{"abiVersion":1,"result":{"a":1}}`, 0, nil, ""},
		{"whitespace around", " \n{\"abiVersion\":1}\t ", 0, nil, ""},
		{"empty", ``, 0, abi.ErrMalformed, "abi: malformed message: empty"},
		{"unknown field", `{"abiVersion":1,"reslt":{}}`, 0, abi.ErrMalformed, `abi: malformed message: json: unknown field "reslt"`},
		{"trailing data", `{"abiVersion":1}{}`, 0, abi.ErrMalformed, "abi: malformed message: data after the JSON value at offset 16"},
		{"wrong type", `{"abiVersion":1,"error":3}`, 0, abi.ErrMalformed, "abi: malformed message: json: cannot unmarshal number into Go struct field ToolCallOutput.error of type string"},
		{"not an object", `[1]`, 0, abi.ErrMalformed, "abi: malformed message: json: cannot unmarshal array into Go value of type abi.ToolCallOutput"},
		{"no version", `{"result":1}`, 0, abi.ErrVersion, "abi: unsupported abiVersion: abiVersion is missing, want 1"},
		{"future version", `{"abiVersion":2}`, 0, abi.ErrVersion, "abi: unsupported abiVersion: abiVersion is 2, want 1"},
		{"too large", `{"abiVersion":1,"error":"xxxxxxxxxx"}`, 20, abi.ErrTooLarge, "abi: message too large: 37 bytes, limit 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out abi.ToolCallOutput
			err := abi.Decode([]byte(tc.in), &out, tc.max)
			if tc.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.kind) || err.Error() != tc.msg {
				t.Fatalf("err = %v, want %q", err, tc.msg)
			}
		})
	}
}

// TestWireNames pins the JSON of the mirrored engine types to google-adk's
// camelCase names.
func TestWireNames(t *testing.T) {
	ev := abi.Event{
		LlmResponse: abi.LlmResponse{
			Content:       &abi.Content{Role: "model", Parts: []*abi.Part{{FunctionCall: &abi.FunctionCall{ID: "c1", Name: "get", Args: map[string]any{"q": "x"}}}}},
			UsageMetadata: &abi.UsageMetadata{PromptTokenCount: 3, TotalTokenCount: 5},
			FinishReason:  "STOP",
		},
		ID: "e1", InvocationID: "i1", Author: "root", Branch: "root.a",
		Actions: abi.EventActions{
			StateDelta:                 map[string]any{"app:k": 1},
			ArtifactDelta:              map[string]int{"f.txt": 0},
			TransferToAgent:            "b",
			RequestedToolConfirmations: map[string]abi.ToolConfirmation{"c1": {Hint: "sure?"}},
			SkipSummarization:          true,
		},
		LongRunningToolIDs: []string{"c1"},
		Timestamp:          1.5,
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"get","args":{"q":"x"}}}]},"finishReason":"STOP","usageMetadata":{"promptTokenCount":3,"totalTokenCount":5},"id":"e1","invocationId":"i1","author":"root","branch":"root.a","actions":{"skipSummarization":true,"stateDelta":{"app:k":1},"artifactDelta":{"f.txt":0},"transferToAgent":"b","requestedToolConfirmations":{"c1":{"hint":"sure?","confirmed":false}}},"longRunningToolIds":["c1"],"timestamp":1.5}`
	if string(b) != want {
		t.Fatalf("event JSON\n got %s\nwant %s", b, want)
	}
	var back abi.Event
	if err := abi.DecodeValue(b, &back, 0); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b2) != want {
		t.Fatalf("round trip\n got %s\nwant %s", b2, want)
	}
}

func TestHookTable(t *testing.T) {
	if len(abi.Hooks()) != 15 {
		t.Fatalf("%d hooks", len(abi.Hooks()))
	}
	for _, h := range abi.Hooks() {
		if !h.Known() || h.NewInput() == nil || h.NewOutput() == nil {
			t.Errorf("hook %s has no messages", h)
		}
		if got, ok := abi.HookForExport(h.Export()); !ok || got != h {
			t.Errorf("HookForExport(%s) = %s, %v", h.Export(), got, ok)
		}
		if !strings.HasPrefix(h.Export(), abi.ExportPrefix) {
			t.Errorf("export %s", h.Export())
		}
	}
	// The notification-only hooks: the error is told, nothing is answered.
	for h, in := range map[abi.Hook]abi.Message{abi.HookOnAgentError: new(abi.AgentErrorInput), abi.HookOnRunError: new(abi.RunErrorInput)} {
		if reflect.TypeOf(h.NewInput()) != reflect.TypeOf(in) || reflect.TypeOf(h.NewOutput()) != reflect.TypeOf(new(abi.NotifyOutput)) {
			t.Errorf("hook %s messages: %T → %T", h, h.NewInput(), h.NewOutput())
		}
		if got, ok := abi.HookForExport("adkhost_" + string(h)); !ok || got != h {
			t.Errorf("HookForExport(adkhost_%s) = %s, %v", h, got, ok)
		}
	}
	for _, name := range []string{"adkhost_describe", "adkhost_alloc", "tool_call", "adkhost_nope"} {
		if _, ok := abi.HookForExport(name); ok {
			t.Errorf("HookForExport(%s) matched", name)
		}
	}
	for _, op := range []string{abi.ImportStateGet, abi.ImportLog, abi.ImportHTTPRequest} {
		if _, ok := abi.ImportCapability(op); !ok {
			t.Errorf("ImportCapability(%s) unknown", op)
		}
	}
	if c, _ := abi.ImportCapability(abi.ImportArtifactSave); c != abi.CapArtifacts {
		t.Errorf("artifact_save needs %q", c)
	}
	for _, op := range []string{abi.ImportMemorySearch, abi.ImportMemoryAddSession} {
		if c, ok := abi.ImportCapability(op); !ok || c != abi.CapMemory {
			t.Errorf("ImportCapability(%s) = %q, %v; want %q", op, c, ok, abi.CapMemory)
		}
	}
	if !abi.CapMemory.Known() {
		t.Error("capability memory unknown")
	}
}

func TestSearchMemoryResponseJSON(t *testing.T) {
	// google-adk's SearchMemoryResponse.model_dump: snake_case keys, unset
	// optional fields left out, custom_metadata always present.
	r := abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "I like tea"}}}, CustomMetadata: map[string]any{"k": "v"},
			ID: "e1", Author: "user", Timestamp: "2026-01-02T03:04:05"},
		{CustomMetadata: map[string]any{}},
	}}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"memories":[{"content":{"role":"user","parts":[{"text":"I like tea"}]},"custom_metadata":{"k":"v"},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"},{"content":null,"custom_metadata":{}}]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back abi.SearchMemoryResponse
	if err := abi.DecodeValue(b, &back, 0); err != nil || len(back.Memories) != 2 || back.Memories[0].Author != "user" {
		t.Fatalf("decode: %+v, %v", back, err)
	}
}

func TestDescribeValidate(t *testing.T) {
	valid := func() abi.Describe {
		return abi.Describe{
			Header: abi.Header{ABIVersion: 1},
			Name:   "weather",
			Tools: []abi.ToolDecl{{Name: "get_weather", Description: "d",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
			Hooks:        []abi.Hook{abi.HookToolCall, abi.HookBeforeModel},
			Capabilities: []abi.Capability{abi.CapHTTP},
		}
	}
	d := valid()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Tool("get_weather"); !ok || !d.Implements(abi.HookBeforeModel) || !d.Asks(abi.CapHTTP) || d.Asks(abi.CapFS) {
		t.Fatal("accessors")
	}
	for _, tc := range []struct {
		name   string
		change func(*abi.Describe)
		msg    string
	}{
		{"bad module name", func(d *abi.Describe) { d.Name = "9lives" }, `module name "9lives" is not a valid name`},
		{"bad tool name", func(d *abi.Describe) { d.Tools[0].Name = "get weather" }, `tools[0]: name "get weather" is not a valid function name`},
		{"duplicate tool", func(d *abi.Describe) { d.Tools = append(d.Tools, d.Tools[0]) }, `tools[1]: tool "get_weather" is declared twice`},
		{"array schema", func(d *abi.Describe) { d.Tools[0].Parameters = json.RawMessage(`[]`) }, `tool "get_weather": parameters must be a JSON Schema object`},
		{"string schema", func(d *abi.Describe) { d.Tools[0].Parameters = json.RawMessage(`{"type":"string"}`) }, `parameters schema has type string, want "object"`},
		{"unknown hook", func(d *abi.Describe) { d.Hooks = append(d.Hooks, "on_sunrise") }, `unknown hook "on_sunrise"`},
		{"duplicate hook", func(d *abi.Describe) { d.Hooks = append(d.Hooks, abi.HookBeforeModel) }, `hook "before_model" is listed twice`},
		{"tools without tool_call", func(d *abi.Describe) { d.Hooks = d.Hooks[1:] }, `declares 1 tools but not the "tool_call" hook`},
		{"tool_call without tools", func(d *abi.Describe) { d.Tools = nil }, `lists the "tool_call" hook but declares no tools`},
		{"unknown capability", func(d *abi.Describe) { d.Capabilities = []abi.Capability{"root"} }, `unknown capability "root"`},
		{"version", func(d *abi.Describe) { d.ABIVersion = 0 }, `abiVersion is 0, want 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := valid()
			tc.change(&d)
			err := d.Validate()
			if !errors.Is(err, abi.ErrInvalidDescribe) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.msg)
			}
		})
	}
}

func TestValidNames(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "_x": true, "get_weather": true, "a.b-c9": true, strings.Repeat("a", 64): true,
		"": false, "9a": false, "-a": false, "a b": false, "é": false, strings.Repeat("a", 65): false,
	} {
		if abi.ValidName(s) != want {
			t.Errorf("ValidName(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{
		"k": true, "app:k": true, "temp:x": true, "user:": false, "": false, "\xff": false, strings.Repeat("k", 257): false,
	} {
		if abi.ValidStateKey(s) != want {
			t.Errorf("ValidStateKey(%q) = %v", s, !want)
		}
	}
}

func TestStatus(t *testing.T) {
	var err error = abi.StatusNotFound
	var s abi.Status
	if !errors.As(err, &s) || s != abi.StatusNotFound || err.Error() != "abi: status NOT_FOUND" {
		t.Fatalf("%v", err)
	}
	if abi.Status(99).String() != "STATUS_99" || abi.StatusAllocFailed.String() != "ALLOC_FAILED" {
		t.Fatal("names")
	}
}

func TestUnavailableHost(t *testing.T) {
	var h abi.Host = abi.UnavailableHost{}
	if _, err := h.StateGet(t.Context(), "k"); err != abi.StatusUnavailable {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(abi.Hooks()[0], abi.HookToolCall) {
		t.Fatal("order")
	}
}

// An empty map is an answer ("skip the tool with {}"), distinct from no
// answer, as in google-adk's callback chain (first non-None result wins).
func TestEmptyMapAnswersSurviveTheWire(t *testing.T) {
	b, err := abi.Encode(&abi.BeforeToolOutput{Header: abi.Header{ABIVersion: abi.Version}, Result: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var out abi.BeforeToolOutput
	if err := abi.Decode(b, &out, 1<<20); err != nil {
		t.Fatal(err)
	}
	if out.Result == nil || len(out.Result) != 0 || out.Args != nil {
		t.Fatalf("decoded %s as result=%v args=%v; want an empty (non-nil) result and nil args", b, out.Result, out.Args)
	}
}

// Integers a guest sends stay integers (Python's json.loads keeps ints);
// other numbers are float64.
func TestDecodeKeepsIntegers(t *testing.T) {
	var out abi.ToolCallOutput
	in := []byte(`{"abiVersion":1,"result":{"temp":21,"ratio":0.5,"big":9007199254740993,"list":[1,2.5]}}`)
	if err := abi.Decode(in, &out, 0); err != nil {
		t.Fatal(err)
	}
	m := out.Result.(map[string]any)
	if m["temp"] != int64(21) || m["ratio"] != 0.5 || m["big"] != int64(9007199254740993) {
		t.Fatalf("numbers decoded as %#v", m)
	}
	if l := m["list"].([]any); l[0] != int64(1) || l[1] != 2.5 {
		t.Fatalf("list decoded as %#v", l)
	}
	var bt abi.BeforeToolOutput
	if err := abi.Decode([]byte(`{"abiVersion":1,"args":{"n":3}}`), &bt, 0); err != nil {
		t.Fatal(err)
	}
	if bt.Args["n"] != int64(3) {
		t.Fatalf("args decoded as %#v", bt.Args)
	}
}

// TestToolCallOutputResultJSON: the result's JSON text is kept, keys in
// the guest's order, by the fast path and by the strict one.
func TestToolCallOutputResultJSON(t *testing.T) {
	for _, in := range []string{
		`{"abiVersion":1,"result":{"zeta":1,"alpha":{"y":[1],"x":"s"}}}`,
		`{"abiVersion":1,"Result":{"zeta":1,"alpha":{"y":[1],"x":"s"}}}`, // strict path: case-insensitive name
	} {
		var o abi.ToolCallOutput
		if err := abi.Decode([]byte(in), &o, 0); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, want := string(o.ResultJSON()), `{"zeta":1,"alpha":{"y":[1],"x":"s"}}`; got != want {
			t.Errorf("%s: ResultJSON = %s, want %s", in, got, want)
		}
	}
	var o abi.ToolCallOutput
	if err := abi.Decode([]byte(`{"abiVersion":1,"error":"x"}`), &o, 0); err != nil || o.ResultJSON() != nil {
		t.Errorf("no result: ResultJSON = %s, %v", o.ResultJSON(), err)
	}
}
