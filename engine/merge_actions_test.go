package engine

import (
	"testing"

	"github.com/adkhost/adkhost/engine/session"
)

// google-adk merges the responses of one model turn by deep-merging their
// actions dumped without None, so the last call that set
// skip_summarization, even to False (an AgentTool whose agent paused),
// decides whether the model summarizes.
func TestMergeResponseEventsSkipSummarizationLastSetWins(t *testing.T) {
	skip := func() *session.Event { return &session.Event{Actions: session.EventActions{SkipSummarization: true}} }
	explicitFalse := func() *session.Event {
		return &session.Event{Actions: session.EventActions{SkipSummarizationSet: true}}
	}
	unset := func() *session.Event { return &session.Event{} }
	for _, tc := range []struct {
		name      string
		events    []*session.Event
		skip, set bool
	}{
		{"skip then explicit false", []*session.Event{skip(), explicitFalse()}, false, true},
		{"explicit false then skip", []*session.Event{explicitFalse(), skip()}, true, false},
		{"skip then unset", []*session.Event{skip(), unset()}, true, false},
		{"unset then unset", []*session.Event{unset(), unset()}, false, false},
	} {
		a := mergeResponseEvents(tc.events).Actions
		if a.SkipSummarization != tc.skip || a.SkipSummarizationSet != tc.set {
			t.Errorf("%s: merged SkipSummarization %v (set %v), want %v (set %v)", tc.name, a.SkipSummarization, a.SkipSummarizationSet, tc.skip, tc.set)
		}
	}
}
