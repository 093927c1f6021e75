package sandbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
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

type built struct {
	once sync.Once
	wasm []byte
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*built{}
)

// goGuest builds the Go guest in testdata/name with GOOS=wasip1
// GOARCH=wasm -buildmode=c-shared. goguest is built inside this module (it
// imports package abi); extismguest is a module of its own (it needs the
// Extism Go PDK).
func goGuest(t testing.TB, name string) []byte {
	t.Helper()
	buildsMu.Lock()
	b, ok := builds[name]
	if !ok {
		b = &built{}
		builds[name] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() { b.wasm, b.err = buildGoGuest(name) })
	if b.err != nil {
		t.Fatalf("building guest %s: %v", name, b.err)
	}
	return b.wasm
}

func buildGoGuest(name string) ([]byte, error) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	src := filepath.Join("testdata", name)
	ownModule := false
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
		ownModule = true
	}
	// The key covers the guest's files, the abi package it may import, and
	// the toolchain.
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	dirs := []string{src}
	if !ownModule {
		dirs = append(dirs, filepath.Join("..", "abi"))
	}
	for _, d := range dirs {
		var files []string
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "go.mod") || strings.HasSuffix(p, "go.sum")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			h.Write([]byte(filepath.ToSlash(f)))
			h.Write(data)
		}
	}
	cacheDir := filepath.Join(os.TempDir(), "adkhost-sandbox-guests")
	out := filepath.Join(cacheDir, name+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(cacheDir, name+"-*.tmp")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name(), ".")
	cmd.Dir = src
	if !ownModule {
		cmd.Args[len(cmd.Args)-1] = "./" + filepath.ToSlash(src)
		cmd.Dir = ""
	}
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New(err.Error() + "\n" + string(msg))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}
