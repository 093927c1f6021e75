package benchwasm

import (
	"context"
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
// engine turn sends (user content included). It then prints the
// executable anonymous mappings of the process (where wazero put the
// compiled guest) and the compilation cache, for guestprof.py to map
// samples to guest functions.
func TestGuestLoop(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ADKHOST_GUEST_LOOP"))
	if n <= 0 {
		t.Skip("set ADKHOST_GUEST_LOOP=<calls> (guestprof.sh)")
	}
	rt, wasm := benchRuntime(t)
	ctx := context.Background()
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
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(l); len(f) == 5 && strings.Contains(f[1], "x") {
			fmt.Println("guestprof_exec", f[0])
		}
	}
	fmt.Println("guestprof_cache", benchCacheDir())
}
