package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/host/server"
)

// TestPathParamsDecodedOnce: a path's ids mean the same thing however the
// client escaped the path. Echo hands parameters out still escaped when
// any byte of the path is escaped other than canonically (%41, %2F), and
// decoded otherwise; artifact names were then decoded a second time.
// Either way one id named two sessions, and "%2F" smuggled a '/' into ids
// the JSON API refuses.
func TestPathParamsDecodedOnce(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("chat", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "x y"}))
	// %79 is 'y' escaped needlessly: the same session as "x%20y".
	h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/x%20y", nil))
	h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/x%20%79", nil))
	h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/%75/sessions/x%20y", nil))

	// An artifact whose name holds '%' is reached by escaping it once.
	k := artifact.Key{AppName: "chat", UserID: "u", SessionID: "x y", Name: "a%41.txt"}
	if _, err := h.db.Artifacts().Save(context.Background(), k, genai.NewPartFromText("pct")); err != nil {
		t.Fatal(err)
	}
	if b := h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/x%20y/artifacts/a%2541.txt", nil)); !strings.Contains(string(b), "pct") {
		t.Errorf("artifact a%%41.txt: %s", b)
	}
	h.must(http.StatusOK)(h.do("GET", "/apps/chat/users/u/sessions/x%20%79/artifacts/a%2541.txt", nil))

	// Ids the JSON API refuses are refused in paths too, escaped or not;
	// so are app names no app can have.
	for _, p := range []string{
		"/apps/chat/users/u%2F1/sessions",
		"/apps/chat/users/u%5C1/sessions",
		"/apps/chat/users/u/sessions/s%2F1",
		"/apps/chat/users/u%00/sessions",
		"/apps/ch%2Fat/users/u/sessions",
		"/apps/chat%00/users/u/sessions",
		"/apps/" + strings.Repeat("a", 300) + "/users/u/sessions",
	} {
		for _, method := range []string{"GET", "POST"} {
			st, b := h.do(method, p, nil)
			if st != http.StatusBadRequest || !strings.Contains(string(b), "invalid") {
				t.Errorf("%s %.60s: %d %.200s, want 400 naming the invalid id", method, p, st, b)
			}
		}
	}
}

// A session listing carries every session's state merged with the app's
// and the user's, as google-adk lists them: 200 sessions of 900 KiB of
// state made a 180 MB answer and a 1.3 GB peak (VmHWM) for one GET, and
// app state, stored once, was repeated in every session of the answer.
// --max-list-bytes refuses such a listing with 413 before building it.
func TestSessionListingBounded(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{ListBytes: 1 << 20}})
	root := "name: echo\nmodel: scripted\ninstruction: Echo.\n"
	h.must(http.StatusCreated)(h.putBundle("echo", map[string]string{"root_agent.yaml": root, "scripted_model.yaml": "rules:\n  - respond: {text: 'x'}\n"}))
	// 100 KiB of app state, then sessions with none of their own: each
	// listed session shows the app state.
	h.must(http.StatusOK)(h.do("POST", "/apps/echo/users/u/sessions/first", map[string]any{"app:blob": strings.Repeat("a", 100<<10)}))
	for i := range 5 {
		h.must(http.StatusOK)(h.do("POST", fmt.Sprintf("/apps/echo/users/u/sessions/s%d", i), map[string]any{}))
	}
	list := decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/echo/users/u/sessions", nil)))
	if len(list) != 6 {
		t.Fatalf("listed %d sessions, want 6", len(list))
	}
	for i := 5; i < 12; i++ {
		h.must(http.StatusOK)(h.do("POST", fmt.Sprintf("/apps/echo/users/u/sessions/s%d", i), map[string]any{}))
	}
	st, body := h.do("GET", "/apps/echo/users/u/sessions", nil)
	if st != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"limit":"max_list_bytes"`) || !strings.Contains(string(body), "--max-list-bytes") {
		t.Fatalf("listing 13 sessions of 100 KiB of app state each past a 1 MiB bound: %d %.300s", st, body)
	}
	// Another user's listing, and a session read by id, still work.
	h.must(http.StatusOK)(h.do("GET", "/apps/echo/users/u/sessions/s11", nil))
	h.must(http.StatusOK)(h.do("POST", "/apps/echo/users/v/sessions/t", map[string]any{}))
	h.must(http.StatusOK)(h.do("GET", "/apps/echo/users/v/sessions", nil))
}
