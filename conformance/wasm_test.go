package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/modbuild"
)

// TestScenariosWasm runs every scenario with its tools, callbacks and
// plugins in the conformance Wasm guest and compares the trace with the
// same golden as TestConformance, under the same KNOWN_DIFFS.md rules.
func TestScenariosWasm(t *testing.T) { scenariosWasm(t, "go") }

// TestScenariosWasmPython: the same with the generic guest in Python
// (pyguest/guest.py), which needs the Python runtime (make python-runtime;
// a failure under CI=true, where .ci/run builds it).
func TestScenariosWasmPython(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Wasm guest")
	}
	if _, err := modbuild.FindPythonRuntime(""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v (skipping; CI=true makes this a failure)", err)
	}
	scenariosWasm(t, "python")
}

func scenariosWasm(t *testing.T, guest string) {
	if testing.Short() {
		t.Skip("builds and runs a Wasm guest")
	}
	ctx := context.Background()
	w, err := NewWasmGuest(ctx, guest)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(ctx) })
	files, err := ScenarioFiles("scenarios")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	known, err := LoadKnownDiffs("KNOWN_DIFFS.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("group", func(t *testing.T) {
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
			t.Run(name, func(t *testing.T) {
				if reason, ok := WasmGaps[name]; ok {
					t.Skipf("Wasm mode cannot express this scenario yet: %s", reason)
				}
				t.Parallel()
				o := CheckFile(f, "golden", CompareOptions{Wasm: w})
				section, listed := known[name]
				switch {
				case o.Passed() && listed && strings.Contains(section, "Flaky"):
					t.Logf("%s matched its golden in this run; KNOWN_DIFFS.md lists it as flaky", name)
				case o.Passed() && listed:
					t.Logf("WARNING: %s now matches its golden in Wasm mode but is listed in KNOWN_DIFFS.md", name)
				case o.Passed():
				case listed:
					// The engine difference must be the same in both modes.
					native := CheckFile(f, "golden", CompareOptions{})
					if native.Err != nil || o.Err != nil {
						t.Fatalf("native: %v; Wasm: %v", native.Err, o.Err)
					}
					if d := Compare(native.Trace, o.Trace, CompareOptions{}); d != nil {
						t.Errorf("known difference, but Wasm mode's trace differs from native mode's:\n%s", d)
					}
					t.Logf("known difference (KNOWN_DIFFS.md), same in native and Wasm mode:\n%s", o.Report())
				default:
					t.Errorf("Wasm mode differs from google-adk:\n%s", o.Report())
				}
			})
		}
	})
}
