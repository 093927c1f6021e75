package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func memoryRunner(t *testing.T, root engine.Agent, mem memory.Service, log *slog.Logger) (*engine.Runner, session.Service) {
	t.Helper()
	svc := session.NewInMemoryService()
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: root, Sessions: svc, Memory: mem, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return r, svc
}

// Without a memory service every memory call fails with google-adk's
// ValueError message for it.
func TestMemoryCallsWithoutService(t *testing.T) {
	t.Parallel()
	var errs []error
	probe := newTool(t, "probe", nil, func(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
		_, searchErr := ctx.SearchMemory("x")
		errs = []error{
			ctx.AddSessionToMemory(),
			ctx.AddEventsToMemory(nil, nil),
			ctx.AddMemory(nil, nil),
			searchErr,
			ctx.DeleteMemory("id"),
		}
		return "ok", nil
	})
	m := scripted.New("m", calls(fcall("probe", nil)), text("done"))
	r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{probe}}))
	mustRun(t, r, svc, "s", userText("go"), engine.RunConfig{})
	want := []string{
		"Cannot add session to memory: memory service is not available.",
		"Cannot add events to memory: memory service is not available.",
		"Cannot add memory: memory service is not available.",
		"Memory service is not available.",
		"Cannot delete memory: memory service is not available.",
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d", len(errs), len(want))
	}
	for i, err := range errs {
		if err == nil || err.Error() != want[i] || !errors.Is(err, engine.ErrNoMemoryService) {
			t.Errorf("call %d: error %v, want %q matching ErrNoMemoryService", i, err, want[i])
		}
		var coder engine.ErrorCoder
		if !errors.As(err, &coder) || coder.ErrorCode() != "ValueError" {
			t.Errorf("call %d: error code missing or not ValueError", i)
		}
	}
}

// The context's memory calls reach the service with the session's scope.
func TestMemoryCallsFromToolContext(t *testing.T) {
	t.Parallel()
	mem := memory.NewInMemoryService()
	var found []string
	var addMemErr, delErr error
	step := 0
	probe := newTool(t, "probe", nil, func(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
		step++
		switch step {
		case 1: // first turn: remember the session so far, and a delta
			if err := ctx.AddSessionToMemory(); err != nil {
				return nil, err
			}
			extra := session.NewEvent("e-x", "assistant", "")
			extra.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "zebra stripes"}}}
			if err := ctx.AddEventsToMemory([]*session.Event{extra}, map[string]any{"k": "v"}); err != nil {
				return nil, err
			}
			addMemErr = ctx.AddMemory([]memory.Entry{{ID: "m"}}, nil)
		case 2: // second session: search, delete, search again
			resp, err := ctx.SearchMemory("zebra giraffe")
			if err != nil {
				return nil, err
			}
			for _, e := range resp.Memories {
				found = append(found, e.Content.Parts[0].Text)
			}
			if len(resp.Memories) > 0 {
				delErr = ctx.DeleteMemory(resp.Memories[0].ID)
			}
			if resp, err = ctx.SearchMemory("zebra giraffe"); err != nil {
				return nil, err
			}
			found = append(found, "after delete:")
			for _, e := range resp.Memories {
				found = append(found, e.Content.Parts[0].Text)
			}
		}
		return "ok", nil
	})
	m := scripted.New("m", calls(fcall("probe", nil)), text("done"), calls(fcall("probe", nil)), text("done"))
	r, svc := memoryRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{probe}}), mem, nil)
	mustRun(t, r, svc, "s1", userText("I like giraffe necks"), engine.RunConfig{})
	mustRun(t, r, svc, "s2", userText("what do I like"), engine.RunConfig{})
	want := "I like giraffe necks|zebra stripes|after delete:|zebra stripes"
	if got := strings.Join(found, "|"); got != want {
		t.Errorf("found %q, want %q", got, want)
	}
	if !errors.Is(addMemErr, memory.ErrNotSupported) {
		t.Errorf("AddMemory on the in-memory service: %v, want ErrNotSupported", addMemErr)
	}
	if delErr != nil {
		t.Errorf("DeleteMemory: %v", delErr)
	}
	// Another user sees none of it.
	resp, err := mem.Search(t.Context(), "app", "other", "zebra")
	if err != nil || len(resp.Memories) != 0 {
		t.Errorf("another user's search: %+v, %v", resp, err)
	}
}

func TestLoadMemoryTool(t *testing.T) {
	t.Parallel()
	mem := memory.NewInMemoryService()
	a := func(m model.Model) *engine.LlmAgent {
		return newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Instruction: "Answer.", Tools: []tool.Tool{engine.LoadMemoryTool{}}})
	}
	m := scripted.New("m", text("Noted, a fine colour."), calls(fcall("load_memory", map[string]any{"query": "favourite colour"})), text("Teal."), calls(fcall("load_memory", nil)), text("?"))
	r, svc := memoryRunner(t, a(m), mem, nil)
	mustRun(t, r, svc, "s1", userText("My favourite colour is teal."), engine.RunConfig{})
	if err := mem.AddSession(t.Context(), loadSession(t, svc, "s1")); err != nil {
		t.Fatal(err)
	}
	evs := mustRun(t, r, svc, "s2", userText("What did I say?"), engine.RunConfig{})
	if len(evs) != 3 {
		t.Fatalf("events:%s", eventsJSON(evs))
	}
	fr := evs[1].Content.Parts[0].FunctionResponse
	result, _ := fr.Response["result"].(map[string]any)
	ms, _ := result["memories"].([]any)
	if len(ms) != 2 {
		t.Fatalf("function response %v, want {result: {memories: [2 entries]}}", fr.Response)
	}
	first, _ := ms[0].(map[string]any)
	c, _ := first["content"].(*genai.Content)
	if first["author"] != "user" || c == nil || c.Parts[0].Text != "My favourite colour is teal." || first["id"] == "" || first["timestamp"] == "" {
		t.Errorf("first memory = %v", first)
	}
	if md, ok := first["custom_metadata"].(map[string]any); !ok || len(md) != 0 {
		t.Errorf("custom_metadata = %v, want {}", first["custom_metadata"])
	}
	req := m.Requests()[1]
	si := req.SystemInstructionText()
	if !strings.HasSuffix(si, "\n\n\nYou have memory. You can use it to answer questions. If any questions need\nyou to look up the memory, you should call load_memory function with a query.\n") {
		t.Errorf("system instruction %q lacks the memory instruction", si)
	}
	d := req.FunctionDeclaration("load_memory")
	if d == nil {
		t.Fatal("load_memory is not declared")
	}
	wantJSON(t, "declaration", d.ParametersJsonSchema, `{"properties":{"query":{"type":"string"}},"required":["query"],"type":"object"}`)

	// A call without its query is answered as FunctionTool does.
	evs = mustRun(t, r, svc, "s3", userText("Again?"), engine.RunConfig{})
	if len(evs) != 3 || !strings.Contains(jsonOf(evs[1].Content.Parts[0].FunctionResponse.Response["error"]), "mandatory input parameters are not present:\\nquery") {
		t.Errorf("events:%s", eventsJSON(evs))
	}
}

// failingMemory fails every search.
type failingMemory struct{ memory.Service }

func (failingMemory) Search(context.Context, string, string, string) (*memory.SearchResponse, error) {
	return nil, errors.New("search down")
}

func TestPreloadMemoryTool(t *testing.T) {
	t.Parallel()
	mem := memory.NewInMemoryService()
	lookup := newTool(t, "lookup", nil, func(callbacks.ToolContext, map[string]any) (any, error) { return "teal", nil })
	agent := func(m model.Model) *engine.LlmAgent {
		return newLlm(t, engine.LlmAgentConfig{Name: "assistant", Model: m, Tools: []tool.Tool{engine.PreloadMemoryTool{}, lookup}})
	}
	m := scripted.New("m", text("Noted, teal is nice."), calls(fcall("lookup", nil)), text("Teal."))
	r, svc := memoryRunner(t, agent(m), mem, nil)
	mustRun(t, r, svc, "s1", userText("My favourite colour is teal."), engine.RunConfig{})
	s1 := loadSession(t, svc, "s1")
	if err := mem.AddSession(t.Context(), s1); err != nil {
		t.Fatal(err)
	}
	mustRun(t, r, svc, "s2", userText("What is my favourite colour?"), engine.RunConfig{})
	reqs := m.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if len(reqs[0].Contents) != 1 {
		t.Errorf("first request (empty memory) has %d contents, want 1", len(reqs[0].Contents))
	}
	evs := s1.Events()
	past := "The following content is from your previous conversations with the user.\nThey may be useful for answering the user's current query.\n<PAST_CONVERSATIONS>\n" +
		"Time: " + memory.FormatTimestamp(evs[0].Timestamp) + "\nuser: My favourite colour is teal.\n" +
		"Time: " + memory.FormatTimestamp(evs[1].Timestamp) + "\nassistant: Noted, teal is nice.\n</PAST_CONVERSATIONS>\n"
	pastJSON := `{"parts":[{"text":` + jsonOf(past) + `}],"role":"user"}`
	// Before the user's message; after the function response on the next
	// request of the turn.
	wantJSON(t, "second request", reqs[1].Contents, `[`+pastJSON+`,{"parts":[{"text":"What is my favourite colour?"}],"role":"user"}]`)
	got := reqs[2].Contents
	if len(got) != 4 || got[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("third request contents: %s", jsonOf(got))
	}
	wantJSON(t, "third request's last content", got[3], pastJSON)
	if d := reqs[1].FunctionDeclaration("preload_memory"); d != nil {
		t.Error("preload_memory is declared to the model")
	}

	// A failing search is logged and changes nothing.
	var logs bytes.Buffer
	m2 := scripted.New("m", text("Hm."))
	r2, svc2 := memoryRunner(t, agent(m2), failingMemory{mem}, slog.New(slog.NewTextHandler(&logs, nil)))
	mustRun(t, r2, svc2, "s1", userText("colour"), engine.RunConfig{})
	if n := len(m2.Requests()[0].Contents); n != 1 {
		t.Errorf("request after a failed search has %d contents, want 1", n)
	}
	if !strings.Contains(logs.String(), "Failed to preload memory") || !strings.Contains(logs.String(), "search down") {
		t.Errorf("no warning logged: %q", logs.String())
	}
}
