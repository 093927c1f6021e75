package wasmbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// WAT compiles WebAssembly text with wat2wasm (Debian package wabt, which
// CI's .ci/run installs), skipping the test where it is not installed
// (failing it under CI=true).
func WAT(tb testing.TB, src string) []byte {
	tb.Helper()
	return WATWith(tb, src)
}

// WATWith is WAT with extra wat2wasm flags, such as --no-check for the
// invalid modules hostile tests need.
func WATWith(tb testing.TB, src string, flags ...string) []byte {
	tb.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		const msg = "wat2wasm not installed: apt-get install wabt (CI's .ci/run installs it)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	dir := tb.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	if b, err := exec.Command(tool, append(append([]string{}, flags...), in, "-o", out)...).CombinedOutput(); err != nil {
		tb.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
