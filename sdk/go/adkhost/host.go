package adkhost

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
)

// The host functions of ABI.md §4, as Go functions. They work only while a
// hook runs (a tool or a callback): outside one, and in a module the
// embedder gave no invocation, they fail with abi.StatusUnavailable. Each
// needs the capability ABI.md names (Module asks for them); without it the
// host answers abi.StatusDenied.

// HostError is a host function's non-zero status. errors.Is(err,
// abi.StatusNotFound) (or any other abi.Status) tells which; a status this
// SDK does not know also matches abi.StatusFailed, as ABI.md §10 asks.
type HostError struct {
	// Func is the host function, e.g. "state_get".
	Func   string
	Status abi.Status
}

func (e *HostError) Error() string { return "adkhost: " + e.Func + ": " + e.Status.String() }

// Unwrap returns the status.
func (e *HostError) Unwrap() error { return e.Status }

// Is reports an unknown status as abi.StatusFailed.
func (e *HostError) Is(target error) bool {
	s, ok := target.(abi.Status)
	return ok && s == abi.StatusFailed && (e.Status < 0 || e.Status > abi.StatusAllocFailed)
}

func check(fn string, s abi.Status) error {
	if s == abi.StatusOK {
		return nil
	}
	return &HostError{Func: fn, Status: s}
}

// StateStore reads and writes session state (capability abi.CapState).
// Keys follow google-adk's scopes: "app:", "user:" and "temp:" prefixes, or
// none for the session (see abi.StatePrefixApp and the others). Writes land
// in the state delta of the event the hook contributes to; reads see the
// pending delta first, so a hook reads its own writes.
type StateStore struct{}

// State returns the session state of the running hook.
func State() StateStore { return StateStore{} }

// Get decodes the JSON value of key into v (as json.Unmarshal does). A key
// that is absent fails with abi.StatusNotFound; a deleted key holds null,
// which leaves v unchanged.
func (StateStore) Get(key string, v any) error {
	raw, err := StateStore{}.GetRaw(key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("adkhost: state %q: %w", key, err)
	}
	return nil
}

// GetRaw returns the JSON value of key.
func (StateStore) GetRaw(key string) (json.RawMessage, error) {
	b, s := rawStateGet(key)
	if err := check(abi.ImportStateGet, s); err != nil {
		return nil, err
	}
	return b, nil
}

// Set records value, encoded as JSON, for key.
func (StateStore) Set(key string, value any) error {
	var b []byte
	if s, ok := value.(string); ok {
		// The common case, without encoding/json (see fastcodec.go).
		b = appendJSONString(scratch(), s)
		defer keepScratch(b)
	} else {
		var err error
		if b, err = json.Marshal(value); err != nil {
			return fmt.Errorf("adkhost: state %q: %w", key, err)
		}
	}
	return check(abi.ImportStateSet, rawStateSet(key, b))
}

// Delete records null for key: google-adk's state delta has no removal.
func (StateStore) Delete(key string) error {
	return check(abi.ImportStateDelete, rawStateDelete(key))
}

// EventActions set fields of the actions of the event the hook contributes
// to (capability abi.CapActions).
type EventActions struct{}

// Actions returns the event actions of the running hook.
func Actions() EventActions { return EventActions{} }

// TransferToAgent hands the conversation to the named agent.
func (EventActions) TransferToAgent(agent string) error {
	return check(abi.ImportTransferToAgent, rawTransferToAgent(agent))
}

// Escalate stops the enclosing workflow agent (e.g. a loop).
func (EventActions) Escalate() error { return check(abi.ImportEscalate, rawEscalate()) }

// SkipSummarization makes the tool's result end the turn, without another
// model call.
func (EventActions) SkipSummarization() error {
	return check(abi.ImportSkipSummarization, rawSkipSummarization())
}

// RequestConfirmation asks the user to confirm the current tool call, with
// a hint and an optional payload (encoded as JSON; nil for none). It fails
// with abi.StatusUnavailable outside a tool call and the tool hooks.
func (EventActions) RequestConfirmation(hint string, payload any) error {
	var p []byte
	if payload != nil {
		var err error
		if p, err = json.Marshal(payload); err != nil {
			return fmt.Errorf("adkhost: confirmation payload: %w", err)
		}
	}
	return check(abi.ImportRequestConfirmation, rawRequestConfirmation(hint, p))
}

// LatestVersion asks ArtifactStore.Load for the newest version.
const LatestVersion = -1

// ArtifactStore loads and saves the session's artifacts (capability
// abi.CapArtifacts).
type ArtifactStore struct{}

// Artifacts returns the artifacts of the running hook's session.
func Artifacts() ArtifactStore { return ArtifactStore{} }

// Load returns a version of an artifact, LatestVersion for the newest, or
// fails with abi.StatusNotFound.
func (ArtifactStore) Load(name string, version int) (*abi.Part, error) {
	if version < LatestVersion || version > 1<<31-1 {
		return nil, &HostError{Func: abi.ImportArtifactLoad, Status: abi.StatusInvalidArgument}
	}
	b, s := rawArtifactLoad(name, int32(version))
	if err := check(abi.ImportArtifactLoad, s); err != nil {
		return nil, err
	}
	var p abi.Part
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("adkhost: artifact %q: %w", name, err)
	}
	return &p, nil
}

// Save stores part as the next version of an artifact and returns that
// version.
func (ArtifactStore) Save(name string, part *abi.Part) (int, error) {
	b, err := json.Marshal(part)
	if err != nil {
		return 0, fmt.Errorf("adkhost: artifact %q: %w", name, err)
	}
	v, s := rawArtifactSave(name, b)
	if err := check(abi.ImportArtifactSave, s); err != nil {
		return 0, err
	}
	return int(v), nil
}

// List returns the names of the artifacts the session sees.
func (ArtifactStore) List() ([]string, error) {
	b, s := rawArtifactList()
	if err := check(abi.ImportArtifactList, s); err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("adkhost: artifact list: %w", err)
	}
	return names, nil
}

// MemoryStore searches the user's memory and adds sessions to it
// (capability abi.CapMemory), as google-adk's search_memory and
// add_session_to_memory. Without a memory service in the runner both fail
// with abi.StatusUnavailable.
type MemoryStore struct{}

// Memory returns the memory of the running hook's user.
func Memory() MemoryStore { return MemoryStore{} }

// Search returns the user's memories that match query, best first.
func (MemoryStore) Search(query string) (*abi.SearchMemoryResponse, error) {
	b, s := rawMemorySearch(validUTF8(query))
	if err := check(abi.ImportMemorySearch, s); err != nil {
		return nil, err
	}
	var r abi.SearchMemoryResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("adkhost: memory search: %w", err)
	}
	return &r, nil
}

// AddSession adds the current session to the memory service.
func (MemoryStore) AddSession() error {
	return check(abi.ImportMemoryAddSession, rawMemoryAddSession())
}

// Invocation asks the host which invocation the running hook belongs to.
// Every hook already receives it (CallbackContext.Invocation); this is for
// code that has no context at hand. It needs no capability.
func Invocation() (*abi.InvocationInfo, error) {
	b, s := rawInvocationInfo()
	if err := check(abi.ImportInvocationInfo, s); err != nil {
		return nil, err
	}
	var info abi.InvocationInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("adkhost: invocation info: %w", err)
	}
	return &info, nil
}

// Config returns the value the embedder configured for key (capability
// abi.CapConfig), or fails with abi.StatusNotFound.
func Config(key string) (string, error) {
	b, s := rawConfigGet(key)
	if err := check(abi.ImportConfigGet, s); err != nil {
		return "", err
	}
	return string(b), nil
}

// Fetch performs an HTTP request through the host (capability abi.CapHTTP),
// to the destinations the embedder allows; others fail with
// abi.StatusDenied. WASI has no sockets: this is the only way out. An
// empty Method is GET.
func Fetch(req *abi.HTTPRequest) (*abi.HTTPResponse, error) {
	r := *req
	if r.Method == "" {
		r.Method = "GET"
	}
	b, err := json.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("adkhost: http request: %w", err)
	}
	out, s := rawHTTPRequest(b)
	if err := check(abi.ImportHTTPRequest, s); err != nil {
		return nil, err
	}
	var resp abi.HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("adkhost: http response: %w", err)
	}
	return &resp, nil
}

// validUTF8 replaces invalid UTF-8, which the host refuses.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
