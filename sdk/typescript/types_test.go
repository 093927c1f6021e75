package typescript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/modbuild"
)

// TestTypes: the SDK, the test modules and plugins/examples/weather-ts
// type-check under strict TypeScript (tsconfig.json), with the tsc that
// make ts-runtime installs: esbuild, which builds modules, does not check
// types.
func TestTypes(t *testing.T) {
	rt, err := modbuild.FindTSRuntime("")
	if err != nil {
		missing(t, "%v", err)
	}
	tsc := filepath.Join(rt.Dir, "tools", "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		missing(t, "no tsc in the TypeScript runtime (rebuild it with make ts-runtime): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed: %v", err)
	}
	if out, err := exec.Command(node, tsc, "-p", ".").CombinedOutput(); err != nil {
		t.Errorf("tsc -p sdk/typescript: %v\n%s", err, out)
	}
}
