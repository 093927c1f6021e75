// Package guesttest is the end-to-end suite of the host functions every
// guest SDK wraps (artifacts, HTTP, memory): each SDK's test guest exports
// the same tools, and its test runs the suite on it in the real sandbox
// against adkhosttest.Host. It is for tests only.
package guesttest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/internal/fakehost"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

// Guest is an SDK's test guest, loaded. Its tools: load {name, version?}
// → {part}, save {name, part} → {version}, list → {names} (artifacts);
// fetch {method?, url, body?} → {status, contentType, body} (http_request,
// with header X-Test: Tag); recall {query} → {texts, memories} and
// remember → {added} (memory).
type Guest struct {
	Runtime *sandbox.Runtime
	Module  *sandbox.Module
	// Pool is the module's pool, granted Grants: artifacts, memory and
	// HTTP to 127.0.0.1 (loopback needs AllowPrivate) at least.
	Pool   *sandbox.Pool
	Grants sandbox.Grants
	// Tag is the X-Test header the guest's fetch sends.
	Tag string
	// Failure is the error a tool reports when host function fn answers s,
	// in the SDK's words.
	Failure func(fn string, s abi.Status) string
}

// call runs tool with the JSON args and returns the output JSON.
func (g Guest) call(t *testing.T, h *adkhosttest.Host, tool, args string) string {
	t.Helper()
	out, err := g.Pool.Call(context.Background(), abi.HookToolCall, []byte(`{"abiVersion":1,"tool":"`+tool+`","args":`+args+`}`), h)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return string(out)
}

func result(json string) string { return `{"abiVersion":1,"result":` + json + `}` }

func (g Guest) failure(fn string, s abi.Status) string {
	b, _ := json.Marshal(g.Failure(fn, s))
	return `{"abiVersion":1,"error":` + string(b) + `}`
}

// ArtifactsAndHTTP checks the artifact tools (versions, the newest, a
// missing name or version, binary data, an invalid part, the list) through
// h, and fetch against an echo server on the granted 127.0.0.1, DENIED
// by another name for it. h may have recorded calls before.
func ArtifactsAndHTTP(t *testing.T, g Guest, h *adkhosttest.Host) {
	before := len(h.Recorded())
	srv := fakehost.NewEcho(t)
	for _, c := range []struct{ name, tool, args, want string }{
		{"load missing", "load", `{"name":"a.txt"}`, result(`{"part":null}`)},
		{"save", "save", `{"name":"a.txt","part":{"text":"one"}}`, result(`{"version":0}`)},
		{"save again", "save", `{"name":"a.txt","part":{"text":"two"}}`, result(`{"version":1}`)},
		{"save binary", "save", `{"name":"b.bin","part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}`, result(`{"version":0}`)},
		{"save invalid part", "save", `{"name":"c","part":{"text":1}}`, g.failure("artifact_save", abi.StatusInvalidArgument)},
		{"load newest", "load", `{"name":"a.txt"}`, result(`{"part":{"text":"two"}}`)},
		{"load version 0", "load", `{"name":"a.txt","version":0}`, result(`{"part":{"text":"one"}}`)},
		{"load missing version", "load", `{"name":"a.txt","version":5}`, result(`{"part":null}`)},
		{"load binary", "load", `{"name":"b.bin"}`, result(`{"part":{"inlineData":{"mimeType":"application/octet-stream","data":"AP8B"}}}`)},
		{"list", "list", `{}`, result(`{"names":["a.txt","b.bin"]}`)},
		{"post", "fetch", `{"method":"POST","url":"` + srv.URL + `/echo","body":"héllo wörld"}`,
			result(`{"status":201,"contentType":"text/plain; charset=utf-8","body":"got héllo wörld"}`)},
		{"empty response", "fetch", `{"url":"` + srv.URL + `/empty"}`, result(`{"status":204,"contentType":"","body":""}`)},
		// The same server by a name the grant does not list: no request leaves.
		{"denied", "fetch", `{"url":"http://localhost:` + srv.Port + `/denied"}`, g.failure("http_request", abi.StatusDenied)},
	} {
		if got := g.call(t, h, c.tool, c.args); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got, want := h.Recorded()[before:], []string{"artifact_load a.txt -1", "artifact_save a.txt", "artifact_save a.txt",
		"artifact_save b.bin", "artifact_load a.txt -1", "artifact_load a.txt 0", "artifact_load a.txt 5",
		"artifact_load b.bin -1", "artifact_list"}; !slices.Equal(got, want) {
		t.Errorf("host calls %q\nwant %q", got, want)
	}
	if vs := h.Artifacts["b.bin"]; len(vs) != 1 || vs[0].InlineData == nil || string(vs[0].InlineData.Data) != "\x00\xff\x01" {
		b, _ := json.Marshal(vs)
		t.Errorf("saved b.bin %s, want one version with inline bytes 00 ff 01", b)
	}
	if seen, want := srv.Seen(), []string{"POST /echo " + g.Tag + " héllo wörld", "GET /empty " + g.Tag + " "}; !slices.Equal(seen, want) {
		t.Errorf("server saw %q\nwant %q", seen, want)
	}
}

// Memory checks the memory tools: a search answered from the fake's
// memories, a session added, UNAVAILABLE without a memory service, and the
// module, which asks for memory, refused a pool without the grant (its
// calls could only be DENIED).
func Memory(t *testing.T, g Guest) {
	h := &adkhosttest.Host{Memories: []abi.MemoryEntry{
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "I drink "}, {Text: "green tea"}}},
			CustomMetadata: map[string]any{"k": 1}, ID: "e1", Author: "user", Timestamp: "2026-01-02T03:04:05"},
		{Content: &abi.Content{Role: "user", Parts: []*abi.Part{{Text: "my cat is Ada"}}}, CustomMetadata: map[string]any{}},
	}}
	tea := `{"content":{"role":"user","parts":[{"text":"I drink "},{"text":"green tea"}]},"custom_metadata":{"k":1},"id":"e1","author":"user","timestamp":"2026-01-02T03:04:05"}`
	for _, c := range []struct{ name, tool, args, want string }{
		{"search", "recall", `{"query":"TEA"}`, `{"texts":["I drink green tea"],"memories":[` + tea + `]}`},
		{"search all", "recall", `{}`, `{"texts":["I drink green tea","my cat is Ada"],"memories":[` + tea +
			`,{"content":{"role":"user","parts":[{"text":"my cat is Ada"}]},"custom_metadata":{}}]}`},
		{"search no match", "recall", `{"query":"coffee"}`, `{"texts":[],"memories":[]}`},
		{"add session", "remember", `{}`, `{"added":true}`},
	} {
		if got, want := g.call(t, h, c.tool, c.args), result(c.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
	if got, want := h.Recorded(), []string{"memory_search TEA", "memory_search ", "memory_search coffee", "memory_add_session"}; !slices.Equal(got, want) || h.SessionsAdded != 1 {
		t.Errorf("host calls %q (%d sessions added)\nwant %q (1)", got, h.SessionsAdded, want)
	}

	none := &adkhosttest.Host{NoMemory: true}
	for tool, fn := range map[string]string{"recall": "memory_search", "remember": "memory_add_session"} {
		if got, want := g.call(t, none, tool, `{"query":"tea"}`), g.failure(fn, abi.StatusUnavailable); got != want {
			t.Errorf("%s without a memory service:\n got %s\nwant %s", tool, got, want)
		}
	}
	if none.SessionsAdded != 0 {
		t.Errorf("%d sessions added without a memory service", none.SessionsAdded)
	}

	grants := g.Grants
	grants.Memory = false
	_, err := g.Runtime.Pool(context.Background(), g.Module, sandbox.PoolConfig{Owner: "no-memory", Grants: grants})
	if !errors.Is(err, sandbox.ErrNotGranted) || !strings.HasSuffix(err.Error(), "[memory]") {
		t.Errorf("pool without the memory grant: %v, want ErrNotGranted for [memory]", err)
	}
}
