package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// depthWAT's tool_call does what the first byte of its input says:
//
//	d  recurses 50 levels deep: 52 frames with tool_call's own
//	f  recurses forever
//	x  leaves a function 1000 times by each kind of exit
//	m  calls itself 3 levels deep through a multi-value function
const depthWAT = `(module
  (memory (export "memory") 1)
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"depth\",\"tools\":[{\"name\":\"t\"}],\"hooks\":[\"tool_call\"]}")
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 76)))

  (func $down (param $n i32) (result i32)
    (if (result i32) (local.get $n)
      (then (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))
      (else (i32.const 0))))
  (func $forever (param $n i32) (result i32)
    (i32.add (call $forever (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))

  ;; One function per way out of a frame. Each calls $nop: a function
  ;; that calls nothing has no entry and exit code to test.
  (func $nop)
  (func $viaReturn (param $x i32) (result i32)
    (call $nop)
    (block (br_if 0 (local.get $x)) (return (i32.const 1)))
    (i32.const 2))
  (func $viaBr (result i32) (call $nop) (i32.const 3) (br 0))
  (func $viaBrIf (param $x i32) (result i32)
    (call $nop)
    (br_if 0 (i32.const 4) (local.get $x)) (drop) (i32.const 5))
  (func $viaBrTable (param $x i32) (result i32)
    (call $nop)
    (block $inner (result i32)
      (br_table $inner 1 (i32.const 6) (local.get $x))))
  (func $pair (param $n i32) (result i32 i32)
    (if (local.get $n)
      (then (return (call $pair (i32.sub (local.get $n) (i32.const 1))))))
    (i32.const 7) (i32.const 8))

  (func (export "adkhost_tool_call") (param $p i32) (param $n i32) (result i64)
    (local $c i32) (local $i i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x64)) ;; d
      (then (drop (call $down (i32.const 50)))))
    (if (i32.eq (local.get $c) (i32.const 0x66)) ;; f
      (then (drop (call $forever (i32.const 0)))))
    (if (i32.eq (local.get $c) (i32.const 0x78)) ;; x
      (then
        (loop $again
          (drop (call $viaReturn (i32.const 0)))
          (drop (call $viaReturn (i32.const 1)))
          (drop (call $viaBr))
          (drop (call $viaBrIf (i32.const 0)))
          (drop (call $viaBrIf (i32.const 1)))
          (drop (call $viaBrTable (i32.const 0)))
          (drop (call $viaBrTable (i32.const 1)))
          (drop (drop (call $pair (i32.const 0))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $again (i32.lt_u (local.get $i) (i32.const 1000))))))
    (if (i32.eq (local.get $c) (i32.const 0x6d)) ;; m
      (then (drop (drop (call $pair (i32.const 2))))))
    (i64.const 0))
)`

// TestCallDepthLimit: a guest may open MaxCallDepth frames and not one
// more; every kind of exit gives its frame back, so a guest calling in a
// loop never reaches the limit; and infinite recursion ends at the limit
// with ErrCallDepth, an ErrTrap, instead of growing wazero's call stack to
// its 400 MB ceiling.
func TestCallDepthLimit(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, wat(t, depthWAT))
	call := func(p *sandbox.Pool, input string) error {
		_, err := p.Call(context.Background(), abi.HookToolCall, []byte(input), nil)
		return err
	}
	owner := 0
	poolWith := func(depth int) *sandbox.Pool {
		owner++
		return pool(t, r, m, sandbox.PoolConfig{Owner: fmt.Sprint("depth ", owner), Limits: sandbox.Limits{MaxCallDepth: depth}})
	}

	// tool_call and 51 frames of $down.
	exact := poolWith(52)
	for i := range 3 {
		if err := call(exact, "d"); err != nil {
			t.Fatalf("52 frames with MaxCallDepth 52, call %d: %v", i, err)
		}
	}
	err := call(poolWith(51), "d")
	want := "guest trapped: call depth limit exceeded: adkhost_tool_call: more than 51 nested calls (MaxCallDepth)"
	if !errors.Is(err, sandbox.ErrCallDepth) || !errors.Is(err, sandbox.ErrTrap) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("52 frames with MaxCallDepth 51: %v, want ErrCallDepth ending %q", err, want)
	}

	// tool_call and one callee at a time, 8000 calls: an exit that kept
	// its frame would exhaust the limit within three.
	tight := poolWith(2)
	if err := call(tight, "x"); err != nil {
		t.Fatalf("exits: %v", err)
	}
	if err := call(poolWith(4), "m"); err != nil {
		t.Fatalf("multi-value return: %v", err)
	}
	if err := call(poolWith(3), "m"); !errors.Is(err, sandbox.ErrCallDepth) {
		t.Fatalf("multi-value recursion past the limit: %v, want ErrCallDepth", err)
	}

	// Infinite recursion, default limit. The instance is discarded and
	// the next call runs on a fresh one.
	p := poolWith(0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = call(p, "f")
	runtime.ReadMemStats(&after)
	want = fmt.Sprintf("more than %d nested calls (MaxCallDepth)", sandbox.DefaultMaxCallDepth)
	if !errors.Is(err, sandbox.ErrCallDepth) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("infinite recursion: %v, want ErrCallDepth ending %q", err, want)
	}
	// Logged, not asserted: other tests allocate at the same time.
	t.Logf("infinite recursion to %d frames allocated %.1f MiB; VmHWM %s",
		sandbox.DefaultMaxCallDepth, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), vmHWM())
	if err := call(p, "d"); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Created != 2 || s.Discarded != 1 {
		t.Fatalf("stats = %+v, want the trapped instance discarded", s)
	}

	// A start function that recurses forever is stopped the same way.
	src := strings.Replace(depthWAT, "(func $forever", "(start $loopStart) (func $loopStart (drop (call $forever (i32.const 0)))) (func $forever", 1)
	_, err = r.Load(context.Background(), wat(t, src))
	if !errors.Is(err, sandbox.ErrDescribe) || !errors.Is(err, sandbox.ErrCallDepth) || !strings.Contains(err.Error(), "instantiation: more than") {
		t.Fatalf("recursing start function: %v, want ErrDescribe wrapping ErrCallDepth", err)
	}

	if _, err := r.Pool(context.Background(), m, sandbox.PoolConfig{Owner: "too deep", Limits: sandbox.Limits{MaxCallDepth: 1 << 31}}); !errors.Is(err, sandbox.ErrLimits) {
		t.Fatalf("MaxCallDepth 1<<31: %v, want ErrLimits", err)
	}
}

// vmHWM is the process's peak resident memory, on Linux.
func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// BenchmarkStackOverflow measures what infinite recursion costs the host,
// with the default MaxCallDepth and with the largest, where wazero's own
// 400 MB call stack ceiling stops the guest instead (the behaviour before
// MaxCallDepth). Run it alone:
//
//	go test ./sandbox -run '^$' -bench StackOverflow -benchtime 1x
func BenchmarkStackOverflow(b *testing.B) {
	r := newRuntime(b)
	m := load(b, r, wat(b, depthWAT))
	for _, depth := range []int{sandbox.DefaultMaxCallDepth, 1 << 30} {
		b.Run(fmt.Sprintf("MaxCallDepth=%d", depth), func(b *testing.B) {
			p := pool(b, r, m, sandbox.PoolConfig{Owner: fmt.Sprint("bench ", depth), Limits: sandbox.Limits{MaxCallDepth: depth}})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if _, err := p.Call(context.Background(), abi.HookToolCall, []byte("f"), nil); !errors.Is(err, sandbox.ErrTrap) {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20)/float64(b.N), "MiB-alloc/op")
			b.ReportMetric(float64(after.HeapSys)/(1<<20), "MiB-heap-sys")
			b.Logf("VmHWM %s", vmHWM())
		})
	}
}

// callFreeWAT's tool_call calls, by the first byte of its input:
//
//	l  $leaf, a small function that calls nothing
//	n  $caller, which calls $leaf
//	b  $big, a function that calls nothing but is larger than the rewriter
//	   leaves uncounted
//	t  $t0, the root of a call tree 2^40 calls large with no loop: only the
//	   checks at function entries stop it
//	u  $u0, the same tree with every function starting with a loop (the
//	   shape of a Go guest's functions), whose check replaces the entry's
var callFreeWAT = func() string {
	var b strings.Builder
	b.WriteString(`(module
  (memory (export "memory") 1)
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"calls\",\"tools\":[{\"name\":\"t\"}],\"hooks\":[\"tool_call\"]}")
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 76)))
  (func $leaf (param $x i32) (result i32)
    (loop $l (local.set $x (i32.sub (local.get $x) (i32.const 1))) (br_if $l (local.get $x)))
    (local.get $x))
  (func $caller (result i32) (call $leaf (i32.const 3)))
  (func $big (result i32) (i32.const 0)`)
	for range 600 {
		b.WriteString(" (i32.add (i32.const 1))")
	}
	b.WriteString(")\n")
	for i := range 40 {
		fmt.Fprintf(&b, "  (func $t%d (call $t%d) (call $t%d))\n", i, i+1, i+1)
		fmt.Fprintf(&b, "  (func $u%d (loop) (call $u%d) (call $u%d))\n", i, i+1, i+1)
	}
	b.WriteString(`  (func $t40) (func $u40)
  (func (export "adkhost_tool_call") (param $p i32) (param $n i32) (result i64)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x6c)) (then (drop (call $leaf (i32.const 3)))))
    (if (i32.eq (local.get $c) (i32.const 0x6e)) (then (drop (call $caller))))
    (if (i32.eq (local.get $c) (i32.const 0x62)) (then (drop (call $big))))
    (if (i32.eq (local.get $c) (i32.const 0x74)) (then (call $t0)))
    (if (i32.eq (local.get $c) (i32.const 0x75)) (then (call $u0)))
    (i64.const 0)))`)
	return b.String()
}()

// TestCallFreeFunctions: a small function that calls nothing runs without
// the entry and exit code, so it takes no frame of MaxCallDepth (at most
// one past the limit), while a function that calls, or a large one, does;
// and a call tree without loops is still stopped at the deadline, through
// the entry checks or, in functions that start with a loop, the loop's.
func TestCallFreeFunctions(t *testing.T) {
	r := newRuntime(t)
	m := load(t, r, wat(t, callFreeWAT))
	p := pool(t, r, m, sandbox.PoolConfig{Owner: "depth 1", Limits: sandbox.Limits{MaxCallDepth: 1, Timeout: 300 * time.Millisecond}})
	call := func(input string) error {
		_, err := p.Call(context.Background(), abi.HookToolCall, []byte(input), nil)
		return err
	}
	if err := call("l"); err != nil {
		t.Fatalf("tool_call and a call-free callee with MaxCallDepth 1: %v", err)
	}
	if err := call("n"); !errors.Is(err, sandbox.ErrCallDepth) {
		t.Fatalf("tool_call and a callee that calls with MaxCallDepth 1: %v, want ErrCallDepth", err)
	}
	if err := call("b"); !errors.Is(err, sandbox.ErrCallDepth) {
		t.Fatalf("tool_call and a large call-free callee with MaxCallDepth 1: %v, want ErrCallDepth", err)
	}
	deep := pool(t, r, m, sandbox.PoolConfig{Owner: "deadline", Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	for _, in := range []string{"t", "u"} {
		// Unchecked, the tree would run for hours.
		if _, err := deep.Call(context.Background(), abi.HookToolCall, []byte(in), nil); !errors.Is(err, sandbox.ErrTimeout) {
			t.Fatalf("call tree %q: %v, want ErrTimeout", in, err)
		}
	}
}
