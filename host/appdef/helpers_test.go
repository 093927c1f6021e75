package appdef_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// The test module, testdata/guest ("weather"), is built once per source
// hash under os.TempDir and compiled once per run into a shared Runtime
// whose machine code is cached across runs, as the host tests do.

var shared struct {
	once sync.Once
	rt   *sandbox.Runtime
	wasm []byte
	err  error
}

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
		root, err := wasmbuild.ModuleRoot()
		if err != nil {
			shared.err = err
			return
		}
		shared.wasm, shared.err = wasmbuild.Build(wasmbuild.Spec{
			Dir: root, Package: "./host/appdef/testdata/guest",
			Sources: []string{"host/appdef/testdata/guest", "sdk/go/adkhost", "abi"},
			Cache:   "adkhost-appdef-guests",
		})
		if shared.err != nil {
			return
		}
		shared.rt, shared.err = sandbox.New(context.Background(), sandbox.Config{
			CacheDir: filepath.Join(os.TempDir(), "adkhost-appdef-test-cache"),
		})
	})
	if shared.err != nil {
		t.Fatalf("test guest: %v", shared.err)
	}
	return shared.rt, shared.wasm
}

// fakeModules resolves "weather", "weather@<digest>" and "<digest>" to
// the test module, counting resolutions.
type fakeModules struct {
	wasm []byte
	mu   sync.Mutex
	n    int
}

func (f *fakeModules) digest() string {
	sum := sha256.Sum256(f.wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (f *fakeModules) ResolveModule(_ context.Context, ref string) ([]byte, string, error) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	d := f.digest()
	if ref == "weather" || ref == "weather@"+d || ref == d {
		return f.wasm, d, nil
	}
	return nil, "", fmt.Errorf("no module %q in the registry", ref)
}

// env returns an Env with the test module and the default model registry
// (scripted only, and Gemini with a dummy key that is never used).
func env(t testing.TB) (appdef.Env, *fakeModules) {
	rt, wasm := guest(t)
	mods := &fakeModules{wasm: wasm}
	return appdef.Env{Runtime: rt, Modules: mods, Models: &appdef.ModelRegistry{Scripted: true}}, mods
}

// noModules is an Env without modules, for definitions that use none.
func noModules() appdef.Env {
	return appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}}
}

// stubModels serves every name with a scripted model that never gets
// called, recording the names asked for.
type stubModels struct {
	mu    sync.Mutex
	names []string
}

func (s *stubModels) ResolveModel(_ context.Context, name string, _ map[string][]byte) (model.Model, error) {
	if strings.HasPrefix(name, "bad-") {
		return nil, errors.New("no backend for " + name)
	}
	s.mu.Lock()
	s.names = append(s.names, name)
	s.mu.Unlock()
	return scripted.New(name), nil
}

// files builds a Source.Files from path/content pairs.
func files(kv ...string) map[string][]byte {
	out := map[string][]byte{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = []byte(strings.TrimLeft(kv[i+1], "\n"))
	}
	return out
}

// load loads a definition, failing the test on error, and closes it at the
// end of the test.
func load(t *testing.T, name string, fs map[string][]byte, e appdef.Env) *appdef.App {
	t.Helper()
	app, err := appdef.Load(context.Background(), appdef.Source{Name: name, Files: fs}, e)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() {
		if err := app.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return app
}
