package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// Guest modules are built from source at test time; no .wasm is committed.
// WAT guests need wat2wasm (Debian package wabt; .ci/run installs it). Go
// guests are built once per source hash and kept under os.TempDir, so only
// the first run on a machine pays for the build.

// wat compiles WebAssembly text.
func wat(t testing.TB, src string) []byte {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Skip("wat2wasm not installed: apt-get install wabt (CI's .ci/run installs it)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(tool, in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// watFile compiles testdata/wat/name.
func watFile(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "wat", name))
	if err != nil {
		t.Fatal(err)
	}
	return wat(t, string(src))
}

// goGuest builds the Go guest in testdata/name with GOOS=wasip1
// GOARCH=wasm -buildmode=c-shared. goguest is built inside this module (it
// imports package abi); extismguest is a module of its own (it needs the
// Extism Go PDK).
func goGuest(t testing.TB, name string) []byte {
	t.Helper()
	wasm, err := buildGoGuest(name)
	if err != nil {
		t.Fatalf("building guest %s: %v", name, err)
	}
	return wasm
}

func buildGoGuest(name string) ([]byte, error) {
	if dir, err := filepath.Abs(filepath.Join("testdata", name)); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			// A guest that is a module of its own (extismguest).
			return wasmbuild.Build(wasmbuild.Spec{Dir: dir, Package: ".", Sources: []string{"."}, Cache: "adkhost-sandbox-guests"})
		}
	}
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return nil, err
	}
	return wasmbuild.Build(wasmbuild.Spec{
		Dir: root, Package: "./sandbox/testdata/" + name,
		Sources: []string{"sandbox/testdata/" + name, "abi"}, Cache: "adkhost-sandbox-guests",
	})
}
