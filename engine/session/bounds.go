package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// DefaultMaxStateBytes is WithStateLimit's default bound on each state
// scope: far above what an agent keeps in state (a few KiB to a few
// hundred), low enough that app state, which every Get of every user of
// the app loads, cannot grow to gigabytes one request at a time.
const DefaultMaxStateBytes = 16 << 20

// ErrStateTooLarge is what a write refused by WithStateLimit wraps; the
// error is a *StateTooLargeError.
var ErrStateTooLarge = errors.New("state too large")

// StateTooLargeError is the refusal of a write that would make a state
// scope's JSON larger than its bound.
type StateTooLargeError struct {
	// Scope is "app", "user" or "session".
	Scope                    string
	AppName, UserID, Session string
	// Size is the scope's JSON bytes as the write would leave them; Limit
	// the bound.
	Size, Limit int64
}

func (e *StateTooLargeError) Error() string {
	var whose string
	switch e.Scope {
	case "app":
		whose = fmt.Sprintf("app state (app: keys) of app %q", e.AppName)
	case "user":
		whose = fmt.Sprintf("user state (user: keys) of user %q in app %q", e.UserID, e.AppName)
	default:
		sess := "a new session"
		if e.Session != "" {
			sess = fmt.Sprintf("session %q", e.Session)
		}
		whose = fmt.Sprintf("session state of %s of user %q in app %q", sess, e.UserID, e.AppName)
	}
	return fmt.Sprintf("%s: the write would make the %s %d bytes of JSON, over its bound of %d bytes; nothing was stored: write smaller values, or overwrite large keys with smaller ones",
		ErrStateTooLarge, whose, e.Size, e.Limit)
}

func (e *StateTooLargeError) Unwrap() error { return ErrStateTooLarge }

// WithStateLimit returns svc with a bound of limit bytes (JSON, keys
// without their prefix, as the scope is stored) on each state scope: a
// session's own keys, a user's user: keys, an app's app: keys. A Create
// or AppendEvent that would leave a scope it writes larger than that is
// refused with a *StateTooLargeError and stores nothing; reads, and
// writes that leave every scope they touch within the bound, pass
// unchanged. limit <= 0 means DefaultMaxStateBytes.
//
// The check lives here, around the Service, rather than in each store:
// every write of a server (runs, PATCH, session creation, MCP tool calls)
// goes through the one Service it was given, so one wrapper bounds every
// store alike, and the stores stay as google-adk's are, unbounded.
//
// It measures the scopes as the session copy being written sees them
// (AppendEvent) or as a fresh read shows them (Create). Writers through
// copies read at the same time can each pass with the state the others
// are adding, so a scope may end up over the bound by what such a burst
// writes at once; every write after that, through a fresher copy, is
// refused. That is the price of not reading the stored scope inside each
// store's transaction; the bound is against growth without end, not a
// byte-exact quota.
func WithStateLimit(svc Service, limit int64) Service {
	if limit <= 0 {
		limit = DefaultMaxStateBytes
	}
	return &limitedService{Service: svc, limit: limit}
}

type limitedService struct {
	Service
	limit int64
}

// scopes names the scopes a delta writes.
type scopes struct{ app, user, session bool }

func touched(delta map[string]any) scopes {
	var t scopes
	for k := range delta {
		switch {
		case strings.HasPrefix(k, AppPrefix):
			t.app = true
		case strings.HasPrefix(k, UserPrefix):
			t.user = true
		case strings.HasPrefix(k, TempPrefix):
		default:
			t.session = true
		}
	}
	return t
}

// AppendEvent implements Service.
func (l *limitedService) AppendEvent(ctx context.Context, s *Session, e *Event) error {
	if e.Partial || len(e.Actions.StateDelta) == 0 {
		return l.Service.AppendEvent(ctx, s, e)
	}
	t := touched(e.Actions.StateDelta)
	if t != (scopes{}) {
		// The copy's state already holds what the invocation wrote
		// through State.Set; the delta is applied over it for writers
		// that build an event without a State (PATCH).
		state := s.State()
		for k, v := range e.Actions.StateDelta {
			state[k] = v
		}
		if err := l.check(s.AppName, s.UserID, s.ID, state, t); err != nil {
			return err
		}
	}
	return l.Service.AppendEvent(ctx, s, e)
}

// Create implements Service. A session's own initial state is all of its
// scope; initial app: and user: keys are merged into what the app and
// user hold already, which only a session of that user shows: a probe
// session with no state is created to read it, and deleted. That costs
// two writes, paid only by a Create that brings app: or user: keys.
func (l *limitedService) Create(ctx context.Context, req *CreateRequest) (*Session, error) {
	t := touched(req.State)
	if t == (scopes{}) {
		return l.Service.Create(ctx, req)
	}
	state := map[string]any{}
	if t.app || t.user {
		probe, err := l.Service.Create(ctx, &CreateRequest{AppName: req.AppName, UserID: req.UserID, SessionID: "adkhost-state-probe-" + uuid.NewString()})
		if err != nil {
			return nil, fmt.Errorf("reading the app and user state to bound it: %w", err)
		}
		if err := l.Service.Delete(ctx, &DeleteRequest{AppName: req.AppName, UserID: req.UserID, SessionID: probe.ID}); err != nil {
			return nil, fmt.Errorf("deleting the session that read the app and user state: %w", err)
		}
		for k, v := range probe.State() {
			if strings.HasPrefix(k, AppPrefix) || strings.HasPrefix(k, UserPrefix) {
				state[k] = v
			}
		}
	}
	for k, v := range req.State {
		state[k] = v
	}
	if err := l.check(req.AppName, req.UserID, req.SessionID, state, t); err != nil {
		return nil, err
	}
	return l.Service.Create(ctx, req)
}

// check measures the scopes t names in the merged state.
func (l *limitedService) check(app, user, id string, state map[string]any, t scopes) error {
	var errs []error
	for _, sc := range []struct {
		on     bool
		name   string
		prefix string
	}{{t.app, "app", AppPrefix}, {t.user, "user", UserPrefix}, {t.session, "session", ""}} {
		if !sc.on {
			continue
		}
		if n, ok := scopeBytes(state, sc.prefix); ok && n > l.limit {
			errs = append(errs, &StateTooLargeError{Scope: sc.name, AppName: app, UserID: user, Session: id, Size: n, Limit: l.limit})
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// scopeBytes is the length of the JSON object of state's keys of one
// scope (prefix "" for the session's own), without the prefix, as stores
// keep it. A value JSON cannot encode (NaN) is not measured (ok false):
// the store's own encoding decides about it.
func scopeBytes(state map[string]any, prefix string) (n int64, ok bool) {
	n = 2 // {}
	first := true
	var buf []byte // one scratch buffer: only lengths are kept
	for k, v := range state {
		switch {
		case prefix != "" && !strings.HasPrefix(k, prefix):
			continue
		case prefix == "" && IsScoped(k):
			continue
		}
		var err error
		buf = keyorder.AppendJSONString(buf[:0], strings.TrimPrefix(k, prefix))
		kn := len(buf)
		// The event encoder's value writer: encoding/json's bytes without
		// its reflection, on every append that writes state.
		if buf, err = keyorder.AppendJSON(buf, v, nil); err != nil {
			return 0, false
		}
		if !first {
			n++ // ,
		}
		first = false
		n += int64(kn) + 1 + int64(len(buf)-kn)
	}
	return n, true
}
