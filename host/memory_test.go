package host_test

// End-to-end: a module's tool searches the user's memory and adds the
// session to it in real engine turns, through a runner's memory service.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/testkit"
)

// probeTurn runs one turn in which the model calls the guest's probe tool
// with ops, then answers "done", and returns the probe's results.
func probeTurn(t *testing.T, m *host.Module, opts testkit.Options, text, ops string) (*testkit.World, string) {
	t.Helper()
	var args map[string]any
	if err := json.Unmarshal([]byte(`{"ops":`+ops+`}`), &args); err != nil {
		t.Fatal(err)
	}
	w := testkit.NewWorldWith(t, opts, engine.LlmAgentConfig{Tools: []tool.Tool{findTool(t, m, "probe")}}, nil,
		testkit.Calls(testkit.Call("call-1", "probe", args)), testkit.Reply("done"))
	evs := w.MustTurn(text)
	for _, ev := range evs {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if r := p.FunctionResponse; r != nil && r.Name == "probe" {
				return w, canon(t, r.Response["results"])
			}
		}
	}
	t.Fatalf("no probe response in %s", testkit.Views(evs))
	return nil, ""
}

func TestMemorySearchInATurn(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	ctx := context.Background()
	// What user u said in an earlier session.
	mem := memory.NewInMemoryService()
	ev := session.NewEvent("e-0", "user", "")
	ev.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "I drink green tea every morning"}}}
	ev.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	other := session.NewEvent("e-0", "user", "")
	other.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "my cat is called Ada"}}}
	if err := mem.AddSession(ctx, session.New("app", "u", "old", nil, []*session.Event{ev, other}, time.Now(), 0)); err != nil {
		t.Fatal(err)
	}

	_, got := probeTurn(t, m, testkit.Options{Memory: mem}, "what do I drink?", `[
		{"op":"memory_search","arg":"tea"},
		{"op":"memory_search","arg":"nothing of the sort"}
	]`)
	// The guest sees exactly the JSON of the engine's search response.
	want, err := mem.Search(ctx, "app", "u", "tea")
	if err != nil || len(want.Memories) != 1 {
		t.Fatalf("engine search: %+v, %v", want, err)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if want := canon(t, `[{"op":"memory_search","status":"OK","result":`+string(wantJSON)+`},
		{"op":"memory_search","status":"OK","result":{"memories":[]}}]`); got != want {
		t.Fatalf("results:\n got %s\nwant %s", got, want)
	}
	// And that JSON is google-adk's MemoryEntry.
	if got, want := canon(t, want.Memories[0]), canon(t, `{"content":{"role":"user","parts":[{"text":"I drink green tea every morning"}]},
		"custom_metadata":{},"id":"`+ev.ID+`","author":"user","timestamp":"2026-01-02T03:04:05"}`); got != want {
		t.Fatalf("entry:\n got %s\nwant %s", got, want)
	}

	t.Run("without a memory service", func(t *testing.T) {
		_, got := probeTurn(t, m, testkit.Options{}, "what do I drink?", `[
			{"op":"memory_search","arg":"tea"},
			{"op":"memory_add_session"}
		]`)
		if want := canon(t, `[{"op":"memory_search","status":"UNAVAILABLE"},{"op":"memory_add_session","status":"UNAVAILABLE"}]`); got != want {
			t.Fatalf("results:\n got %s\nwant %s", got, want)
		}
	})
}

func TestMemoryAddSessionInATurn(t *testing.T) {
	t.Parallel()
	m := load(t, host.ModuleConfig{})
	ctx := context.Background()
	mem := memory.NewInMemoryService()
	w, got := probeTurn(t, m, testkit.Options{Memory: mem}, "remember that I drink green tea", `[
		{"op":"memory_search","arg":"tea"},
		{"op":"memory_add_session"},
		{"op":"memory_search","arg":"green tea"}
	]`)
	// Before the add nothing is remembered; after it, the user's message
	// of this very turn, which the session already holds.
	var results []struct {
		Op     string                 `json:"op"`
		Status string                 `json:"status"`
		Result *memory.SearchResponse `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Status != "OK" || len(results[0].Result.Memories) != 0 ||
		results[1].Status != "OK" || results[2].Status != "OK" || len(results[2].Result.Memories) != 1 {
		t.Fatalf("results: %s", got)
	}
	found := results[2].Result.Memories[0]
	if found.Author != "user" || found.Text(" ") != "remember that I drink green tea" {
		t.Fatalf("memory found after add_session: %+v", found)
	}
	// The runner's service holds the session, for later sessions too.
	resp, err := mem.Search(ctx, "app", "u", "tea")
	if err != nil || len(resp.Memories) != 1 || resp.Memories[0].ID != w.Session().Events()[0].ID {
		t.Fatalf("service search after the turn: %+v, %v", resp, err)
	}
}
