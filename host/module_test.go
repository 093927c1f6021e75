package host_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	rt, wasm := guest(t)
	ctx := context.Background()
	if _, err := host.Load(ctx, rt, wasm, host.ModuleConfig{Grants: grantAll}); err == nil || !strings.Contains(err.Error(), "Owner is required") {
		t.Errorf("no owner: %v", err)
	}
	_, err := host.Load(ctx, rt, wasm, host.ModuleConfig{Owner: t.Name(), Grants: sandbox.Grants{State: true}})
	if !errors.Is(err, sandbox.ErrNotGranted) || !strings.Contains(err.Error(), `module "testguest"`) {
		t.Errorf("not granted: %v", err)
	}
	if _, err := host.Load(ctx, rt, []byte("not wasm"), host.ModuleConfig{Owner: t.Name()}); !errors.Is(err, sandbox.ErrCompile) {
		t.Errorf("bad bytes: %v", err)
	}
}

// gateWAT is the smallest useful module: no tools, one hook, before_run,
// which ends every run with a fixed answer from a static buffer.
func gateWAT() string {
	describe := `{"abiVersion":1,"name":"gate","hooks":["before_run"]}`
	answer := `{"abiVersion":1,"content":{"role":"model","parts":[{"text":"closed"}]}}`
	q := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	return fmt.Sprintf(`(module
  (memory (export "memory") 1)
  (data (i32.const 16) "%s")
  (data (i32.const 512) "%s")
  (func (export "adkhost_abi_version_1"))
  ;; One input block at 4096; the host reuses it while inputs fit.
  (func (export "adkhost_alloc") (param $n i32) (result i32)
    (select (i32.const 4096) (i32.const 0) (i32.le_u (local.get $n) (i32.const 61440))))
  (func (export "adkhost_free") (param i32 i32))
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.const %d))
  (func (export "adkhost_before_run") (param i32 i32) (result i64)
    (i64.const %d)))`, q(describe), q(answer), 16<<32|len(describe), 512<<32|len(answer))
}

// TestOneHookModule: a module implementing one plugin hook has no tools and
// no agent callbacks, and its plugin's other hooks do nothing.
func TestOneHookModule(t *testing.T) {
	t.Parallel()
	rt, _ := guest(t)
	m, err := host.Load(context.Background(), rt, wasmbuild.WAT(t, gateWAT()), host.ModuleConfig{Owner: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if m.Name() != "gate" || len(m.Tools()) != 0 || !m.Implements(abi.HookBeforeRun) || m.Implements(abi.HookOnEvent) {
		t.Errorf("module %s: tools %v, hooks %v", m.Name(), m.Tools(), m.Describe().Hooks)
	}
	if cb := m.Callbacks(); cb.BeforeAgent != nil || cb.BeforeModel != nil || cb.BeforeTool != nil || cb.OnToolError != nil {
		t.Errorf("callbacks = %+v, want none", cb)
	}
	ro := readonlyCtx{newFakeCtx(nil)}
	p := m.Plugin()
	if c, err := p.BeforeRun(ro); err != nil || c == nil || c.Role != "model" || c.Parts[0].Text != "closed" {
		t.Errorf("before_run = %+v, %v", c, err)
	}
	if c, err := p.OnUserMessage(ro, nil); c != nil || err != nil {
		t.Errorf("on_user_message = %v, %v", c, err)
	}
	if err := p.AfterRun(ro); err != nil {
		t.Errorf("after_run = %v", err)
	}
	if s := m.Pool().Stats(); s.Calls != 1 {
		t.Errorf("calls = %d, want 1 (only before_run reaches the guest)", s.Calls)
	}
}
