package benchwasm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// TestCBench is the C row of make bench-wasm, measured as the Python row is
// (row): testdata/weather.c, the Go tool's twin against sdk/c, built as the
// C example is (clang for wasm32-wasi with wasi-libc, -O2;
// plugins/examples/install-deps.sh installs them).
func TestCBench(t *testing.T) {
	enabled(t)
	row(t, "c", buildCWeather(t))
}

// BenchmarkTurnC is BenchmarkTurn with the C guest: the host's share of a
// call, with a guest that costs almost nothing.
func BenchmarkTurnC(b *testing.B) {
	rt, _ := benchRuntime(b)
	guestTool, goTool, closeTools := turnTools(b, rt, buildCWeather(b))
	defer closeTools()
	b.Run("wasm", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(guestTool)) })
	b.Run("go", func(b *testing.B) { b.ReportAllocs(); cpuPerOp(b, turn(goTool)) })
}

// buildCWeather builds testdata/weather.c.
func buildCWeather(t testing.TB) []byte {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "weather.wasm")
	args := []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Wextra", "-Werror"}
	for _, sysroot := range []string{"/usr/share/wasi-sysroot", "/opt/wasi-sdk/share/wasi-sysroot"} {
		if _, err := os.Stat(sysroot); err == nil {
			args = append(args, "--sysroot="+sysroot)
			break
		}
	}
	sdk := filepath.Join(root, "sdk", "c")
	args = append(args, "-I"+sdk, "-o", out, filepath.Join("testdata", "weather.c"), filepath.Join(sdk, "adkhost.c"))
	if msg, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %v: %v\n%s", args, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("c: %d bytes", len(wasm))
	return wasm
}
