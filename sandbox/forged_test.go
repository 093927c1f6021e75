package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// forgedGlue is a native module with one global of its own ($heap, index
// 0). instrument adds its interrupt, countdown and depth globals after it
// (indices 1, 2 and 3); the modules below name those indices, which makes
// them invalid as uploaded.
const forgedGlue = `
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32)
    (global.get $heap) (global.set $heap (i32.add (global.get $heap) (local.get 0))))
  (func (export "adkhost_free") (param i32 i32))
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"forge\",\"tools\":[{\"name\":\"forge\"}],\"hooks\":[\"tool_call\"]}")
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 80)))`

// forgedModules are the red team's attacks (issue #12, class 1), built
// with wat2wasm --no-check: each names a global just past the module's own.
var forgedModules = map[string]string{
	// Clears the interrupt global on every iteration: the deadline never fires.
	"deadline": `(func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (loop $l (global.set 1 (i32.const 0)) (br $l)) (i64.const 0))`,
	// Keeps the countdown from reaching zero: the loop never leaves to Go.
	"spin": `(func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (loop $l (global.set 2 (i32.const 1000000)) (br $l)) (i64.const 0))`,
	// Refills the depth budget on every entry: MaxCallDepth is bypassed.
	"calldepth": `(func $rec (param i32) (result i32)
    (global.set 3 (i32.const 1000000))
    (call $rec (local.get 0)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (drop (call $rec (i32.const 0))) (i64.const 0))`,
	// Exports the interrupt global, so a second module could import it.
	"export": `(export "leak" (global 1))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64) (i64.const 0))`,
}

// Forged instrumentation globals: a module that is invalid as uploaded is
// refused with ErrCompile, whatever the instrumented form would be; none
// of the effects (deadline, spin, call depth) can be reached.
func TestForgedGlobalAttacksFromWAT(t *testing.T) {
	r := newRuntime(t)
	for name, body := range forgedModules {
		t.Run(name, func(t *testing.T) {
			wasm := wasmbuild.WATWith(t, "(module"+forgedGlue+"\n  "+body+")", "--no-check")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			m, err := r.Load(ctx, wasm)
			if err == nil {
				// Were it loaded, show what it does: the call must still end.
				p := pool(t, r, m, sandbox.PoolConfig{Limits: sandbox.Limits{Timeout: 200 * time.Millisecond, MaxCallDepth: 100}})
				_, cerr := p.Call(ctx, abi.HookToolCall, []byte("{}"), nil)
				t.Fatalf("invalid module loaded; its call returned %v", cerr)
			}
			if !errors.Is(err, sandbox.ErrCompile) {
				t.Fatalf("Load: %v, want ErrCompile", err)
			}
		})
	}
}
