package appdef_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/adkhost/adkhost/host/appdef"
)

// loadErr loads files and returns the error, the time it took and the
// bytes it allocated.
func loadErr(t *testing.T, fs map[string][]byte) (error, time.Duration, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	app, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, noModules())
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if app != nil {
		app.Close(context.Background())
	}
	return err, took, after.TotalAlloc - before.TotalAlloc
}

// TestHostileDefinitions: definitions built to make the loader spend
// memory or time are refused cheaply, with a located error.
func TestHostileDefinitions(t *testing.T) {
	fanOut := map[string][]byte{}
	const depth = 25
	for i := range depth {
		name := fmt.Sprintf("f%d.yaml", i)
		if i == 0 {
			name = "root_agent.yaml"
		}
		body := fmt.Sprintf("agent_class: SequentialAgent\nname: a%d\n", i)
		if i < depth-1 {
			body += fmt.Sprintf("sub_agents:\n  - config_path: f%d.yaml\n  - config_path: f%d.yaml\n", i+1, i+1)
		}
		fanOut[name] = []byte(body)
	}
	aliasChain := "name: a\nmodel: m\ninstruction: x\ngenerate_content_config:\n  labels:\n    a0: &a0 [x, x]\n"
	for i := 1; i < 40; i++ {
		aliasChain += fmt.Sprintf("    a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	manyAliases := "name: a\nmodel: m\ninstruction: &i x\ndescription: [" + strings.Repeat("*i, ", 150) + "*i]\n"
	for _, tc := range []struct {
		name string
		fs   map[string][]byte
		want string
	}{
		{"flow nesting of 25,000 levels", map[string][]byte{"root_agent.yaml": []byte("x: " + strings.Repeat("[", 25000) + strings.Repeat("]", 25000) + "\n")},
			"root_agent.yaml:1:1: YAML nests too deep"},
		{"block sequences nested on one line", map[string][]byte{"root_agent.yaml": []byte("x:\n  " + strings.Repeat("- ", 100000) + "y\n")},
			"root_agent.yaml:2:1: YAML nests too deep"},
		{"mappings in flow, 100,000 levels", map[string][]byte{"root_agent.yaml": []byte("x: " + strings.Repeat("{a: ", 100000) + "1" + strings.Repeat("}", 100000) + "\n")},
			"YAML nests too deep"},
		{"config_path fan-out of depth 25", fanOut,
			"f2.yaml is already the config of another agent"},
		{"aliases of aliases", map[string][]byte{"root_agent.yaml": []byte(aliasChain)},
			"aliases may not nest"},
		{"too many aliases", map[string][]byte{"root_agent.yaml": []byte(manyAliases)},
			"too many YAML aliases (151; at most 100)"},
		// Not hostile, but misread: goccy/go-yaml gives key "user" here,
		// YAML 1.2 and google-adk's PyYAML the key "user:plan".
		{"prefixed key in a flow mapping", map[string][]byte{"root_agent.yaml": []byte("name: a\nmodel: m\ninstruction: x\ngenerate_content_config: {labels: {user:plan: basic}}\n")},
			`root_agent.yaml:4:36: a flow mapping key holds ':' followed by a non-space; quote the key (e.g. {"user:plan": basic})`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, took, alloc := loadErr(t, tc.fs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			var de *appdef.Error
			if !errors.As(err, &de) || de.File == "" {
				t.Errorf("error %v is not located", err)
			}
			if len(err.Error()) > 64<<10 {
				t.Errorf("the error is %d bytes", len(err.Error()))
			}
			// Generous bounds: the attacks cost seconds and gigabytes.
			if alloc > 64<<20 {
				t.Errorf("the load allocated %d MiB", alloc>>20)
			}
			t.Logf("refused in %s, %d KiB allocated", took, alloc>>10)
		})
	}
}

// TestModelWithoutBackend: a definition whose model this server has no
// backend for loads with a located warning (google-adk loads such a config
// and fails at the model call), its model calls fail with ValueError; with
// StrictModels it is refused as before.
func TestModelWithoutBackend(t *testing.T) {
	fs := map[string][]byte{"root_agent.yaml": []byte("name: a\nmodel: gemini-2.5-flash\ninstruction: x\n")}
	env := appdef.Env{Models: &appdef.ModelRegistry{Scripted: true}}
	app, err := appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer app.Close(context.Background())
	if len(app.Warnings) != 1 || !strings.Contains(app.Warnings[0], `root_agent.yaml:2:8: model: model "gemini-2.5-flash" has no backend on this server; the app loads, and its model calls fail`) {
		t.Errorf("warnings = %q", app.Warnings)
	}
	env.StrictModels = true
	_, err = appdef.Load(context.Background(), appdef.Source{Name: "app", Files: fs}, env)
	if !errors.Is(err, appdef.ErrNoBackend) {
		t.Errorf("strict: err = %v, want ErrNoBackend", err)
	}
}
