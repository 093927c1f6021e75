package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/sandbox"
)

// describeModule answers describe with a fixed message naming it "fixed".
const describeModule = `(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (func (export "adkhost_abi_version_1"))
  (func (export "adkhost_alloc") (param i32) (result i32)
    (global.get $heap) (global.set $heap (i32.add (global.get $heap) (local.get 0))))
  (func (export "adkhost_free") (param i32 i32))
  (data (i32.const 16) "{\"abiVersion\":1,\"name\":\"fixed\",\"tools\":[{\"name\":\"t\"}],\"hooks\":[\"tool_call\"]}")
  (func (export "adkhost_describe") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 76)))
  (func (export "adkhost_tool_call") (param i32 i32) (result i64) (i64.const 0)))`

// A describe message is kept under CacheDir and read by later runtimes,
// still validated: a bad entry is replaced, a wrong one refused.
func TestDescribeCache(t *testing.T) {
	wasm := wat(t, describeModule)
	dir := t.TempDir()
	ctx := context.Background()
	loadIn := func() (*sandbox.Module, error) {
		t.Helper()
		r, err := sandbox.New(ctx, sandbox.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(ctx) })
		return r.Load(ctx, wasm)
	}
	m, err := loadIn()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "adkhost-describe-abi1", strings.TrimPrefix(m.Digest(), "sha256:")+".json")
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"fixed"`) {
		t.Fatalf("cached describe: %s, %v", b, err)
	}

	// The cache is read: a changed (valid) entry is what the next load sees.
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"abiVersion":1,"name":"cached","tools":[{"name":"t"}],"hooks":["tool_call"]}`)
	if m, err := loadIn(); err != nil || m.Describe().Name != "cached" {
		t.Fatalf("load with a cached describe: %v, %v", m, err)
	}

	// An entry that does not decode or validate is ignored and replaced.
	for _, bad := range []string{`{"abiVersion":1,`, `{"abiVersion":1,"name":"x","hooks":["tool_call"]}`, `{"abiVersion":1,"name":"x","hooks":[],"extra":1}`} {
		write(bad)
		if m, err := loadIn(); err != nil || m.Describe().Name != "fixed" {
			t.Fatalf("load over cache entry %s: %v, %v", bad, m, err)
		}
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"fixed"`) {
			t.Fatalf("entry %s was not replaced: %s", bad, b)
		}
	}

	// A valid entry is still checked against the module's exports.
	write(`{"abiVersion":1,"name":"x","hooks":["before_model"]}`)
	if _, err := loadIn(); !errors.Is(err, sandbox.ErrMissingExport) {
		t.Fatalf("cached describe listing a hook the module lacks: %v, want ErrMissingExport", err)
	}
}
