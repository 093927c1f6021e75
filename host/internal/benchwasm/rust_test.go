package benchwasm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// TestRustBench is the Rust row of make bench-wasm, measured as the Python
// row is (row): sdk/rust/testdata/weather, the Go tool's twin with serde
// types, built by sdk/rust/cargo-wasm (release: opt-level 3, LTO). It
// needs a Rust toolchain for wasm32-wasip1 (plugins/examples/install-deps.sh).
func TestRustBench(t *testing.T) {
	enabled(t)
	start := time.Now()
	wasm := buildRustWeather(t)
	t.Logf("rust: build %.1f s (cargo, incremental), %d bytes", time.Since(start).Seconds(), len(wasm))
	row(t, "rust", wasm)
}

// BenchmarkTurnRust is BenchmarkTurn with the Rust guest: the engine turn
// of make bench-wasm's turn_ratio_rust_vs_go, for profiles and for
// comparing with BenchmarkTurnC.
func BenchmarkTurnRust(b *testing.B) {
	rt, _ := benchRuntime(b)
	benchTurns(b, rt, buildRustWeather(b))
}

// buildRustWeather builds sdk/rust/testdata/weather with cargo-wasm.
func buildRustWeather(t testing.TB) []byte {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "weather.wasm")
	cmd := exec.Command(filepath.Join(root, "sdk/rust/cargo-wasm"), "build", filepath.Join(root, "sdk/rust/testdata/weather/Cargo.toml"), out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo-wasm build sdk/rust/testdata/weather: %v\n%s", err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}
