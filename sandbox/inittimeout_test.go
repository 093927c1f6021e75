package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// sleepyStartWAT's start function sleeps 300 ms through WASI poll_oneoff.
// Without the clock grant (as when Load runs describe) wazero's sleep
// returns at once.
const sleepyStartWAT = `(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) %q)
  (func $sleep
    ;; A relative clock subscription at 512: tag 0 (clock), clock id 1
    ;; (monotonic), timeout 300 ms; the event at 600, the count at 700.
    (i32.store8 (i32.const 520) (i32.const 0))
    (i32.store (i32.const 528) (i32.const 1))
    (i64.store (i32.const 536) (i64.const 300000000))
    (i64.store (i32.const 544) (i64.const 0))
    (i32.store16 (i32.const 552) (i32.const 0))
    (drop (call $poll (i32.const 512) (i32.const 600) (i32.const 1) (i32.const 700))))
  (start $sleep)
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const %d)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64) (i64.const 0)))`

// TestInitTimeout: making an instance runs under InitTimeout, not the
// call's Timeout. A start function that outlasts a short Timeout does not
// fail the call that needed the instance; one that outlasts InitTimeout
// is stopped. (The sleep is 300 ms at least, so neither outcome depends on
// the machine being fast.)
func TestInitTimeout(t *testing.T) {
	const describe = `{"abiVersion":1,"name":"sleepy","tools":[{"name":"t"}],"hooks":["tool_call"],"capabilities":["clock"]}`
	r := newRuntime(t)
	m := load(t, r, wat(t, fmt.Sprintf(sleepyStartWAT, describe, len(describe))))
	grants := sandbox.Grants{Clock: true}

	short := pool(t, r, m, sandbox.PoolConfig{Owner: "short call timeout", Grants: grants,
		Limits: sandbox.Limits{Timeout: 100 * time.Millisecond}})
	if got := short.Limits().InitTimeout; got != sandbox.DefaultInitTimeout {
		t.Errorf("default InitTimeout = %s, want %s", got, sandbox.DefaultInitTimeout)
	}
	if _, err := short.Call(context.Background(), abi.HookToolCall, nil, nil); err != nil {
		t.Fatalf("instantiation longer than Timeout: %v", err)
	}

	p := pool(t, r, m, sandbox.PoolConfig{Owner: "short init timeout", Grants: grants,
		Limits: sandbox.Limits{InitTimeout: 100 * time.Millisecond}})
	_, err := p.Call(context.Background(), abi.HookToolCall, nil, nil)
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.HasSuffix(err.Error(), "call timed out: instantiation stopped after 100ms (InitTimeout)") {
		t.Fatalf("instantiation longer than InitTimeout: %v, want ErrTimeout naming InitTimeout", err)
	}
	if s := p.Stats(); s.Created != 0 || s.Live != 0 {
		t.Fatalf("stats = %+v, want no instance", s)
	}

	if l := (sandbox.Limits{Timeout: time.Minute}).WithDefaults(); l.InitTimeout != time.Minute {
		t.Errorf("InitTimeout with a Timeout of 1m defaults to %s, want 1m", l.InitTimeout)
	}
}
