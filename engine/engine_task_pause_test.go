package engine_test

import (
	"testing"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/engine/session"
)

// A task delegation that waits for the user pauses the invocation inside a
// SequentialAgent as a long-running call does: the agents after the
// delegating one run only once the task has finished (KNOWN_DIFFS.md,
// mode_task_paused_in_sequential).
func TestTaskWaitingForUserPausesSequential(t *testing.T) {
	t.Parallel()
	m := scripted.New("m",
		calls(fcallID("call-r", "researcher", map[string]any{"request": "cats"})),
		text("Which cats do you mean?"),
		calls(fcallID("call-f", "finish_task", map[string]any{"result": "house cats sleep a lot"})),
		text("House cats sleep a lot."),
		text("Report: house cats sleep a lot."))
	researcher := newLlm(t, engine.LlmAgentConfig{Name: "researcher", Model: m, Mode: engine.ModeTask})
	coordinator := newLlm(t, engine.LlmAgentConfig{Name: "coordinator", Model: m, SubAgents: []engine.Agent{researcher}})
	reporter := newLlm(t, engine.LlmAgentConfig{Name: "reporter", Model: m})
	r, svc := mustRunner(t, newSeq(t, "pipeline", coordinator, reporter))

	authors := func(evs []*session.Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Author)
		}
		return out
	}
	evs := mustRun(t, r, svc, "s", userText("Research cats."), engine.RunConfig{})
	if got := authors(evs); len(got) != 2 || got[0] != "coordinator" || got[1] != "researcher" {
		t.Fatalf("turn 1 authors = %v, want [coordinator researcher] (the reporter waits for the task)", got)
	}
	evs = mustRun(t, r, svc, "s", userText("House cats."), engine.RunConfig{})
	got := authors(evs)
	if len(got) == 0 || got[len(got)-1] != "reporter" {
		t.Fatalf("turn 2 authors = %v, want the reporter last once the task finished", got)
	}
	if evs[0].InvocationID != evs[len(evs)-1].InvocationID {
		t.Errorf("turn 2 mixes invocations")
	}
}
