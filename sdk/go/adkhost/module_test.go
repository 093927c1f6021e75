//go:build !wasip1

package adkhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

// fresh gives the test an empty registry in place of the package's, and a
// fake host; both are restored at the end of the test.
func fresh(t *testing.T) *adkhosttest.Host {
	t.Helper()
	prev := std
	std = newRegistry()
	h := &adkhosttest.Host{}
	restore := UseHost(h)
	t.Cleanup(func() {
		std = prev
		restore()
	})
	return h
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if p == nil {
			t.Fatalf("no panic, want one containing %q", want)
		}
		if s := fmt.Sprint(p); !strings.Contains(s, want) {
			t.Fatalf("panic %q, want one containing %q", s, want)
		}
	}()
	f()
}

type greetArgs struct {
	Name   string `json:"name" jsonschema:"who to greet"`
	Formal bool   `json:"formal,omitempty"`
}

type greeting struct {
	Text string `json:"text"`
}

func greet(_ ToolContext, a greetArgs) (greeting, error) { return greeting{"Hello, " + a.Name}, nil }

func TestDescribe(t *testing.T) {
	fresh(t)
	Module("greeter", "1.2.0", abi.CapState)
	Require(abi.CapActions, abi.CapState) // duplicates are merged
	Tool("greet", "Greets someone.", greet)
	Tool("ping", "No parameters.", func(ToolContext, struct{}) (string, error) { return "pong", nil },
		LongRunning(), WithResponse(json.RawMessage(`{"type":"string"}`)))
	Tool("raw", "Schema given.", func(_ ToolContext, m map[string]any) (any, error) { return m, nil },
		WithParameters(json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)))
	AfterModel(func(CallbackContext, *abi.LlmResponse) (*abi.LlmResponse, error) { return nil, nil })
	BeforeAgent(func(CallbackContext) (*abi.Content, error) { return nil, nil })
	AfterRun(func(CallbackContext) error { return nil })

	d, err := Describe()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := abi.Encode(d)
	want := `{"abiVersion":1,"name":"greeter","version":"1.2.0","tools":[` +
		`{"name":"greet","description":"Greets someone.","parameters":{"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"formal":{"type":"boolean"}},"required":["name"]}},` +
		`{"name":"ping","description":"No parameters.","response":{"type":"string"},"longRunning":true},` +
		`{"name":"raw","description":"Schema given.","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}],` +
		`"hooks":["tool_call","before_agent","after_model","after_run"],"capabilities":["state","actions"]}`
	if string(b) != want {
		t.Errorf("describe:\n got %s\nwant %s", b, want)
	}
	// What the host decodes strictly.
	var back abi.Describe
	if err := abi.Decode(b, &back, 0); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeWithoutTools(t *testing.T) {
	fresh(t)
	Module("plugin", "")
	d, err := Describe()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := abi.Encode(d); string(b) != `{"abiVersion":1,"name":"plugin","hooks":[]}` {
		t.Errorf("describe = %s", b)
	}
	OnEvent(func(CallbackContext, *abi.Event) (*abi.Event, error) { return nil, nil })
	OnEvent(func(CallbackContext, *abi.Event) (*abi.Event, error) { return nil, nil })
	if d, _ := Describe(); len(d.Hooks) != 1 || d.Hooks[0] != abi.HookOnEvent || d.Tools != nil {
		t.Errorf("hooks = %v, tools = %v: a hook is listed once however many callbacks it has", d.Hooks, d.Tools)
	}
}

func TestRegistrationErrors(t *testing.T) {
	fresh(t)
	if _, err := Describe(); err == nil || !strings.Contains(err.Error(), "call adkhost.Module") {
		t.Errorf("Describe without a module name: %v", err)
	}
	mustPanic(t, "not a valid module name", func() { Module("9lives", "") })
	mustPanic(t, `unknown capability "telepathy"`, func() { Module("m", "", "telepathy") })
	mustPanic(t, `unknown capability "x"`, func() { Require("x") })
	mustPanic(t, "not a valid tool name", func() { Tool("get weather", "", greet) })
	mustPanic(t, "nil function", func() { Tool[greetArgs, greeting]("nilfn", "", nil) })
	mustPanic(t, "tool arguments must be a struct", func() {
		Tool("s", "", func(ToolContext, string) (any, error) { return nil, nil })
	})
	mustPanic(t, `WithParameters needs a JSON Schema object of type "object"`, func() {
		Tool("p", "", greet, WithParameters(json.RawMessage(`{"type":"string"}`)))
	})
	mustPanic(t, "WithResponse needs a JSON Schema object", func() {
		Tool("p", "", greet, WithResponse(json.RawMessage(`[]`)))
	})
	Tool("greet", "", greet)
	mustPanic(t, `tool "greet" is registered twice`, func() { Tool("greet", "", greet) })
}

func TestHostErrors(t *testing.T) {
	h := fresh(t)
	err := State().Get("nothing", new(int))
	var he *HostError
	if !errors.As(err, &he) || he.Func != "state_get" || he.Status != abi.StatusNotFound || !errors.Is(err, abi.StatusNotFound) {
		t.Errorf("Get of an absent key: %v", err)
	}
	if err.Error() != "adkhost: state_get: NOT_FOUND" {
		t.Errorf("message %q", err)
	}
	if errors.Is(err, abi.StatusFailed) {
		t.Error("NOT_FOUND must not match FAILED")
	}
	unknown := &HostError{Func: "x", Status: 99}
	if !errors.Is(unknown, abi.StatusFailed) || unknown.Error() != "adkhost: x: STATUS_99" {
		t.Errorf("an unknown status must read as FAILED: %v", unknown)
	}
	if err := State().Set("app:", 1); !errors.Is(err, abi.StatusInvalidArgument) {
		t.Errorf("bare prefix: %v", err)
	}
	if err := State().Set("k", func() {}); err == nil || errors.Is(err, abi.StatusInvalidArgument) {
		t.Errorf("unencodable value: %v", err)
	}
	if _, err := Artifacts().Load("a", -2); !errors.Is(err, abi.StatusInvalidArgument) {
		t.Errorf("version -2: %v", err)
	}
	if _, err := Fetch(&abi.HTTPRequest{URL: "https://example.com"}); !errors.Is(err, abi.StatusUnavailable) {
		t.Errorf("Fetch without an HTTP host: %v", err)
	}
	if len(h.Recorded()) != 1 {
		t.Errorf("calls reaching the host: %q (invalid arguments must not)", h.Recorded())
	}
	UseHost(nil)
	if err := Actions().Escalate(); !errors.Is(err, abi.StatusUnavailable) {
		t.Errorf("no host: %v", err)
	}
	if _, err := Invocation(); !errors.Is(err, abi.StatusUnavailable) {
		t.Errorf("no host: %v", err)
	}
	Log(0, "dropped") // no host: no panic
}

// TestMemoryWithUseHost: the memory functions outside WebAssembly, served
// by the host given to UseHost.
func TestMemoryWithUseHost(t *testing.T) {
	h := fresh(t)
	h.Memories = []abi.MemoryEntry{{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "green tea"}}}, CustomMetadata: map[string]any{}, ID: "e1"}}
	r, err := CallbackContext{}.Memory().Search("Tea")
	if err != nil || len(r.Memories) != 1 || r.Memories[0].ID != "e1" || r.Memories[0].Content.Parts[0].Text != "green tea" {
		t.Fatalf("Search = %+v, %v", r, err)
	}
	if r, err = Memory().Search("coffee"); err != nil || r.Memories == nil || len(r.Memories) != 0 {
		t.Fatalf("Search without a match = %+v, %v; want an empty, non-nil list", r, err)
	}
	if _, err := Memory().Search("caf\xe9"); err != nil {
		t.Fatalf("Search of invalid UTF-8: %v", err)
	}
	if err := (ToolContext{}).Memory().AddSession(); err != nil || h.SessionsAdded != 1 {
		t.Fatalf("AddSession: %v, %d sessions added", err, h.SessionsAdded)
	}
	if got, want := h.Recorded(), []string{"memory_search Tea", "memory_search coffee", "memory_search caf\uFFFD", "memory_add_session"}; !slices.Equal(got, want) {
		t.Fatalf("host calls %q, want %q", got, want)
	}
	h.NoMemory = true
	_, err = Memory().Search("tea")
	var he *HostError
	if !errors.As(err, &he) || he.Func != abi.ImportMemorySearch || !errors.Is(err, abi.StatusUnavailable) {
		t.Errorf("Search without a memory service: %v", err)
	}
	if err := Memory().AddSession(); !errors.Is(err, abi.StatusUnavailable) || err.Error() != "adkhost: memory_add_session: UNAVAILABLE" {
		t.Errorf("AddSession without a memory service: %v", err)
	}
	UseHost(nil)
	if _, err := Memory().Search("tea"); !errors.Is(err, abi.StatusUnavailable) {
		t.Errorf("no host: %v", err)
	}
}

func TestLog(t *testing.T) {
	h := fresh(t)
	Log(slog.LevelInfo, "a slog level")
	Log(LevelDebug, "a constant")
	Log(4, "bad utf-8: \xff")
	want := []string{
		"INFO a slog level",
		"DEBUG a constant",
		"WARN bad utf-8: \uFFFD",
	}
	got := h.LogLines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines:\n got %q\nwant %q", got, want)
	}
}
