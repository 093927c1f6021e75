package sandbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// extismOutput is WAT for an Extism PDK hook body's end: the n bytes at
// linear memory offset at become the hook's output (Extism's own memory:
// alloc, store_u8, output_set), and the hook returns 0.
func extismOutput(at, n int) string {
	return fmt.Sprintf(`    (local.set $o (call $alloc (i64.const %[2]d)))
    (local.set $i (i32.const 0))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (i32.const %[2]d)))
      (call $store_u8 (i64.add (local.get $o) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (i32.const %[1]d) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (call $output_set (local.get $o) (i64.const %[2]d))
    (i32.const 0)`, at, n)
}

// TestExtismTablesCapped: an Extism module's tables are capped as a
// native module's are (MaxTableElements for the module's tables
// together): table.grow past the bound fails (-1). The Extism runtime
// compiled the bytes as uploaded, so a table without a maximum grew as
// far as the guest asked, outside the memory budget (8 bytes an element).
func TestExtismTablesCapped(t *testing.T) {
	const desc = `{"abiVersion":1,"name":"xtables","tools":[{"name":"grow"}],"hooks":["tool_call"]}`
	const answer = `{"abiVersion":1,"result":{"grown":true}}`
	src := fmt.Sprintf(`(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (table $t 0 funcref)
  (data (i32.const 16) %q)
  (data (i32.const 1024) %q)
  (func (export "adkhost_abi_version_1") (result i32) (i32.const 0))
  (func (export "adkhost_describe") (result i32) (local $o i64) (local $i i32)
%s)
  (func (export "adkhost_tool_call") (result i32) (local $o i64) (local $i i32)
    ;; Past the module's bound: must fail.
    (if (i32.ne (table.grow $t (ref.null func) (i32.const %d)) (i32.const -1)) (then unreachable))
%s))`, desc, answer, extismOutput(16, len(desc)), sandbox.DefaultMaxTableElements+1, extismOutput(1024, len(answer)))
	r := newRuntime(t)
	m := load(t, r, wat(t, src))
	if m.Transport() != sandbox.Extism {
		t.Fatalf("transport %v, want Extism", m.Transport())
	}
	p := pool(t, r, m, sandbox.PoolConfig{})
	out, err := p.Call(context.Background(), abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"grow","args":{}}`), nil)
	if err != nil {
		t.Fatalf("call: %v (a trap means the table grew past MaxTableElements)", err)
	}
	if string(out) != answer {
		t.Fatalf("call answered %q", out)
	}
}
