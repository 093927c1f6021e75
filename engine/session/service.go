package session

import (
	"context"
	"encoding/json"
	"time"
)

// Service stores sessions (google-adk's BaseSessionService). Implementations
// must pass the suite in package sessiontest.
type Service interface {
	// Create makes a session. An empty SessionID gets a generated one; an
	// existing one is ErrAlreadyExists. Initial state keys are split by scope.
	Create(ctx context.Context, req *CreateRequest) (*Session, error)
	// Get returns a copy of the session with merged app: and user: state and
	// the events asked for, or an error wrapping ErrNotFound.
	Get(ctx context.Context, req *GetRequest) (*Session, error)
	// List returns the sessions of an app (of one user if UserID is set),
	// with merged state and no events, oldest update first.
	List(ctx context.Context, req *ListRequest) ([]*Session, error)
	// Delete removes a session and its events. Deleting a missing session is
	// not an error.
	Delete(ctx context.Context, req *DeleteRequest) error
	// AppendEvent stores e and applies it to s: the state delta goes to the
	// app, user or session scope by prefix, temp: keys are removed from the
	// event and never stored (s keeps them for the rest of the invocation).
	// Partial events are ignored. Appending through a copy older than what
	// is stored (another copy appended since, or the session was deleted and
	// created again) fails with an error wrapping ErrStale and stores
	// nothing; appends through one copy from several goroutines are
	// serialized and none of them is stale. A missing session is an error
	// wrapping ErrNotFound. With a Pending in ctx the service may return
	// before e is durable and report the write through the Pending's Wait
	// (see Pending); without one, a nil error means e is stored.
	AppendEvent(ctx context.Context, s *Session, e *Event) error
}

// CreateRequest names the session to create.
type CreateRequest struct {
	AppName, UserID, SessionID string
	State                      map[string]any
	// StateKeyOrder holds, by State key, the key-order hint of the value
	// (see Session.StateKeyOrder): the order its dicts were written in.
	StateKeyOrder map[string]json.RawMessage
}

// GetRequest names the session to read and which events to return.
type GetRequest struct {
	AppName, UserID, SessionID string
	// NumRecentEvents, when positive, returns only that many latest events.
	NumRecentEvents int
	// After, when set, returns only events at or after this time.
	After time.Time
}

// ListRequest names the app, and optionally the user, to list.
type ListRequest struct {
	AppName, UserID string
}

// DeleteRequest names the session to delete.
type DeleteRequest struct {
	AppName, UserID, SessionID string
}

// FilterEvents applies GetRequest's event selection to events in order
// (google-adk: the most recent n, then those not before after).
func FilterEvents(events []*Event, numRecent int, after time.Time) []*Event {
	if numRecent > 0 && len(events) > numRecent {
		events = events[len(events)-numRecent:]
	}
	if !after.IsZero() {
		i := len(events) - 1
		for i >= 0 && !events[i].Timestamp.Before(after) {
			i--
		}
		events = events[i+1:]
	}
	return events
}
