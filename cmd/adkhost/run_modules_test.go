package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalModulesByName(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "weather.wasm"), []byte("\x00asm-bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := localModules{dir: t.TempDir(), modulesDir: dir}
	wasm, digest, err := m.ResolveModule(context.Background(), "weather")
	if err != nil || string(wasm) != "\x00asm-bytes" || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("weather: %q %q %v", wasm, digest, err)
	}
	if _, _, err := m.ResolveModule(context.Background(), "missing"); err == nil || !strings.Contains(err.Error(), "missing.wasm") {
		t.Errorf("missing module: err = %v, want one naming missing.wasm", err)
	}
	if _, _, err := (localModules{}).ResolveModule(context.Background(), "weather"); err == nil || !strings.Contains(err.Error(), "--modules") {
		t.Errorf("no --modules: err = %v, want a hint at --modules", err)
	}
}
