package benchwasm

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// TestCBench is the C row of make bench-wasm, measured as the Python row is
// (row): testdata/weather.c, the Go tool's twin against sdk/c, built as the
// C example is (clang for wasm32-wasi with wasi-libc, -O2;
// plugins/examples/install-deps.sh installs them).
func TestCBench(t *testing.T) {
	enabled(t)
	row(t, "c", buildCWeather(t))
}

// TestCWeather: testdata/weather.c answers as its Go twin (getWeather):
// the city trimmed and with its escapes decoded (the model's text can hold
// any character), days 1 to 3, the city in user:last_city.
func TestCWeather(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no clang")
		}
		t.Skip("no clang (plugins/examples/install-deps.sh installs it); CI=true makes this a failure")
	}
	ctx := context.Background()
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: benchCacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	m, err := rt.Load(ctx, buildCWeather(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "c", Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args map[string]any
		city string
		days int
		err  string
	}{
		{args: map[string]any{"city": "Paris", "days": int64(3)}, city: "Paris", days: 3},
		{args: map[string]any{"city": "  São Paulo\t"}, city: "São Paulo", days: 1},
		{args: map[string]any{"city": `"Quoted" \ back/slash`, "days": 2.0}, city: `"Quoted" \ back/slash`, days: 2},
		{args: map[string]any{"city": "Zürich 😀 <&> \u2028", "days": nil}, city: "Zürich 😀 <&> \u2028", days: 1},
		{args: map[string]any{"city": "a\x00b\nc", "days": int64(0)}, city: "a\x00b\nc", days: 1},
		{args: map[string]any{}, city: "", days: 1},
		{args: map[string]any{"city": "Oslo", "days": int64(4)}, err: "at most 3 days, not 4"},
		{args: map[string]any{"city": 5}, err: "get_weather: city must be a string"},
		{args: map[string]any{"city": "Oslo", "days": 1.5}, err: "get_weather: days must be an integer"},
	} {
		h := &stateHost{state: map[string]json.RawMessage{}}
		in := input()
		in.Args = c.args
		out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, h)
		if err != nil {
			t.Fatalf("args %v: %v", c.args, err)
		}
		if c.err != "" {
			if out.Error != c.err {
				t.Errorf("args %v: error %q, want %q", c.args, out.Error, c.err)
			}
			continue
		}
		want := map[string]any{"city": c.city, "days": []any{}}
		for i := range c.days {
			want["days"] = append(want["days"].([]any), map[string]any{"summary": "sunny", "highC": 21 + float64(i)})
		}
		// As JSON: the host decodes whole numbers as integers.
		got, _ := json.Marshal(out.Result)
		if w, _ := json.Marshal(want); out.Error != "" || string(got) != string(w) {
			t.Errorf("args %v: result %s (error %q), want %s", c.args, got, out.Error, w)
		}
		var last string
		if err := json.Unmarshal(h.state["user:last_city"], &last); err != nil || last != c.city {
			t.Errorf("args %v: user:last_city %s, want %q", c.args, h.state["user:last_city"], c.city)
		}
	}
}

// BenchmarkTurnC is BenchmarkTurn with the C guest: the host's share of a
// call, with a guest that costs almost nothing.
func BenchmarkTurnC(b *testing.B) {
	rt, _ := benchRuntime(b)
	benchTurns(b, rt, buildCWeather(b))
}

// buildCWeather builds testdata/weather.c.
func buildCWeather(t testing.TB) []byte {
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "weather.wasm")
	args := []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Wextra", "-Werror"}
	for _, sysroot := range []string{"/usr/share/wasi-sysroot", "/opt/wasi-sdk/share/wasi-sysroot"} {
		if _, err := os.Stat(sysroot); err == nil {
			args = append(args, "--sysroot="+sysroot)
			break
		}
	}
	sdk := filepath.Join(root, "sdk", "c")
	args = append(args, "-I"+sdk, "-o", out, filepath.Join("testdata", "weather.c"), filepath.Join(sdk, "adkhost.c"))
	if msg, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %v: %v\n%s", args, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("c: %d bytes", len(wasm))
	return wasm
}
