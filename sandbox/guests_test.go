package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/internal/wasmbuild"
)

// Guest modules are built from source at test time; no .wasm is committed.
// WAT guests need wat2wasm (Debian package wabt; .ci/run installs it). Go
// guests are built once per source hash and kept under os.TempDir, so only
// the first run on a machine pays for the build.

// wat compiles WebAssembly text.
var wat = wasmbuild.WAT

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
