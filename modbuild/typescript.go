package modbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// TSRuntimeEnv overrides where TypeScript finds its runtime.
const TSRuntimeEnv = "ADKHOST_TS_RUNTIME"

// tsExts are the sources the TypeScript builder takes: TypeScript and
// JavaScript modules.
var tsExts = []string{".ts", ".mts", ".js", ".mjs"}

// TypeScript builds a module from TypeScript or JavaScript source: esbuild
// bundles it with the adkhost SDK (sdk/typescript) into one script; the
// runtime (QuickJS-ng with the ABI v1 layer, sdk/typescript/runtime)
// evaluates the script once, at build time, under wizer, which writes the
// initialised interpreter into a new module; nothing is read from a
// filesystem at run time.
type TypeScript struct{}

func (TypeScript) Language() string { return "typescript" }

func (TypeScript) Accepts(source string) bool {
	st, err := os.Stat(source)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return slices.Contains(tsExts, filepath.Ext(source)) && !strings.HasSuffix(source, ".d.ts")
	}
	return len(tsSources(source)) > 0
}

// tsSources are the TypeScript and JavaScript files directly in dir,
// declaration files left out.
func tsSources(dir string) []string {
	var out []string
	for _, ext := range tsExts {
		m, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
		for _, f := range m {
			if !strings.HasSuffix(f, ".d.ts") {
				out = append(out, f)
			}
		}
	}
	return out
}

// tsEntry is the file esbuild starts from: the file itself, or in a folder
// --main, else index.ts (or .js), else its only source file.
func tsEntry(source, main string) (string, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return abs, nil
	}
	if main != "" {
		p := filepath.Join(abs, main)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("--main %s: no such file in %s", main, source)
		}
		return p, nil
	}
	for _, ext := range tsExts {
		if p := filepath.Join(abs, "index"+ext); isFile(p) {
			return p, nil
		}
	}
	srcs := tsSources(abs)
	if len(srcs) == 1 {
		return srcs[0], nil
	}
	return "", fmt.Errorf("%s holds %d TypeScript/JavaScript files and no index.ts: say which file declares the tools with --main FILE", source, len(srcs))
}

func (TypeScript) Build(ctx context.Context, opt Options) error {
	rt, err := FindTSRuntime(opt.RuntimeDir)
	if err != nil {
		return err
	}
	entry, err := tsEntry(opt.Source, opt.Main)
	if err != nil {
		return err
	}
	name := opt.Name
	if name == "" {
		base := filepath.Base(filepath.Clean(opt.Source))
		name = moduleName(strings.TrimSuffix(base, filepath.Ext(base)))
	}
	work, err := os.MkdirTemp("", "adkhost-ts-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	out, err := filepath.Abs(opt.Output)
	if err != nil {
		return err
	}
	var tail tailBuffer
	w := io.MultiWriter(opt.Stderr, &tail)

	// The bundle: one script, the SDK inside, no imports left. The
	// module's exports are kept as __adkhostExports, where the SDK finds
	// exported plugins. Node's built-in modules do not resolve (platform
	// neutral): the sandbox has none of them.
	args := []string{entry, "--bundle", "--format=iife", "--global-name=__adkhostExports",
		"--platform=neutral", "--main-fields=module,main", "--target=es2023", "--charset=utf8",
		"--log-level=warning", "--alias:adkhost=" + filepath.Join(rt.SDK, "index.ts"),
		// adk-js's own package name answers with the SDK too, so that an
		// adk-js tool file's imports (FunctionTool, ToolContext, ...)
		// resolve unchanged; a name the SDK lacks (LlmAgent) fails the
		// bundle with esbuild's "No matching export".
		"--alias:@google/adk=" + filepath.Join(rt.SDK, "index.ts"),
		"--outfile=" + filepath.Join(work, "bundle.js")}
	var nodePath []string
	for _, p := range opt.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("--path %s: not a directory", p)
		}
		nodePath = append(nodePath, abs)
	}
	cmd := exec.CommandContext(ctx, rt.Esbuild, args...)
	// esbuild resolves bare imports in NODE_PATH's directories too (e.g.
	// a node_modules elsewhere).
	cmd.Env = []string{"NODE_PATH=" + strings.Join(nodePath, string(os.PathListSeparator))}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(tail.String())
		if strings.Contains(msg, "Could not resolve") {
			msg += "\n(modules are bundled from source: Node's built-in modules (fs, http, ...) do not exist in the sandbox; install npm dependencies beside the source or pass --path)"
		}
		return fmt.Errorf("building %s: bundling with esbuild failed (%v):\n%s", opt.Source, err, msg)
	}

	tmp := out + ".tmp"
	cmd = exec.CommandContext(ctx, rt.Wizer, "--allow-wasi", "--inherit-env", "--inherit-stdio",
		"--init-func", "adkhost_js_init", "-o", tmp, "--mapdir", "/build::"+work, rt.Wasm)
	// Only what the runtime reads: the build does not depend on the
	// caller's environment.
	cmd.Env = []string{
		"ADKHOST_JS_BUNDLE=/build/bundle.js",
		"ADKHOST_JS_NAME=" + name,
		"ADKHOST_JS_CAPABILITIES=" + strings.Join(opt.Capabilities, ","),
	}
	tail = tailBuffer{}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		msg := tail.String()
		// wizer's own report of the trap (a wasm backtrace) says nothing
		// the JavaScript error above it does not.
		if i := strings.Index(msg, "Error: the `adkhost_js_init` function trapped"); i >= 0 {
			msg = msg[:i]
		}
		msg = strings.TrimSpace(msg)
		if msg != "" {
			msg = ":\n" + msg
		}
		return fmt.Errorf("building %s: evaluating it in the JavaScript runtime failed (%v)%s", opt.Source, err, msg)
	}
	return os.Rename(tmp, out)
}

// TSRuntime is a built TypeScript runtime (make ts-runtime).
type TSRuntime struct {
	Dir     string
	Wasm    string // runtime.wasm
	SDK     string // the adkhost TypeScript package's sources
	Esbuild string // the bundler
	Wizer   string // the snapshot tool
}

// FindTSRuntime looks for the runtime in dir if given, else in
// $ADKHOST_TS_RUNTIME, build/ts-runtime beside the executable's directory
// (bin/adkhost in a checkout) or in the checkout holding the current
// directory (go run, tests), then the user's cache directory.
func FindTSRuntime(dir string) (*TSRuntime, error) {
	return findRuntime(tsKind, dir, checkTSRuntime)
}

func checkTSRuntime(dir string) (*TSRuntime, error) {
	tools := filepath.Join(dir, "tools", "node_modules")
	rt := &TSRuntime{
		Dir:     dir,
		Wasm:    filepath.Join(dir, "runtime.wasm"),
		SDK:     filepath.Join(dir, "sdk"),
		Esbuild: filepath.Join(tools, "@esbuild", wizerPlatform(), "bin", "esbuild"),
		Wizer:   filepath.Join(tools, "@bytecodealliance", "wizer-"+wizerPlatform(), "wizer"),
	}
	if missing := missingFiles([][2]string{
		{rt.Wasm, "the runtime module"},
		{filepath.Join(rt.SDK, "index.ts"), "the adkhost TypeScript package"},
		{rt.Esbuild, "esbuild"},
		{rt.Wizer, "wizer"},
	}); len(missing) > 0 {
		return nil, tsKind.incomplete(dir, missing)
	}
	return rt, nil
}

func isFile(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
