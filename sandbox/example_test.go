package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// Load a module, make a pool for one app, and call a tool. The module is
// any file speaking ABI v1, e.g. the guest in abi/ABI.md §13.
func Example() {
	ctx := context.Background()
	r, err := sandbox.New(ctx, sandbox.Config{CacheDir: "/var/cache/adkhost/wasm"})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close(ctx)

	wasm, err := os.ReadFile("greeter.wasm")
	if err != nil {
		log.Fatal(err)
	}
	m, err := r.Load(ctx, wasm) // compile once per sha256; validate; describe
	if err != nil {
		log.Fatal(err) // e.g. "sandbox: module sha256:…: missing export: adkhost_alloc, …"
	}
	p, err := r.Pool(ctx, m, sandbox.PoolConfig{
		Owner:  "weather_app",
		Limits: sandbox.Limits{Timeout: 2 * time.Second, MemoryPages: 512},
		Grants: sandbox.Grants{HTTP: sandbox.HTTPGrant{Hosts: []string{"api.open-meteo.com"}}},
	})
	if err != nil {
		log.Fatal(err) // e.g. the module asks for a capability not granted
	}
	out, err := sandbox.Invoke[abi.ToolCallOutput](ctx, p, abi.HookToolCall, &abi.ToolCallInput{
		Context: abi.InvocationInfo{AppName: "weather_app", InvocationID: "e-1"},
		Tool:    "greet",
		Args:    map[string]any{"name": "Ada"},
	}, nil) // an abi.Host here serves state, actions and artifacts
	if err != nil {
		log.Fatal(err) // sandbox.ErrTimeout, ErrTrap, ErrBadOutput, …
	}
	fmt.Println(out.Result)
}
