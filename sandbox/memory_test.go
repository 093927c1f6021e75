package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

// memoryWAT compiles testdata/wat/memory.wat; asking false drops its
// "capabilities", for a module that does not ask for memory.
func memoryWAT(t testing.TB, asking bool) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "wat", "memory.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if asking {
		return wat(t, string(src))
	}
	const caps = `,\"capabilities\":[\"memory\"]`
	if !strings.Contains(string(src), caps) {
		t.Fatal("memory.wat no longer asks for memory as the test expects")
	}
	return wat(t, strings.Replace(string(src), caps, "", 1))
}

func memoryHost() *adkhosttest.Host {
	return &adkhosttest.Host{Memories: []abi.MemoryEntry{
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "I drink green tea"}}}, CustomMetadata: map[string]any{}, ID: "e1", Author: "user", Timestamp: "2026-01-02T03:04:05"},
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "my cat is Ada"}}}, CustomMetadata: map[string]any{}, ID: "e2", Author: "user"},
	}}
}

func TestMemoryHostFunctions(t *testing.T) {
	r := newRuntime(t)
	ctx := context.Background()
	m := load(t, r, memoryWAT(t, true))
	call := func(t *testing.T, p *sandbox.Pool, h abi.Host, input string) string {
		t.Helper()
		out, err := p.Call(ctx, abi.HookToolCall, []byte(input), h)
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		return string(out)
	}
	status := func(s abi.Status) string { return fmt.Sprint(int(s)) }

	t.Run("granted", func(t *testing.T) {
		p := pool(t, r, m, sandbox.PoolConfig{Grants: sandbox.Grants{Memory: true}})
		h := memoryHost()
		want := `{"memories":[{"content":{"role":"user","parts":[{"text":"I drink green tea"}]},"custom_metadata":{},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"}]}`
		if got := call(t, p, h, "Qtea"); got != want {
			t.Fatalf("memory_search tea\n got %s\nwant %s", got, want)
		}
		if got := call(t, p, h, "Qnothing like it"); got != `{"memories":[]}` {
			t.Fatalf("memory_search without a match: %s", got)
		}
		if got := call(t, p, h, "A"); got != status(abi.StatusOK) || h.SessionsAdded != 1 {
			t.Fatalf("memory_add_session: %s, %d sessions added", got, h.SessionsAdded)
		}
		if got := call(t, p, h, "Q\xff"); got != status(abi.StatusInvalidArgument) {
			t.Fatalf("memory_search of invalid UTF-8: %s", got)
		}
		wantCalls := []string{"memory_search tea", "memory_search nothing like it", "memory_add_session"}
		if got := h.Recorded(); !reflect.DeepEqual(got, wantCalls) {
			t.Fatalf("host saw %q, want %q", got, wantCalls)
		}
	})
	t.Run("unavailable", func(t *testing.T) {
		p := pool(t, r, m, sandbox.PoolConfig{Grants: sandbox.Grants{Memory: true}})
		h := &adkhosttest.Host{NoMemory: true}
		for _, in := range []string{"Qtea", "A"} {
			if got := call(t, p, h, in); got != status(abi.StatusUnavailable) {
				t.Errorf("%s without a memory service: %s", in, got)
			}
			if got := call(t, p, nil, in); got != status(abi.StatusUnavailable) {
				t.Errorf("%s without a host: %s", in, got)
			}
		}
	})
	t.Run("not granted", func(t *testing.T) {
		_, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "stingy", Grants: sandbox.Grants{State: true}})
		if !errors.Is(err, sandbox.ErrNotGranted) || !strings.HasSuffix(err.Error(), "the module asks for [memory]") {
			t.Fatalf("pool of a module asking for memory without the grant: %v", err)
		}
		// Granted but not asked for: withheld.
		p := pool(t, r, load(t, r, memoryWAT(t, false)), sandbox.PoolConfig{Grants: sandbox.Grants{Memory: true}})
		h := memoryHost()
		for _, in := range []string{"Qtea", "A"} {
			if got := call(t, p, h, in); got != status(abi.StatusDenied) {
				t.Errorf("%s without asking: %s", in, got)
			}
		}
		if got := h.Recorded(); len(got) != 0 || h.SessionsAdded != 0 {
			t.Fatalf("a denied call reached the host: %q", got)
		}
	})
	t.Run("bad pointers", func(t *testing.T) {
		p := pool(t, r, m, sandbox.PoolConfig{Grants: sandbox.Grants{Memory: true}})
		h := memoryHost()
		if got := call(t, p, h, "B"); got != status(abi.StatusBadPointer) {
			t.Errorf("query outside memory: %s", got)
		}
		if got := call(t, p, h, "R"); got != status(abi.StatusBadPointer) {
			t.Errorf("result slots outside memory: %s", got)
		}
		if got := h.Recorded(); len(got) > 1 || (len(got) == 1 && got[0] != "memory_search ") {
			t.Fatalf("host saw %q", got)
		}
	})
	t.Run("too large", func(t *testing.T) {
		p := pool(t, r, m, sandbox.PoolConfig{Owner: "small", Grants: sandbox.Grants{Memory: true}, Limits: sandbox.Limits{MaxInputBytes: 64}})
		if got := call(t, p, memoryHost(), "Qtea"); got != status(abi.StatusTooLarge) {
			t.Fatalf("a result above MaxInputBytes: %s", got)
		}
	})
	t.Run("counted by the host call limit", func(t *testing.T) {
		p := pool(t, r, m, sandbox.PoolConfig{Owner: "limited", Grants: sandbox.Grants{Memory: true}, Limits: sandbox.Limits{MaxHostCalls: 1}})
		h := memoryHost()
		if got := call(t, p, h, "A"); got != status(abi.StatusOK) {
			t.Fatalf("one call: %s", got)
		}
		_, err := p.Call(ctx, abi.HookToolCall, []byte("D"), h)
		if !errors.Is(err, sandbox.ErrHostCallLimit) {
			t.Fatalf("two calls: %v, want ErrHostCallLimit", err)
		}
	})
}
