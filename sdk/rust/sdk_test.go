package rust_test

// End-to-end tests of the Rust SDK's artifact, HTTP and memory functions:
// testdata/guest.rs is built for wasm32 with rustc (the SDK as an rlib,
// the guest as a cdylib, as plugins/examples/Makefile does) and called
// through the real sandbox with a host that records the calls
// (adkhosttest.Host). The SDK's
// unit tests (src/tests.rs) run in plugins/examples' TestRustSDK. Without
// rustc and its wasm32 standard library the test skips, except under
// CI=true, where it fails.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/guesttest"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skipf("%s (skipping; CI=true makes this a failure)", why)
}

// buildGuest compiles testdata/guest.rs with Debian's rustc (1.63) when
// installed, as the Makefile prefers it, else the rustc in PATH.
func buildGuest(t *testing.T) []byte {
	t.Helper()
	rustc := "/usr/bin/rustc"
	if _, err := os.Stat(rustc); err != nil {
		if rustc, err = exec.LookPath("rustc"); err != nil {
			missing(t, "rustc is not installed")
		}
	}
	targets, err := exec.Command(rustc, "--print", "target-list").Output()
	if err != nil {
		t.Fatalf("%s --print target-list: %v", rustc, err)
	}
	target := "wasm32-wasip1" // Rust 1.84 renamed wasm32-wasi
	if slices.Contains(strings.Fields(string(targets)), "wasm32-wasi") {
		target = "wasm32-wasi"
	}
	sysroot, err := exec.Command(rustc, "--print", "sysroot").Output()
	if err != nil {
		t.Fatalf("%s --print sysroot: %v", rustc, err)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(sysroot)), "lib", "rustlib", target)); err != nil {
		missing(t, rustc+" has no "+target+" standard library")
	}
	dir := t.TempDir()
	rlib, wasm := filepath.Join(dir, "libadkhost.rlib"), filepath.Join(dir, "guest.wasm")
	common := []string{"--edition", "2021", "--target", target, "-O", "-D", "warnings"}
	for _, args := range [][]string{
		{"--crate-type", "rlib", "--crate-name", "adkhost", "-o", rlib, "src/lib.rs"},
		{"--crate-type", "cdylib", "-C", "strip=debuginfo", "--extern", "adkhost=" + rlib, "-o", wasm, "testdata/guest.rs"},
	} {
		if out, err := exec.Command(rustc, append(common, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("rustc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestArtifactsHTTPAndMemory(t *testing.T) {
	ctx := context.Background()
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sdk-rust-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	m, err := r.Load(ctx, buildGuest(t))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if d, _ := json.Marshal(m.Describe()); !strings.Contains(string(d), `"capabilities":["artifacts","http","memory"]`) {
		t.Errorf("describe %s lacks the capabilities", d)
	}
	grants := sandbox.Grants{Artifacts: true, HTTP: sandbox.HTTPGrant{Hosts: []string{"127.0.0.1"}, AllowPrivate: true}, Memory: true}
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Limits: sandbox.Limits{MaxInstances: 1}, Grants: grants})
	if err != nil {
		t.Fatal(err)
	}
	g := guesttest.Guest{Runtime: r, Module: m, Pool: p, Grants: grants, Tag: "rust",
		Failure: func(fn string, s abi.Status) string { return fmt.Sprintf("adkhost: %s: %s (%d)", fn, s.String(), s) }}
	guesttest.ArtifactsAndHTTP(t, g, &adkhosttest.Host{})
	t.Run("memory", func(t *testing.T) { guesttest.Memory(t, g) })
}
