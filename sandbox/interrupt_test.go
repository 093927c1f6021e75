package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// A native module's start function and hooks are stopped at the deadline
// by the interrupt checks instrument inserts; a loop without calls or
// memory accesses is stopped too.
func TestDeadlineStopsStartFunctionAndTightLoop(t *testing.T) {
	const glue = `
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32)
    (global.get $heap) (global.set $heap (i32.add (global.get $heap) (local.get 0))))
  (func (export "adkhost_free") (param i32 i32))
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"spin\",\"tools\":[{\"name\":\"spin\"}],\"hooks\":[\"tool_call\"]}")
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 78)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64)
    (loop $l (br $l)) (i64.const 0))`
	r := newRuntime(t)
	m := load(t, r, wat(t, "(module"+glue+")"))
	p := pool(t, r, m, sandbox.PoolConfig{Limits: sandbox.Limits{Timeout: 200 * time.Millisecond}})
	if _, err := p.Call(context.Background(), abi.HookToolCall, []byte("{}"), nil); !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("tight loop: %v, want ErrTimeout", err)
	}

	// A start function that never returns is stopped too: Load runs it,
	// for describe, under the default deadline (10 s).
	startLoop := wat(t, `(module
  (memory (export "memory") 1)
  (data (i32.const 8) "\01")
  (func $spin (loop $l (br $l)))
  (start $spin)
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64) (i64.const 0)))`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := r.Load(ctx, startLoop)
	if !errors.Is(err, sandbox.ErrDescribe) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("start function that never returns: %v, want a describe failure naming the timeout", err)
	}
}
