package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
)

// inspect runs `adkhost module inspect` with args and returns its output.
func inspect(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRoot(&out)
	root.SetArgs(append([]string{"module", "inspect", "--cache-dir", ""}, args...))
	err := root.Execute()
	return out.String(), err
}

func weatherModule(t *testing.T) string {
	t.Helper()
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-cmd-guests"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "weather.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectDescribesAModule(t *testing.T) {
	path := weatherModule(t)
	text, err := inspect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"module       weather", "transport    native (ABI v1)", "tool         get_weather", "hooks        tool_call"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	js, err := inspect(t, "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Digest, Transport string
		Describe          struct {
			Name  string
			Tools []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, js)
	}
	if !strings.HasPrefix(got.Digest, "sha256:") || got.Transport != "native" || got.Describe.Name != "weather" || len(got.Describe.Tools) == 0 || got.Describe.Tools[0].Name != "get_weather" {
		t.Fatalf("--json = %+v", got)
	}
}

func TestInspectSaysWhyAModuleIsRefused(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.wasm")
	// A valid, empty WebAssembly module: no ABI version marker.
	if err := os.WriteFile(empty, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := inspect(t, empty)
	if !errors.Is(err, sandbox.ErrNoABIVersion) || !strings.Contains(err.Error(), "empty.wasm is refused") {
		t.Fatalf("err = %v, want a refusal naming the file and the missing ABI version", err)
	}
	junk := filepath.Join(dir, "junk.wasm")
	if err := os.WriteFile(junk, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := inspect(t, junk); err == nil || !strings.Contains(err.Error(), "junk.wasm is refused") {
		t.Fatalf("err = %v, want a refusal", err)
	}
}
