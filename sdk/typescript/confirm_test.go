package typescript_test

import (
	"testing"

	"github.com/adkhost/adkhost/internal/guesttest"
)

// TestBeforeToolConfirmation: a beforeTool callback, and a plugin's
// beforeToolCallback, see the user's confirmation of the call in
// context.toolConfirmation when a confirmed call runs again; without one
// it is undefined.
func TestBeforeToolConfirmation(t *testing.T) {
	for _, c := range []struct{ src, by string }{{"tests/confirm_callback.ts", "callback"}, {"tests/confirm_plugin.ts", "plugin"}} {
		t.Run(c.by, func(t *testing.T) {
			got := guesttest.BeforeToolConfirmations(t, buildModule(t, c.src))
			if want := `[null,{"by":"` + c.by + `","confirmed":true,"hint":"pay 5?"}]`; got != want {
				t.Errorf("before_tool results %s, want %s", got, want)
			}
		})
	}
}
