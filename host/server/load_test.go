package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLoad runs 200 sessions of 5 turns each, all sessions at once, each
// turn a model call, a Wasm tool call and a second model call, and wants
// every turn answered and every event stored.
func TestLoad(t *testing.T) {
	const sessions, turns = 200, 5
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("load", "v1", true)
	h.ts.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = sessions
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runSession(h, fmt.Sprintf("s%d", i), turns)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d turns in %v: %.0f turns/s", sessions*turns, elapsed, float64(sessions*turns)/elapsed.Seconds())
	// Every session holds all its events: 4 per turn.
	for _, id := range []string{"s0", fmt.Sprintf("s%d", sessions-1)} {
		sess := decode[map[string]any](t, h.must(http.StatusOK)(h.do("GET", "/apps/load/users/u/sessions/"+id, nil)))
		if n := len(sess["events"].([]any)); n != 4*turns {
			t.Fatalf("session %s has %d events, want %d", id, n, 4*turns)
		}
	}
}

// runSession creates a session and plays turns through /run; it does not
// touch testing.T, as it runs on its own goroutine.
func runSession(h *harness, id string, turns int) error {
	c := h.ts.Client()
	post := func(path string, body any) ([]byte, error) {
		js, _ := json.Marshal(body)
		resp, err := c.Post(h.ts.URL+path, "application/json", strings.NewReader(string(js)))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s %s: status %d: %s", path, id, resp.StatusCode, b)
		}
		return b, nil
	}
	if _, err := post("/apps/load/users/u/sessions", map[string]any{"sessionId": id}); err != nil {
		return err
	}
	for i := range turns {
		city := fmt.Sprintf("city-%s-%d", id, i)
		b, err := post("/run", runBody("load", "u", id, city))
		if err != nil {
			return err
		}
		var events []map[string]any
		if err := json.Unmarshal(b, &events); err != nil {
			return fmt.Errorf("session %s turn %d: %w", id, i, err)
		}
		if len(events) != 3 || !strings.Contains(string(b), "v1: weather in "+city) {
			return fmt.Errorf("session %s turn %d: unexpected answer %s", id, i, b)
		}
	}
	return nil
}
