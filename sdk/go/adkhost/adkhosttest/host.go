//go:build !wasip1

// Package adkhosttest is an in-memory abi.Host that records every call, for
// unit tests of guests on the development machine: adkhost.UseHost serves a
// Go guest's host functions with it, so a tool's Go test runs without Wasm
// or a server. adkhost's own tests of every SDK (Go, Rust, AssemblyScript)
// serve real guests' host functions with it in the sandbox. It imports only
// abi and the standard library, and, like abi.Host, is not built for
// WebAssembly.
package adkhosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/adkhost/adkhost/abi"
)

// Host is an abi.Host over maps. The zero Host is empty and usable.
type Host struct {
	mu sync.Mutex
	// State holds JSON values by key; StateSet and StateDelete write it.
	State map[string]json.RawMessage
	// Artifacts holds the versions of each artifact.
	Artifacts map[string][]*abi.Part
	// ConfigValues serve ConfigGet.
	ConfigValues map[string]string
	// Info is what InvocationInfo returns; nil answers StatusUnavailable.
	Info *abi.InvocationInfo
	// Memories are what MemorySearch searches: an entry matches when the
	// text of its parts contains the query, case-insensitively (an empty
	// query matches all). NoMemory makes MemorySearch and MemoryAddSession
	// answer StatusUnavailable, as a runner without a memory service does.
	Memories []abi.MemoryEntry
	NoMemory bool
	// SessionsAdded counts the successful MemoryAddSession calls.
	SessionsAdded int
	// Calls records each call as "op arg..." in order; Logs each log line
	// as "LEVEL msg".
	Calls, Logs []string
}

var _ abi.Host = (*Host)(nil)

func (h *Host) record(format string, args ...any) {
	h.Calls = append(h.Calls, fmt.Sprintf(format, args...))
}

// Recorded returns a copy of Calls.
func (h *Host) Recorded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.Calls)
}

// LogLines returns a copy of Logs.
func (h *Host) LogLines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.Logs)
}

func (h *Host) StateGet(_ context.Context, key string) (json.RawMessage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("state_get %s", key)
	v, ok := h.State[key]
	if !ok {
		return nil, abi.StatusNotFound
	}
	return v, nil
}

func (h *Host) StateSet(_ context.Context, key string, value json.RawMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("state_set %s %s", key, value)
	if h.State == nil {
		h.State = map[string]json.RawMessage{}
	}
	h.State[key] = append(json.RawMessage(nil), value...)
	return nil
}

func (h *Host) StateDelete(_ context.Context, key string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("state_delete %s", key)
	if h.State == nil {
		h.State = map[string]json.RawMessage{}
	}
	h.State[key] = json.RawMessage("null")
	return nil
}

func (h *Host) TransferToAgent(_ context.Context, agent string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("transfer_to_agent %s", agent)
	return nil
}

func (h *Host) Escalate(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("escalate")
	return nil
}

func (h *Host) SkipSummarization(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("skip_summarization")
	return nil
}

func (h *Host) RequestConfirmation(_ context.Context, hint string, payload json.RawMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("request_confirmation %s %s", hint, payload)
	return nil
}

func (h *Host) ArtifactLoad(_ context.Context, name string, version int) (*abi.Part, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("artifact_load %s %d", name, version)
	vs := h.Artifacts[name]
	if version == -1 {
		version = len(vs) - 1
	}
	if version < 0 || version >= len(vs) {
		return nil, abi.StatusNotFound
	}
	return vs[version], nil
}

func (h *Host) ArtifactSave(_ context.Context, name string, part *abi.Part) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("artifact_save %s", name)
	if h.Artifacts == nil {
		h.Artifacts = map[string][]*abi.Part{}
	}
	h.Artifacts[name] = append(h.Artifacts[name], part)
	return len(h.Artifacts[name]) - 1, nil
}

func (h *Host) ArtifactList(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("artifact_list")
	var names []string
	for n := range h.Artifacts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func (h *Host) Log(_ context.Context, level slog.Level, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Logs = append(h.Logs, level.String()+" "+msg)
}

func (h *Host) InvocationInfo(context.Context) (*abi.InvocationInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("invocation_info")
	if h.Info == nil {
		return nil, abi.StatusUnavailable
	}
	info := *h.Info
	return &info, nil
}

func (h *Host) MemorySearch(_ context.Context, query string) (*abi.SearchMemoryResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("memory_search %s", query)
	if h.NoMemory {
		return nil, abi.StatusUnavailable
	}
	r := &abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{}}
	q := strings.ToLower(query)
	for _, e := range h.Memories {
		var text strings.Builder
		if e.Content != nil {
			for _, p := range e.Content.Parts {
				if p != nil {
					text.WriteString(p.Text)
				}
			}
		}
		if strings.Contains(strings.ToLower(text.String()), q) {
			r.Memories = append(r.Memories, e)
		}
	}
	return r, nil
}

func (h *Host) MemoryAddSession(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("memory_add_session")
	if h.NoMemory {
		return abi.StatusUnavailable
	}
	h.SessionsAdded++
	return nil
}

// ConfigGet serves config_get for adkhost.UseHost (the sandbox serves it
// from its grants instead).
func (h *Host) ConfigGet(_ context.Context, key string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record("config_get %s", key)
	v, ok := h.ConfigValues[key]
	if !ok {
		return "", abi.StatusNotFound
	}
	return v, nil
}
