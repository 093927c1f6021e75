//go:build !wasip1

package gosdktest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

// TestGuestOutsideRepository is a new user's first tool: the guest shown in
// sdk/go/README.md, in a fresh module outside the repository that depends on
// the SDK as the README says (go mod edit -replace onto this checkout, with
// GOPROXY=off since the module isn't published), built for wasip1 and run in
// the sandbox. It fails if the README's code or instructions stop working,
// or if the SDK's module starts to need anything beyond abi.
func TestGuestOutsideRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go guest from scratch")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "sdk/go/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(package main\n.*?)```").FindSubmatch(readme)
	if blocks == nil {
		t.Fatal("sdk/go/README.md has no ```go block with package main")
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), blocks[1], 0o644); err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOWORK=off", "GONOSUMDB=*", "CGO_ENABLED=0")
	run := func(extra []string, args ...string) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The README's steps: go mod init, then the replace lines for a local
	// checkout, then tidy.
	run(nil, "mod", "init", "example.com/weather")
	run(nil, "mod", "edit", "-require=github.com/adkhost/adkhost/sdk/go@v0.0.0",
		"-replace=github.com/adkhost/adkhost/sdk/go="+filepath.Join(repo, "sdk/go"),
		"-replace=github.com/adkhost/adkhost/abi="+filepath.Join(repo, "abi"))
	run(nil, "mod", "tidy")
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// Only the SDK and abi: nothing of the host's dependency graph.
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, ".") && !strings.HasPrefix(line, "module ") && !strings.HasPrefix(line, "replace ") &&
			!strings.Contains(line, "github.com/adkhost/adkhost/") && line != "" && !strings.HasPrefix(line, "go ") {
			t.Errorf("the guest's go.mod needs %q; the SDK must need only abi", line)
		}
	}
	wasm := filepath.Join(dir, "weather.wasm")
	run([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-o", wasm, ".")

	bin, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := runtimeFor(t)
	m, err := r.Load(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	host := &adkhosttest.Host{}
	out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: toolInfo(), Tool: "get_weather", Args: map[string]any{"city": "Paris"},
	}, host)
	if err != nil || out.Error != "" {
		t.Fatalf("get_weather: %+v, %v", out, err)
	}
	if got, want := asJSON(t, out.Result), `{"city":"Paris","highC":21}`; got != want {
		t.Errorf("get_weather = %s, want %s", got, want)
	}
	if got := host.Recorded(); len(got) != 1 || got[0] != `state_set user:last_city "Paris"` {
		t.Errorf("host calls = %q", got)
	}
	out, err = sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: toolInfo(), Tool: "get_weather", Args: map[string]any{"city": "Paris", "days": 4},
	}, host)
	if err != nil || out.Error != "at most 3 days" {
		t.Errorf("days=4: %+v, %v; want the tool's error", out, err)
	}
}
