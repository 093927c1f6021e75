//go:build !wasip1

// The host side of the ABI. A guest's build (GOOS=wasip1) leaves it out: a
// guest never implements Host, and importing log/slog for it linked slog,
// log and time's formatting into every Go guest (about 190 KB of code, some
// 5 ms of each cold start, which compiles and validates every function).

package abi

import (
	"context"
	"encoding/json"
	"log/slog"
)

// Host is what the embedder provides to serve a call's host functions: the
// live invocation a hook runs in. The sandbox decodes the guest's arguments,
// checks capabilities, limits and pointers, calls a Host method, and encodes
// the result; a method sees Go values only.
//
// A method returns nil for success, a Status for a specific outcome (e.g.
// StatusNotFound, StatusUnavailable), or any other error, which the guest
// sees as StatusFailed. ctx is the call's context: it carries the call's
// deadline and whatever values the embedder put on the context it passed to
// the call, which is how a Host is bound to the invocation.
//
// One call runs on one goroutine, so the methods of a Host bound to one call
// are never called concurrently.
type Host interface {
	// StateGet returns the JSON value of key, reading the pending delta
	// first (read-your-writes), or StatusNotFound.
	StateGet(ctx context.Context, key string) (json.RawMessage, error)
	// StateSet records value (JSON) for key in the state delta of the event
	// the hook contributes to.
	StateSet(ctx context.Context, key string, value json.RawMessage) error
	// StateDelete records null for key: google-adk's delta has no removal,
	// and `state[key] = None` is what it records.
	StateDelete(ctx context.Context, key string) error
	TransferToAgent(ctx context.Context, agent string) error
	Escalate(ctx context.Context) error
	SkipSummarization(ctx context.Context) error
	// RequestConfirmation asks the user to confirm the current tool call;
	// payload is JSON or nil. StatusUnavailable outside a tool call.
	RequestConfirmation(ctx context.Context, hint string, payload json.RawMessage) error
	// ArtifactLoad returns a version of an artifact, -1 for the newest.
	ArtifactLoad(ctx context.Context, name string, version int) (*Part, error)
	// ArtifactSave stores part as the next version and returns it.
	ArtifactSave(ctx context.Context, name string, part *Part) (int, error)
	ArtifactList(ctx context.Context) ([]string, error)
	// Log receives a guest's log line.
	Log(ctx context.Context, level slog.Level, msg string)
	InvocationInfo(ctx context.Context) (*InvocationInfo, error)
	// MemorySearch searches the current user's memories (google-adk
	// search_memory). StatusUnavailable when the runner has no memory
	// service.
	MemorySearch(ctx context.Context, query string) (*SearchMemoryResponse, error)
	// MemoryAddSession adds the current session to the memory service
	// (google-adk add_session_to_memory). StatusUnavailable when the runner
	// has no memory service.
	MemoryAddSession(ctx context.Context) error
}

// UnavailableHost answers every call with StatusUnavailable and drops log
// lines. Embed it to implement part of Host.
type UnavailableHost struct{}

var _ Host = UnavailableHost{}

func (UnavailableHost) StateGet(context.Context, string) (json.RawMessage, error) {
	return nil, StatusUnavailable
}
func (UnavailableHost) StateSet(context.Context, string, json.RawMessage) error {
	return StatusUnavailable
}
func (UnavailableHost) StateDelete(context.Context, string) error     { return StatusUnavailable }
func (UnavailableHost) TransferToAgent(context.Context, string) error { return StatusUnavailable }
func (UnavailableHost) Escalate(context.Context) error                { return StatusUnavailable }
func (UnavailableHost) SkipSummarization(context.Context) error       { return StatusUnavailable }
func (UnavailableHost) RequestConfirmation(context.Context, string, json.RawMessage) error {
	return StatusUnavailable
}
func (UnavailableHost) ArtifactLoad(context.Context, string, int) (*Part, error) {
	return nil, StatusUnavailable
}
func (UnavailableHost) ArtifactSave(context.Context, string, *Part) (int, error) {
	return 0, StatusUnavailable
}
func (UnavailableHost) ArtifactList(context.Context) ([]string, error) {
	return nil, StatusUnavailable
}
func (UnavailableHost) Log(context.Context, slog.Level, string) {}
func (UnavailableHost) InvocationInfo(context.Context) (*InvocationInfo, error) {
	return nil, StatusUnavailable
}
func (UnavailableHost) MemorySearch(context.Context, string) (*SearchMemoryResponse, error) {
	return nil, StatusUnavailable
}
func (UnavailableHost) MemoryAddSession(context.Context) error { return StatusUnavailable }
