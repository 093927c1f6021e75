package rust_test

// End-to-end tests of the Rust SDK's artifact, HTTP and memory functions:
// testdata/guest (a crate of the SDK's workspace) is built for
// wasm32-wasip1 with cargo-wasm, as plugins/examples/Makefile builds the
// Rust example, and called through the real sandbox with a host that
// records the calls (adkhosttest.Host). The SDK's unit tests (src/tests.rs,
// cargo test) run in plugins/examples' TestRustSDK. Without a Rust
// toolchain for wasm32-wasip1 the test skips, except under CI=true, where
// it fails.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// buildGuest builds testdata/guest with cargo-wasm, which picks rustup's
// toolchain with the wasm32-wasip1 target or Debian's rustc-web.
func buildGuest(t *testing.T) []byte {
	t.Helper()
	if msg, err := exec.Command("./cargo-wasm", "probe").CombinedOutput(); err != nil {
		missing(t, fmt.Sprintf("no Rust toolchain for wasm32-wasip1 (plugins/examples/install-deps.sh rust installs Debian's): %v\n%s", err, msg))
	}
	wasm := filepath.Join(t.TempDir(), "guest.wasm")
	if out, err := exec.Command("./cargo-wasm", "build", "testdata/guest/Cargo.toml", wasm).CombinedOutput(); err != nil {
		t.Fatalf("cargo-wasm build testdata/guest: %v\n%s", err, out)
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
