// Package python_test checks the Python SDK (sdk/python) built into
// modules: the declarations its tools describe equal what google-adk 2.13
// builds for the same functions.
package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/modbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// missing skips for a missing prerequisite, or fails under CI=true (where
// .ci/run builds the runtime and the venv).
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format+" (skipping; CI=true makes this a failure)", args...)
}

// venvPython is the python of conformance/.venv (google-adk 2.13 from
// conformance/python/requirements.txt: `make python-venv`), or
// $ADKCONF_VENV's.
func venvPython(t *testing.T) string {
	venv := os.Getenv("ADKCONF_VENV")
	if venv == "" {
		venv = filepath.Join("..", "..", "conformance", ".venv")
	}
	py := filepath.Join(venv, "bin", "python")
	if err := exec.Command(py, "-c", "import google.adk").Run(); err != nil {
		missing(t, "no google-adk in %s (make python-venv installs it): %v", venv, err)
	}
	return py
}

// TestDeclarationsMatchGoogleADK builds tests/signatures.py (a table of
// signatures: scalars, Optional and unions, lists, sets, tuples, dicts,
// Literal, enums, defaults, untyped and async functions, context
// parameters) into a module, and compares each tool its describe message
// declares with the FunctionDeclaration google-adk's FunctionTool builds
// for the same function: name, description and parametersJsonSchema.
func TestDeclarationsMatchGoogleADK(t *testing.T) {
	py := venvPython(t)
	if _, err := modbuild.FindPythonRuntime(""); err != nil {
		missing(t, "%v", err)
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "signatures.wasm")
	var log bytes.Buffer
	if err := modbuild.Build(ctx, modbuild.Options{Source: "tests/signatures.py", Output: out, Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sandbox.New(ctx, sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := rt.Load(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(py, "tests/adk_declarations.py", "tests/signatures.py")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	adkOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("google-adk's declarations: %v\n%s", err, stderr.String())
	}
	var want []map[string]any
	if err := json.Unmarshal(adkOut, &want); err != nil {
		t.Fatal(err)
	}
	tools := m.Describe().Tools
	if len(tools) != len(want) || len(tools) < 9 {
		t.Fatalf("%d tools described, google-adk declares %d", len(tools), len(want))
	}
	for i, tool := range tools {
		got := map[string]any{"name": tool.Name}
		if tool.Description != "" {
			got["description"] = tool.Description
		}
		if len(tool.Parameters) > 0 {
			var p any
			if err := json.Unmarshal(tool.Parameters, &p); err != nil {
				t.Fatal(err)
			}
			got["parametersJsonSchema"] = p
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want[i])
		if !bytes.Equal(g, w) {
			t.Errorf("tool %s:\n adkhost    %s\n google-adk %s", tool.Name, g, w)
		}
	}
}

// TestJSONCodec: the SDK's own dumps and loads (one encoder and the C
// scanner, for speed in the sandbox) give what the json module gives.
func TestJSONCodec(t *testing.T) {
	cmd := exec.Command("python3", "tests/json_codec.py")
	cmd.Env = append(os.Environ(), "PYTHONPATH=.")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v\n%s", err, out)
	}
}
