package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/host/server"
)

func TestAdminAuthIsRequired(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "Basic " + adminToken}} {
		st, b := h.do("GET", "/admin/v1/modules", nil, hdr...)
		if st != http.StatusUnauthorized {
			t.Fatalf("%v: status %d, want 401: %s", hdr, st, b)
		}
		if e := decode[map[string]any](t, b); e["error"] == "" || e["error"] == nil {
			t.Fatalf("401 body has no error: %s", b)
		}
	}
	h.must(http.StatusOK)(h.admin("GET", "/modules", nil))
	// The run API is open unless a run token is set.
	h.must(http.StatusOK)(h.do("GET", "/list-apps", nil))
}

func TestRunTokenGuardsTheRunAPI(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: "run-secret"})
	h.must(http.StatusUnauthorized)(h.do("GET", "/list-apps", nil))
	h.must(http.StatusOK)(h.do("GET", "/list-apps", nil, "Authorization", "Bearer run-secret"))
	// The admin token is not a run token, and health stays open for probes.
	h.must(http.StatusUnauthorized)(h.do("GET", "/list-apps", nil, "Authorization", "Bearer "+adminToken))
	h.must(http.StatusOK)(h.do("GET", "/health", nil))
}

func TestModuleLifecycle(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	wasm := weatherWasm(t)
	up := decode[map[string]any](t, h.must(http.StatusCreated)(h.admin("PUT", "/modules/weather", wasm)))
	digest, _ := up["digest"].(string)
	if !strings.HasPrefix(digest, "sha256:") || up["size"].(float64) != float64(len(wasm)) {
		t.Fatalf("upload answer: %v", up)
	}
	// Uploading the same bytes again is not a new module.
	h.must(http.StatusOK)(h.admin("PUT", "/modules/weather", wasm))

	list := decode[[]map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/modules", nil)))
	if len(list) != 1 || list[0]["name"] != "weather" {
		t.Fatalf("list: %v", list)
	}
	for _, ref := range []string{"weather", digest, strings.TrimPrefix(digest, "sha256:")} {
		d := decode[map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/modules/"+ref, nil)))
		desc, _ := d["describe"].(map[string]any)
		if desc["name"] != "weather" || d["digest"] != digest {
			t.Fatalf("describe %s: %v", ref, d)
		}
	}
	h.must(http.StatusNotFound)(h.admin("GET", "/modules/nope", nil))

	// A module in use cannot be deleted.
	h.must(http.StatusCreated)(h.putBundle("wx", appFiles("wx", "v1", true)))
	conflict := decode[map[string]any](t, h.must(http.StatusConflict)(h.admin("DELETE", "/modules/weather", nil)))
	if apps, _ := conflict["apps"].([]any); len(apps) != 1 || apps[0] != "wx" {
		t.Fatalf("409 body: %v", conflict)
	}
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/wx", nil))
	h.must(http.StatusNoContent)(h.admin("DELETE", "/modules/"+digest, nil))
	h.must(http.StatusNotFound)(h.admin("DELETE", "/modules/"+digest, nil))
}

func TestModulesThatFailToLoadAreRefused(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	for _, c := range []struct {
		name   string
		wasm   []byte
		reason string
	}{
		{"garbage", []byte("this is not wasm"), "compile"},
		// A valid, empty module: no adkhost ABI marker.
		{"empty", []byte{0, 'a', 's', 'm', 1, 0, 0, 0}, "no_abi_version"},
	} {
		b := h.must(http.StatusUnprocessableEntity)(h.admin("PUT", "/modules/"+c.name, c.wasm))
		if e := decode[map[string]any](t, b); e["reason"] != c.reason {
			t.Errorf("%s: reason %v, want %s: %s", c.name, e["reason"], c.reason, b)
		}
	}
	h.must(http.StatusBadRequest)(h.admin("PUT", "/modules/empty", nil))
	h.must(http.StatusBadRequest)(h.admin("PUT", "/modules/bad%20name", []byte{0}))
	if list := decode[[]any](t, h.must(http.StatusOK)(h.admin("GET", "/modules", nil))); len(list) != 0 {
		t.Fatalf("refused modules were stored: %v", list)
	}
}

func TestBodyLimits(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{ModuleBytes: 1024, DefinitionBytes: 64, RequestBytes: 128}})
	b := h.must(http.StatusRequestEntityTooLarge)(h.admin("PUT", "/modules/big", weatherWasm(t)))
	if !strings.Contains(string(b), `"error"`) {
		t.Fatalf("413 body: %s", b)
	}
	h.must(http.StatusRequestEntityTooLarge)(h.putApp("big", strings.Repeat("# padding\n", 20)))
	h.must(http.StatusRequestEntityTooLarge)(h.do("POST", "/run", runBody("a", "u", "s", strings.Repeat("x", 200))))
}

func TestMalformedDefinitionReportsItsLocation(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	b := h.must(http.StatusUnprocessableEntity)(h.putApp("bad", "name: ok\nmodel: scripted\ninstruction: hi\nunknown_key: 3\n"))
	e := decode[map[string]any](t, b)
	if e["file"] != "root_agent.yaml" || e["error"] == nil {
		t.Fatalf("error body lacks the location: %s", b)
	}
	found := false
	for _, x := range e["errors"].([]any) {
		m := x.(map[string]any)
		if m["line"] == float64(4) && m["column"].(float64) > 0 && strings.Contains(m["field"].(string)+m["message"].(string), "unknown_key") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no error at line 4 about unknown_key: %s", b)
	}
	b = h.must(http.StatusUnprocessableEntity)(h.putApp("bad", "name: [unclosed\n"))
	if e := decode[map[string]any](t, b); e["line"] == float64(0) || e["line"] == nil {
		t.Fatalf("syntax error without a line: %s", b)
	}
	// Nothing was stored, so nothing is served.
	h.must(http.StatusNotFound)(h.admin("GET", "/apps/bad", nil))
	h.must(http.StatusUnsupportedMediaType)(h.admin("PUT", "/apps/bad", "name: x", "Content-Type", "application/json"))
	// An app referring to a module never uploaded does not load.
	files := appFiles("nomod", "v1", false)
	files["root_agent.yaml"] += "tools:\n  - module: ghost\n"
	b = h.must(http.StatusUnprocessableEntity)(h.putBundle("nomod", files))
	if e := decode[map[string]any](t, b); !strings.Contains(string(b), "ghost") || e["reason"] != "module_not_found" {
		t.Fatalf("unknown module error: %s", b)
	}
}

func TestAppBundleReplaceAndDelete(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	files := appFiles("bundle", "v1", false)
	files["docs/notes.txt"] = "extra file"
	created := decode[map[string]any](t, h.must(http.StatusCreated)(h.putBundle("bundle", files)))
	if created["version"] != float64(1) || created["rootAgent"] != "bundle_agent" {
		t.Fatalf("created: %v", created)
	}
	h.must(http.StatusOK)(h.putBundle("bundle", appFiles("bundle", "v2", false)))
	got := decode[map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/apps/bundle", nil)))
	gotFiles, _ := got["files"].(map[string]any)
	if got["version"] != float64(2) || !strings.Contains(gotFiles["scripted_model.yaml"].(string), "v2: ") || got["status"] != "serving" {
		t.Fatalf("get: %v", got)
	}
	if vs, _ := got["versions"].([]any); len(vs) != 2 {
		t.Fatalf("versions: %v", got["versions"])
	}
	list := decode[[]map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/apps", nil)))
	if len(list) != 1 || list[0]["name"] != "bundle" {
		t.Fatalf("list: %v", list)
	}
	if names := decode[[]string](t, h.must(http.StatusOK)(h.do("GET", "/list-apps", nil))); len(names) != 1 || names[0] != "bundle" {
		t.Fatalf("list-apps: %v", names)
	}
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/bundle", nil))
	h.must(http.StatusNotFound)(h.admin("DELETE", "/apps/bundle", nil))
	h.must(http.StatusNotFound)(h.do("POST", "/run", runBody("bundle", "u", "s", "hi")))

	// A bundle without root_agent.yaml is refused.
	h.must(http.StatusBadRequest)(h.putBundle("nob", map[string]string{"other.yaml": "name: x\n"}))
}

// withCustomSection returns wasm with a custom section appended: the same
// module, other bytes, so another digest (a new version of it).
func withCustomSection(wasm []byte, payload string) []byte {
	name := "adkhost-test"
	body := append([]byte{byte(len(name))}, name...)
	body = append(body, payload...)
	out := append([]byte{}, wasm...)
	return append(append(out, 0, byte(len(body))), body...)
}

// TestModuleNameFollowsNewestUpload: a reference by name means the newest
// upload, at once and not only after a restart; upload says whether the
// bytes are new and which apps moved; list marks the newest version; short
// digests as list prints them address one version.
func TestModuleNameFollowsNewestUpload(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	v1 := weatherWasm(t)
	up1 := decode[map[string]any](t, h.must(http.StatusCreated)(h.admin("PUT", "/modules/weather", v1)))
	h.must(http.StatusCreated)(h.putBundle("wx", appFiles("wx", "v1", true)))

	again := decode[map[string]any](t, h.must(http.StatusOK)(h.admin("PUT", "/modules/weather", v1)))
	if again["unchanged"] != true || again["reloaded"] != nil {
		t.Fatalf("same bytes again: %v, want unchanged and no reload", again)
	}

	v2 := withCustomSection(v1, "v2")
	up2 := decode[map[string]any](t, h.must(http.StatusCreated)(h.admin("PUT", "/modules/weather", v2)))
	if up2["unchanged"] == true || up2["newest"] != true {
		t.Fatalf("new bytes: %v, want a new newest version", up2)
	}
	if r, _ := up2["reloaded"].([]any); len(r) != 1 || r[0] != "wx" {
		t.Fatalf("reloaded = %v, want [wx]", up2["reloaded"])
	}
	app := decode[map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/apps/wx", nil)))
	if mods, _ := app["modules"].([]any); len(mods) != 1 || mods[0] != up2["digest"] {
		t.Fatalf("app modules = %v, want [%v]", app["modules"], up2["digest"])
	}
	// The app still runs, on the new version.
	h.must(http.StatusOK)(h.do("POST", "/apps/wx/users/u/sessions/s1", map[string]any{}))
	if got := lastText(t, decode[[]map[string]any](t, h.must(http.StatusOK)(h.do("POST", "/run", runBody("wx", "u", "s1", "Paris"))))); !strings.Contains(got, "weather in Paris") {
		t.Errorf("run on v2: %q", got)
	}

	// An app pinned to v2 by a short digest stays there when v3 arrives.
	short2 := up2["digest"].(string)[:len("sha256:")+12]
	pinned := appFiles("pinned", "p", true)
	pinned["root_agent.yaml"] = strings.Replace(pinned["root_agent.yaml"], "    weather:\n", "    weather:\n      ref: weather@"+short2+"\n", 1)
	h.must(http.StatusCreated)(h.putBundle("pinned", pinned))
	up3 := decode[map[string]any](t, h.must(http.StatusCreated)(h.admin("PUT", "/modules/weather", withCustomSection(v1, "v3"))))
	if r, _ := up3["reloaded"].([]any); len(r) != 1 || r[0] != "wx" {
		t.Fatalf("v3 reloaded = %v, want [wx] (pinned stays)", up3["reloaded"])
	}
	app = decode[map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/apps/pinned", nil)))
	if mods, _ := app["modules"].([]any); len(mods) != 1 || mods[0] != up2["digest"] {
		t.Fatalf("pinned app modules = %v, want [%v]", app["modules"], up2["digest"])
	}
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/pinned", nil))

	list := decode[[]map[string]any](t, h.must(http.StatusOK)(h.admin("GET", "/modules", nil)))
	if len(list) != 3 || list[0]["newest"] == true || list[1]["newest"] == true || list[2]["newest"] != true || list[2]["digest"] != up3["digest"] {
		t.Fatalf("list: %v, want v1, v2, v3, v3 newest", list)
	}
	// v1 is unused now: delete it by its short digest.
	short := up1["digest"].(string)[:len("sha256:")+12]
	h.must(http.StatusNoContent)(h.admin("DELETE", "/modules/"+short, nil))
	h.must(http.StatusNotFound)(h.admin("GET", "/modules/"+short, nil))
	// A typo gets a suggestion.
	_, body := h.admin("GET", "/modules/wether", nil)
	if !strings.Contains(string(body), "did you mean weather?") {
		t.Errorf("typo answer %s, want a suggestion", body)
	}
}
