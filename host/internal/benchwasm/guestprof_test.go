package benchwasm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// TestGuestLoop is the workload of guestprof.sh, a sampling profile of the
// Go guest's own functions: warm get_weather calls with the input an
// engine turn sends (user content included), or, with
// ADKHOST_GUEST_TURNS=1, whole engine turns with the guest's tool. The
// two differ: between two turns the host's own work evicts the guest's
// code from the CPU's caches, and the same call then costs the guest about
// 1.7 times more than in a loop of calls. It then prints the executable
// anonymous mappings of the process (where wazero put the compiled guest)
// and the compilation cache, for guestprof.py to map samples to guest
// functions, the guest's digest, which names its rewrite in the cache, and
// the number of calls, for time per call.
func TestGuestLoop(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ADKHOST_GUEST_LOOP"))
	if n <= 0 {
		t.Skip("set ADKHOST_GUEST_LOOP=<calls> (guestprof.sh)")
	}
	rt, wasm := benchRuntime(t)
	if path := os.Getenv("ADKHOST_GUEST_WASM"); path != "" {
		// Another get_weather twin, such as a Python module built from an
		// unstripped runtime (guestprof.sh's --wasm).
		var err error
		if wasm, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if os.Getenv("ADKHOST_GUEST_TURNS") == "1" {
		guestTool, _, closeTools := turnTools(t, rt, wasm)
		defer closeTools()
		runner, err := turnRunner(guestTool)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := runTurn(runner, i); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		m, err := rt.Load(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		p, err := rt.Pool(ctx, m, sandbox.PoolConfig{Owner: "bench", Grants: sandbox.Grants{State: true}, Limits: sandbox.Limits{MaxInstances: 1}})
		if err != nil {
			t.Fatal(err)
		}
		h := &stateHost{state: map[string]json.RawMessage{}}
		in := input()
		in.Context.UserContent = &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "Weather in Paris?"}}}
		for range n {
			out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, in, h)
			if err != nil || out.Error != "" {
				t.Fatalf("call: %v %+v", err, out)
			}
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, l := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(l); len(f) == 5 && strings.Contains(f[1], "x") {
			// With the digest of its first bytes, which tell the compiled
			// module in the cache apart from others of the same size.
			lo, _, _ := strings.Cut(f[0], "-")
			at, _ := strconv.ParseUint(lo, 16, 64)
			head := make([]byte, 4096)
			if _, err := mem.ReadAt(head, int64(at)); err != nil {
				continue
			}
			fmt.Printf("guestprof_exec %s %x\n", f[0], sha256.Sum256(head))
		}
	}
	fmt.Println("guestprof_cache", benchCacheDir())
	fmt.Println("guestprof_calls", n)
	fmt.Printf("guestprof_digest %x\n", sha256.Sum256(wasm))
}
