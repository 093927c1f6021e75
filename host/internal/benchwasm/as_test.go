package benchwasm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// TestAssemblyScriptBench is the AssemblyScript row of make bench-wasm,
// measured as the Python row is (row): testdata/weather_as.ts, the Go tool's
// twin against sdk/assemblyscript, compiled as the SDK's test guest is (its
// own asc, -O3, the incremental runtime). It needs npm (the SDK's
// node_modules: plugins/examples/install-deps.sh).
func TestAssemblyScriptBench(t *testing.T) {
	enabled(t)
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	sdk := filepath.Join(root, "sdk", "assemblyscript")
	if _, err := os.Stat(filepath.Join(sdk, "node_modules", ".bin", "asc")); err != nil {
		t.Fatalf("sdk/assemblyscript has no asc (plugins/examples/install-deps.sh as installs it): %v", err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "weather_as.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// A folder shaped like the SDK's (tests/ beside assembly/), so the
	// guest's relative imports resolve as the SDK's test guest's do.
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(sdk, "assembly"), filepath.Join(dir, "assembly")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "weather.ts"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "weather.wasm")
	cmd := exec.Command(filepath.Join(sdk, "node_modules", ".bin", "asc"), "tests/weather.ts", "--outFile", out, "-O3",
		"--runtime", "incremental", "--use", "abort=assembly/index/abort")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc: %v\n%s", err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("assemblyscript: %d bytes", len(wasm))
	row(t, "assemblyscript", wasm)
}
