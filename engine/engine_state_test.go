package engine_test

import (
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/tool"
)

// A tool that writes into a map read from the state, without assigning the
// key, still has the change in its response event's state delta and in
// the session, as in google-adk 2.13.
func TestToolNestedStateWriteIsRecorded(t *testing.T) {
	t.Parallel()
	add, err := tool.NewFunction(tool.FunctionConfig{
		Name: "add_apple", Description: "Adds an apple.",
		Fn: func(ctx callbacks.ToolContext, _ map[string]any) (any, error) {
			v, _ := ctx.State().Get("cart")
			v.(map[string]any)["apples"] = int64(2)
			return map[string]any{"ok": true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New("m", calls(fcallID("c1", "add_apple", nil)), text("Added."))
	r, svc := mustRunner(t, newLlm(t, engine.LlmAgentConfig{Name: "shop", Model: m, Tools: []tool.Tool{add}}))
	evs := mustRun(t, r, svc, "s", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Add an apple."}}}, engine.RunConfig{StateDelta: map[string]any{"cart": map[string]any{"apples": int64(1)}}})
	if len(evs) < 2 || jsonOf(evs[1].Actions.StateDelta) != `{"cart":{"apples":2}}` {
		t.Fatalf("response event delta = %s, want the cart with 2 apples", jsonOf(evs[1].Actions.StateDelta))
	}
	got, _ := loadSession(t, svc, "s").StateValue("cart")
	if jsonOf(got) != `{"apples":2}` {
		t.Errorf("stored cart = %s, want {\"apples\":2}", jsonOf(got))
	}
}
