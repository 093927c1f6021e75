//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A mapped cache file truncated by another process faults when read;
// guardFaults turns that into errRewriteChanged instead of a crash, and
// lets other panics through.
func TestGuardFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entry")
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	b, release, err := mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = guardFaults(func() {
		for _, c := range b {
			sum += c
		}
	})
	if !errors.Is(err, errRewriteChanged) {
		t.Fatalf("reading a truncated mapping: %v, want errRewriteChanged", err)
	}
	// As wazero reads it: copied by the runtime's memmove.
	err = guardFaults(func() { copy(make([]byte, len(b)), b) })
	if !errors.Is(err, errRewriteChanged) {
		t.Fatalf("copying a truncated mapping: %v, want errRewriteChanged", err)
	}

	defer func() {
		if p := recover(); p != "other" {
			t.Fatalf("recovered %v, want the panic guardFaults let through", p)
		}
	}()
	guardFaults(func() { panic("other") })
}
