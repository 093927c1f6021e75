package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
)

// The rewrite of a module is kept under CacheDir: a later runtime loads it
// without validating or rewriting the module again, and an entry that is
// damaged, or is another module's, is rebuilt from the module instead of
// compiled.
func TestRewriteCache(t *testing.T) {
	wasm := wat(t, describeModule)
	other := wat(t, strings.Replace(describeModule, "fixed", "other", 1))
	dir := t.TempDir()
	ctx := context.Background()
	// loadIn loads wasm in a new runtime and returns how many rewrites it
	// made, after checking that the module answers.
	loadIn := func(wasm []byte) (*sandbox.Module, int64) {
		t.Helper()
		r, err := sandbox.New(ctx, sandbox.Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close(ctx)
		m, err := r.Load(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "o"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Call(ctx, abi.HookToolCall, []byte(`{}`), nil); err != nil {
			t.Fatalf("calling the module loaded from %s: %v", dir, err)
		}
		return m, sandbox.Rewrites(r)
	}
	m, n := loadIn(wasm)
	if n != 1 {
		t.Fatalf("first load: %d rewrites, want 1", n)
	}
	mo, _ := loadIn(other)
	if mo.Digest() == m.Digest() {
		t.Fatal("the other module is the same module")
	}
	entryOf := func(m *sandbox.Module) string {
		return filepath.Join(dir, "adkhost-instrumented-v9", strings.TrimPrefix(m.Digest(), "sha256:")+".wasm")
	}
	path := entryOf(m)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	otherEntry, err := os.ReadFile(entryOf(mo))
	if err != nil {
		t.Fatal(err)
	}
	if _, n := loadIn(wasm); n != 0 {
		t.Fatalf("load with the rewrite cached: %d rewrites, want 0", n)
	}

	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	damaged := map[string][]byte{
		"a byte of the rewrite changed":         flip(len(good) - 3),
		"a byte of the header's digest changed": flip(10),
		"the checksum changed":                  flip(8 + 32 + 8),
		"the magic changed":                     flip(0),
		"truncated":                             good[:len(good)-5],
		"the header alone":                      good[:8+32+8+4],
		"longer":                                append(bytes.Clone(good), 0),
		"another module's entry":                otherEntry,
		"empty":                                 {},
		"the rewrite without a header":          good[8+32+8+4:],
	}
	for name, b := range damaged {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, n := loadIn(wasm); n != 1 {
			t.Errorf("%s: %d rewrites, want the entry rebuilt", name, n)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
			t.Errorf("%s: the entry was not rewritten", name)
		}
	}
}
