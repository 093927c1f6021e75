package python_test

import (
	"testing"

	"github.com/adkhost/adkhost/internal/guesttest"
)

// TestBeforeToolConfirmation: a before_tool callback, and a plugin's
// before_tool_callback, see the user's confirmation of the call in
// tool_context.tool_confirmation, as google-adk shows it when a confirmed
// call runs again; without one it is None.
func TestBeforeToolConfirmation(t *testing.T) {
	for _, c := range []struct{ src, by string }{{"tests/confirm_callback.py", "callback"}, {"tests/confirm_plugin.py", "plugin"}} {
		t.Run(c.by, func(t *testing.T) {
			got := guesttest.BeforeToolConfirmations(t, buildModule(t, c.src))
			if want := `[null,{"by":"` + c.by + `","confirmed":true,"hint":"pay 5?"}]`; got != want {
				t.Errorf("before_tool results %s, want %s", got, want)
			}
		})
	}
}
