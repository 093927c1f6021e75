package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adkhost/adkhost/store/registry"
)

// collidingRegistry lists, once on is set, one more module whose digest
// starts with prefix: what an uploader gets by grinding 32 bits of
// SHA-256 for an 8-digit prefix (or what chance gives among enough
// modules).
type collidingRegistry struct {
	registry.Registry
	on     *atomic.Bool
	prefix *atomic.Value
}

func (r collidingRegistry) Modules(ctx context.Context) ([]registry.ModuleInfo, error) {
	all, err := r.Registry.Modules(ctx)
	if p, _ := r.prefix.Load().(string); err == nil && r.on.Load() && p != "" {
		fake := p + strings.Repeat("0", 64-len(p))
		all = append(all, registry.ModuleInfo{SHA256: fake, Name: "grinder", Size: 8})
	}
	return all, err
}

// TestShortDigestIsPinnedAtRegistration: a definition naming its module by
// a short digest ("sha256:<8 hex>", as `module list` prints it) keeps the
// module it named when registered. Before, the prefix was resolved again
// at every load, so a later upload whose digest starts the same made the
// app fail at the next restart or module reload.
func TestShortDigestIsPinnedAtRegistration(t *testing.T) {
	dir := t.TempDir()
	on, prefix := new(atomic.Bool), new(atomic.Value)
	opts := harnessOpts{wrapRegistry: func(r registry.Registry) registry.Registry {
		return collidingRegistry{Registry: r, on: on, prefix: prefix}
	}}
	h := newHarness(t, dir, opts)
	up := decode[map[string]any](t, h.must(http.StatusCreated)(h.admin("PUT", "/modules/weather", weatherWasm(t))))
	short := strings.TrimPrefix(up["digest"].(string), "sha256:")[:8]
	prefix.Store(short)
	files := appFiles("chat", "v1", true)
	files["root_agent.yaml"] = strings.Replace(files["root_agent.yaml"], "    weather:\n", "    weather:\n      ref: sha256:"+short+"\n", 1)
	h.must(http.StatusCreated)(h.putBundle("chat", files))
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("chat", "u", "s", "Paris")))

	on.Store(true)
	// A new registration with the prefix is refused as ambiguous...
	if st, b := h.putBundle("chat2", files); st != http.StatusUnprocessableEntity || !strings.Contains(string(b), "give more digits") {
		t.Errorf("registering with an ambiguous prefix: %d %s, want 422 asking for more digits", st, b)
	}
	h.close()
	// ...but the app registered with it still loads after a restart, on
	// the module it was registered with.
	h2 := newHarness(t, dir, opts)
	app := decode[map[string]any](t, h2.must(http.StatusOK)(h2.admin("GET", "/apps/chat", nil)))
	if app["status"] != "serving" {
		t.Fatalf("after a colliding upload and a restart the app is %v: %v", app["status"], app["error"])
	}
	ev := decode[[]map[string]any](t, h2.must(http.StatusOK)(h2.do("POST", "/run", runBody("chat", "u", "s", "Rome"))))
	if got := lastText(t, ev); got != "v1: weather in Rome" {
		t.Errorf("run after restart: %q", got)
	}
	app = decode[map[string]any](t, h2.must(http.StatusOK)(h2.admin("GET", "/apps/chat", nil)))
	if pins, _ := app["pins"].(map[string]any); pins[short] != strings.TrimPrefix(up["digest"].(string), "sha256:") {
		t.Errorf("GET /apps/chat pins = %v, want %s pinned to %s", app["pins"], short, up["digest"])
	}
}

// TestHexModuleNamesRefused: a module name that reads as a short digest
// is refused at upload: GET and DELETE /modules/{ref} take such a ref for
// a digest first, so it would reach another module, or none.
func TestHexModuleNamesRefused(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	for _, name := range []string{"deadbeef", "abcdef0123456789", strings.Repeat("a", 64)} {
		if st, b := h.admin("PUT", "/modules/"+name, weatherWasm(t)); st != http.StatusBadRequest || !strings.Contains(string(b), "digest") {
			t.Errorf("PUT /modules/%s: %d %s, want 400", name, st, b)
		}
	}
	h.must(http.StatusCreated)(h.admin("PUT", "/modules/deadbeeg", weatherWasm(t)))
}
