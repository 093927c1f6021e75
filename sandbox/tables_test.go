package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// A module with MaxTables tables, none with a maximum, cannot grow each to
// the per-module bound: the tables share it. Every table.grow by the whole
// bound fails (-1); a grow by the table's share succeeds. Were each table
// capped alone, 100 tables would hold 100 × 8 MiB per instance outside
// the memory budget.
func TestManyTablesShareTheBound(t *testing.T) {
	const n = sandbox.DefaultMaxTables
	var decl, grow strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&decl, "  (table $t%d 0 funcref)\n", i)
		// The whole bound: must be refused.
		fmt.Fprintf(&grow, "    (if (i32.ne (table.grow $t%d (ref.null func) (i32.const %d)) (i32.const -1)) (then unreachable))\n", i, sandbox.DefaultMaxTableElements)
		// Its share: must be granted.
		fmt.Fprintf(&grow, "    (if (i32.eq (table.grow $t%d (ref.null func) (i32.const %d)) (i32.const -1)) (then unreachable))\n", i, sandbox.DefaultMaxTableElements/n)
	}
	const desc = `{"abiVersion":1,"name":"tables","tools":[{"name":"tables"}],"hooks":["tool_call"]}`
	src := fmt.Sprintf(`(module
  (memory (export "memory") 1)
%s  (global $heap (mut i32) (i32.const 1024))
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32)
    (global.get $heap) (global.set $heap (i32.add (global.get $heap) (local.get 0))))
  (func (export "adkhost_free") (param i32 i32))
  (data (i32.const 16) %q)
  (data (i32.const 512) "{}")
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const %d)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64)
%s    (i64.or (i64.shl (i64.const 512) (i64.const 32)) (i64.const 2))))`, decl.String(), desc, len(desc), grow.String())
	r := newRuntime(t)
	m := load(t, r, wat(t, src))
	p := pool(t, r, m, sandbox.PoolConfig{})
	out, err := p.Call(context.Background(), abi.HookToolCall, []byte("{}"), nil)
	if err != nil {
		t.Fatalf("call: %v (a trap means a table grew past its share, or its share was refused)", err)
	}
	if string(out) != "{}" {
		t.Fatalf("call answered %q", out)
	}
}
