// Package wasmbuild builds Go packages into WebAssembly modules
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared) for tests and tools, caching
// each build under os.TempDir by a hash of its sources so that only the
// first build on a machine pays for it.
package wasmbuild

import (
	"crypto/sha256"
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
)

// Spec says what to build.
type Spec struct {
	// Dir is where `go build` runs: the module root, or the directory of a
	// guest that is a module of its own.
	Dir string
	// Package is the package to build, relative to Dir (e.g. "./x/guest").
	Package string
	// Sources are the directories, relative to Dir, whose .go files (tests
	// and testdata excluded) and go.mod/go.sum key the cache; Dir's own
	// go.mod and go.sum always do.
	Sources []string
	// Cache names the cache directory under os.TempDir.
	Cache string
}

var (
	mu     sync.Mutex
	builds = map[string]*result{}
)

type result struct {
	once sync.Once
	wasm []byte
	err  error
}

// Build returns the module built from s. Concurrent and repeated calls with
// the same Spec share one build per process.
func Build(s Spec) ([]byte, error) {
	k := strings.Join(append([]string{s.Dir, s.Package, s.Cache}, s.Sources...), "\x00")
	mu.Lock()
	r, ok := builds[k]
	if !ok {
		r = &result{}
		builds[k] = r
	}
	mu.Unlock()
	r.once.Do(func() { r.wasm, r.err = build(s) })
	return r.wasm, r.err
}

// ModuleRoot returns the directory of the main module's go.mod, as `go env
// GOMOD` reports it from the current directory.
func ModuleRoot() (string, error) {
	out, err := exec.Command(goBin(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("wasmbuild: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("wasmbuild: not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

func goBin() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func build(s Spec) ([]byte, error) {
	key, err := sourceKey(s)
	if err != nil {
		return nil, fmt.Errorf("wasmbuild %s: %w", s.Package, err)
	}
	name := filepath.Base(filepath.Join(s.Dir, s.Package))
	cacheDir := filepath.Join(os.TempDir(), s.Cache)
	out := filepath.Join(cacheDir, name+"-"+key+".wasm")
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
	cmd := exec.Command(goBin(), "build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name(), s.Package)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wasmbuild %s: %w\n%s", s.Package, err, msg)
	}
	// Rename is atomic, so concurrent test binaries never read half a file.
	if err := os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// sourceKey hashes the toolchain version and the sources of s.
func sourceKey(s Spec) (string, error) {
	files := []string{filepath.Join(s.Dir, "go.mod"), filepath.Join(s.Dir, "go.sum")}
	for _, d := range s.Sources {
		err := filepath.WalkDir(filepath.Join(s.Dir, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && e.Name() == "testdata" && p != filepath.Join(s.Dir, d) {
				return filepath.SkipDir
			}
			base := e.Name()
			if !e.IsDir() && (strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go") || base == "go.mod" || base == "go.sum") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(files)
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		rel, _ := filepath.Rel(s.Dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16], nil
}

// SDKExample is the Spec of the Go SDK's example guest sdk/go/examples/name,
// built from the repository root (the SDK is a module of its own, which
// the root module requires through a replace, so the package is named by
// its import path), cached under cache.
func SDKExample(root, name, cache string) Spec {
	return Spec{
		Dir: root, Package: "github.com/adkhost/adkhost/sdk/go/examples/" + name,
		Sources: []string{"sdk/go/examples/" + name, "sdk/go/adkhost", "abi"}, Cache: cache,
	}
}
