package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// The test module, testdata/guest, is built from source at test time, as
// the sandbox tests build theirs: once per source hash (guest and package
// abi) and toolchain, kept under os.TempDir, so only the first run on a
// machine pays for the build. Its machine code is cached in cacheDir:
// compiling a 3.7 MB Go guest takes about twenty seconds under -race, and
// loading it from the cache a few tens of milliseconds. All tests share one
// Runtime, so the module is compiled at most once per run.

var cacheDir = filepath.Join(os.TempDir(), "adkhost-host-test-cache")

var (
	shared struct {
		once sync.Once
		rt   *sandbox.Runtime
		wasm []byte
		err  error
	}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.rt != nil {
		shared.rt.Close(context.Background())
	}
	os.Exit(code)
}

// guest returns the shared runtime and the test module's bytes.
func guest(t testing.TB) (*sandbox.Runtime, []byte) {
	t.Helper()
	shared.once.Do(func() {
		shared.wasm, shared.err = buildGuest("guest")
		if shared.err != nil {
			return
		}
		shared.rt, shared.err = sandbox.New(context.Background(), sandbox.Config{CacheDir: cacheDir})
	})
	if shared.err != nil {
		t.Fatalf("test guest: %v", shared.err)
	}
	return shared.rt, shared.wasm
}

// grantAll grants what testdata/guest asks for.
var grantAll = sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{"greeting": "hello"}}

// load loads the test module for an owner of the test's own, so each test
// has its own pool. cfg.Owner defaults to the test's name; cfg.Grants
// without Config to grantAll (the module asks for all four).
func load(t testing.TB, cfg host.ModuleConfig) *host.Module {
	t.Helper()
	rt, wasm := guest(t)
	if cfg.Owner == "" {
		cfg.Owner = t.Name()
	}
	if cfg.Grants.Config == nil {
		cfg.Grants = grantAll
	}
	m, err := host.Load(context.Background(), rt, wasm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// buildGuest builds the Go guest in testdata/name with GOOS=wasip1
// GOARCH=wasm -buildmode=c-shared.
func buildGuest(name string) ([]byte, error) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	src := filepath.Join("testdata", name)
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	for _, d := range []string{src, filepath.Join("..", "abi")} {
		var files []string
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && strings.HasSuffix(p, ".go") {
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
			fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(f), len(data))
			h.Write(data)
		}
	}
	dir := filepath.Join(os.TempDir(), "adkhost-host-guests")
	out := filepath.Join(dir, name+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, name+"-*.tmp")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name(), "./"+filepath.ToSlash(src))
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New(err.Error() + "\n" + string(msg))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}
