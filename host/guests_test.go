package host_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/internal/wasmbuild"
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
var grantAll = sandbox.Grants{State: true, Actions: true, Artifacts: true, Config: map[string]string{"greeting": "hello"}, Memory: true}

// load loads the test module for an owner of the test's own, so each test
// has its own pool. cfg.Owner defaults to the test's name; cfg.Grants
// without Config to grantAll (the module asks for all five).
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
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return nil, err
	}
	return wasmbuild.Build(wasmbuild.Spec{
		Dir: root, Package: "./host/testdata/" + name,
		Sources: []string{"host/testdata/" + name, "abi"}, Cache: "adkhost-host-guests",
	})
}
