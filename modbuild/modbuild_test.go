package modbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingRuntimeSaysWhere(t *testing.T) {
	dir := t.TempDir()
	_, err := FindPythonRuntime(filepath.Join(dir, "nope"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nope")+" (--python-runtime): not there") ||
		!strings.Contains(err.Error(), "make python-runtime") {
		t.Errorf("missing runtime: %v", err)
	}
	// A directory that exists but lacks parts: each part is named.
	if err := os.MkdirAll(filepath.Join(dir, "rt", "sdk", "adkhost"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "rt", "sdk", "adkhost", "__init__.py"), nil, 0o644)
	t.Setenv(PythonRuntimeEnv, filepath.Join(dir, "rt"))
	_, err = FindPythonRuntime("")
	for _, want := range []string{"runtime.wasm (the runtime module)", "os.py (CPython's standard library)", "(wizer)", "incomplete"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("incomplete runtime: %v lacks %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "the adkhost package") {
		t.Errorf("the present part is reported missing: %v", err)
	}
}

func TestBuildPicksBuilder(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "x.unknown")
	os.WriteFile(js, []byte("x"), 0o644)
	if err := Build(context.Background(), Options{Source: js}); err == nil || !strings.Contains(err.Error(), "not a source this command builds (python") {
		t.Errorf("unknown source: %v", err)
	}
	if !(Python{}).Accepts(filepath.Join("a", "b.py")) == fileExists(filepath.Join("a", "b.py")) {
		t.Error("Accepts of a missing file")
	}
	if got := DefaultOutput(filepath.Join("x", "weather.py")); got != filepath.Join("x", "weather.wasm") {
		t.Errorf("DefaultOutput = %s", got)
	}
	if got := DefaultOutput(dir); got != filepath.Base(dir)+".wasm" {
		t.Errorf("DefaultOutput(folder) = %s", got)
	}
	for in, want := range map[string]string{"weather": "weather", "9lives": "_lives", "my tool": "my_tool", "a.b-c": "a.b-c"} {
		if got := moduleName(in); got != want {
			t.Errorf("moduleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPythonMain(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.py"), nil, 0o644)
	if d, m, err := pythonMain(dir, ""); err != nil || d != dir || m != "a" {
		t.Errorf("one file: %s %s %v", d, m, err)
	}
	os.WriteFile(filepath.Join(dir, "b.py"), nil, 0o644)
	if _, _, err := pythonMain(dir, ""); err == nil || !strings.Contains(err.Error(), "--main") {
		t.Errorf("two files: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "__init__.py"), nil, 0o644)
	if d, m, err := pythonMain(dir, ""); err != nil || d != filepath.Dir(dir) || m != filepath.Base(dir) {
		t.Errorf("package: %s %s %v", d, m, err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestMissingTSRuntimeSaysWhere(t *testing.T) {
	dir := t.TempDir()
	_, err := FindTSRuntime(filepath.Join(dir, "nope"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nope")+" (--ts-runtime): not there") ||
		!strings.Contains(err.Error(), "make ts-runtime") {
		t.Errorf("missing runtime: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "rt", "sdk"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "rt", "sdk", "index.ts"), nil, 0o644)
	t.Setenv(TSRuntimeEnv, filepath.Join(dir, "rt"))
	_, err = FindTSRuntime("")
	for _, want := range []string{"runtime.wasm (the runtime module)", "(esbuild)", "(wizer)", "incomplete", "make ts-runtime"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("incomplete runtime: %v lacks %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "TypeScript package") {
		t.Errorf("the present part is reported missing: %v", err)
	}
}

func TestTSEntry(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "types.d.ts"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "a.ts"), nil, 0o644)
	if !(TypeScript{}).Accepts(dir) || (TypeScript{}).Accepts(filepath.Join(dir, "types.d.ts")) || (Python{}).Accepts(dir) {
		t.Error("Accepts: a folder of .ts is TypeScript's, a .d.ts is not a source")
	}
	if e, err := tsEntry(dir, ""); err != nil || e != filepath.Join(dir, "a.ts") {
		t.Errorf("one file: %s %v", e, err)
	}
	os.WriteFile(filepath.Join(dir, "b.js"), nil, 0o644)
	if _, err := tsEntry(dir, ""); err == nil || !strings.Contains(err.Error(), "--main") {
		t.Errorf("two files: %v", err)
	}
	if e, err := tsEntry(dir, "b.js"); err != nil || e != filepath.Join(dir, "b.js") {
		t.Errorf("--main: %s %v", e, err)
	}
	if _, err := tsEntry(dir, "c.ts"); err == nil || !strings.Contains(err.Error(), "--main c.ts") {
		t.Errorf("--main of a missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "index.ts"), nil, 0o644)
	if e, err := tsEntry(dir, ""); err != nil || e != filepath.Join(dir, "index.ts") {
		t.Errorf("index.ts: %s %v", e, err)
	}
	os.WriteFile(filepath.Join(dir, "tool.py"), nil, 0o644)
	if err := Build(context.Background(), Options{Source: dir}); err == nil || !strings.Contains(err.Error(), "sources of python and typescript") {
		t.Errorf("a folder of both languages: %v", err)
	}
	if got := DefaultOutput(filepath.Join("x", "weather.ts")); got != filepath.Join("x", "weather.wasm") {
		t.Errorf("DefaultOutput = %s", got)
	}
}
