package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"
)

// State key prefixes (google-adk State.APP_PREFIX etc.).
const (
	AppPrefix  = "app:"
	UserPrefix = "user:"
	TempPrefix = "temp:"
)

// Session is one conversation: its identity, merged state (app:, user:,
// session and, during an invocation, temp: keys) and event history.
//
// A Session is safe for concurrent use: parallel agents of one invocation
// read its history and write its state while the runner appends events.
// Events handed out are shared, not copied: treat them as read-only.
type Session struct {
	ID      string
	AppName string
	UserID  string

	mu    sync.RWMutex
	state map[string]any
	// stateOrder holds the key-order hints (internal/keyorder) of state
	// values whose dicts were written in an order other than sorted.
	stateOrder map[string]json.RawMessage
	events     []*Event
	lastUpdate time.Time
	revision   uint64
}

// New builds a session value as a Service returns it. state is taken over,
// not copied. events is shared, not copied, and never written to: the
// session writes neither its elements nor the backing array beyond its
// length (the first Commit appends to a copy), so a store may hand several
// sessions slices of one read-only history, and append to that history
// past their lengths, without copying it per Get. The events themselves
// must not change. revision is the storage revision the session was read
// at; AppendEvent uses it to refuse writes to a stale copy.
func New(appName, userID, id string, state map[string]any, events []*Event, lastUpdate time.Time, revision uint64) *Session {
	if state == nil {
		state = map[string]any{}
	}
	// Clipping the capacity makes Commit's first append copy instead of
	// writing into spare capacity another holder of the array may use.
	events = events[:len(events):len(events)]
	return &Session{ID: id, AppName: appName, UserID: userID, state: state, events: events, lastUpdate: lastUpdate, revision: revision}
}

// Events returns the session's events in order. The slice must not be
// modified; later appends do not change it.
func (s *Session) Events() []*Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.events[:len(s.events):len(s.events)]
}

// LastUpdateTime is the timestamp of the last appended event, or the
// creation time.
func (s *Session) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastUpdate
}

// Revision is the storage revision this copy reflects.
func (s *Session) Revision() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.revision
}

// StateValue returns the value of one state key.
func (s *Session) StateValue(key string) (any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.state[key]
	return v, ok
}

// State returns a shallow copy of the session's state.
func (s *Session) State() map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.state)
}

// StateKeyOrder returns the key-order hint of one state key's value: the
// order its dicts were written in (Python keeps it), or nil when it is
// sorted or unknown. See model.Response.KeyOrder for what a hint is.
func (s *Session) StateKeyOrder(key string) json.RawMessage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stateOrder[key]
}

// SetStateKeyOrder gives the session the key-order hints of its state
// values, by key; stores call it on a session New built, before handing
// it out. orders is taken over, not copied.
func (s *Session) SetStateKeyOrder(orders map[string]json.RawMessage) {
	s.mu.Lock()
	s.stateOrder = orders
	s.mu.Unlock()
}

func (s *Session) setState(key string, v any, order json.RawMessage) {
	s.mu.Lock()
	s.state[key] = v
	s.setOrderLocked(key, order)
	s.mu.Unlock()
}

func (s *Session) setOrderLocked(key string, order json.RawMessage) {
	if order == nil {
		delete(s.stateOrder, key)
		return
	}
	if s.stateOrder == nil {
		s.stateOrder = map[string]json.RawMessage{}
	}
	s.stateOrder[key] = order
}

// Commit applies an appended event to this in-memory copy: every key of its
// state delta (temp: ones too, so later agents of the invocation see them)
// lands in the state, the event joins the history, and the copy moves to
// revision. Services call it after storing the event; TrimTempDelta must
// already have removed temp: keys from the event, so they are passed here.
// The history slice given to New is never written (see New).
func (s *Session) Commit(e *Event, temp map[string]any, revision uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range temp {
		s.state[k] = v
		s.setOrderLocked(k, e.Actions.StateKeyOrder[k])
	}
	for k, v := range e.Actions.StateDelta {
		s.state[k] = v
		s.setOrderLocked(k, e.Actions.StateKeyOrder[k])
	}
	s.events = append(s.events, e)
	s.lastUpdate = e.Timestamp
	s.revision = revision
}

// TrimTempDelta removes temp: keys from the event's state delta, in place,
// and returns them: temp state lives for one invocation and is never stored.
func TrimTempDelta(e *Event) map[string]any {
	var temp map[string]any
	for k, v := range e.Actions.StateDelta {
		if strings.HasPrefix(k, TempPrefix) {
			if temp == nil {
				temp = map[string]any{}
			}
			temp[k] = v
			delete(e.Actions.StateDelta, k)
		}
	}
	return temp
}

// ScopedDelta is a state delta split by scope, with prefixes removed from
// app and user keys. Session keys keep their names; temp: keys are dropped.
type ScopedDelta struct {
	App, User, Session map[string]any
}

// SplitDelta splits a state delta by scope.
func SplitDelta(delta map[string]any) ScopedDelta {
	var d ScopedDelta
	put := func(m *map[string]any, k string, v any) {
		if *m == nil {
			*m = map[string]any{}
		}
		(*m)[k] = v
	}
	for k, v := range delta {
		switch {
		case strings.HasPrefix(k, AppPrefix):
			put(&d.App, strings.TrimPrefix(k, AppPrefix), v)
		case strings.HasPrefix(k, UserPrefix):
			put(&d.User, strings.TrimPrefix(k, UserPrefix), v)
		case strings.HasPrefix(k, TempPrefix):
		default:
			put(&d.Session, k, v)
		}
	}
	return d
}

// ScopedKeyOrder is the key-order hints of a state delta split by scope,
// as ScopedDelta splits the delta.
type ScopedKeyOrder struct {
	App, User, Session map[string]json.RawMessage
}

// SplitKeyOrder splits the hints of delta's values (by delta key) by
// scope, as SplitDelta splits delta.
func SplitKeyOrder(delta map[string]any, orders map[string]json.RawMessage) ScopedKeyOrder {
	var o ScopedKeyOrder
	for k, h := range orders {
		if _, ok := delta[k]; !ok || h == nil {
			continue
		}
		m := &o.Session
		switch {
		case strings.HasPrefix(k, AppPrefix):
			m, k = &o.App, strings.TrimPrefix(k, AppPrefix)
		case strings.HasPrefix(k, UserPrefix):
			m, k = &o.User, strings.TrimPrefix(k, UserPrefix)
		case strings.HasPrefix(k, TempPrefix):
			continue
		}
		if *m == nil {
			*m = map[string]json.RawMessage{}
		}
		(*m)[k] = h
	}
	return o
}

// MergeKeyOrder merges scoped hints as MergeState merges the state; nil
// when there are none.
func MergeKeyOrder(sessionOrder, appOrder, userOrder map[string]json.RawMessage) map[string]json.RawMessage {
	if len(sessionOrder)+len(appOrder)+len(userOrder) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(sessionOrder)+len(appOrder)+len(userOrder))
	maps.Copy(out, sessionOrder)
	for k, h := range appOrder {
		out[AppPrefix+k] = h
	}
	for k, h := range userOrder {
		out[UserPrefix+k] = h
	}
	return out
}

// MergeState builds the state a session shows: its own keys, then app and
// user keys under their prefixes (google-adk's _merge_state).
func MergeState(sessionState, appState, userState map[string]any) map[string]any {
	out := make(map[string]any, len(sessionState)+len(appState)+len(userState))
	for k, v := range sessionState {
		out[k] = DeepCopy(v)
	}
	for k, v := range appState {
		out[AppPrefix+k] = DeepCopy(v)
	}
	for k, v := range userState {
		out[UserPrefix+k] = DeepCopy(v)
	}
	return out
}

// DeepCopy copies JSON-like values (maps, slices and arrays of any element
// type, nested to any depth) so stored state is never aliased by a caller.
// Nil maps and slices stay nil (JSON null, not {} or []). Other values,
// pointers and structs included, are returned as they are.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case nil, string, bool, float64, int, int64:
		return v
	case map[string]any:
		if t == nil {
			return t
		}
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = DeepCopy(x)
		}
		return m
	case []any:
		if t == nil {
			return t
		}
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = DeepCopy(x)
		}
		return s
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return deepCopyValue(rv).Interface()
	}
	return v
}

// deepCopyValue copies maps, slices and arrays in v, recursively, keeping
// their types; nil maps and slices stay nil.
func deepCopyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopyValue(v.Elem()))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), deepCopyValue(it.Value()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopyValue(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(deepCopyValue(v.Index(i)))
		}
		return out
	}
	return v
}

// Errors a Service returns, wrapped with the session's identity.
var (
	ErrNotFound      = errors.New("session not found")
	ErrAlreadyExists = errors.New("session already exists")
	// ErrStale is google-adk's StaleSessionError.
	ErrStale = errors.New("the session has been modified in storage since it was loaded; please reload the session before appending more events")
)

// KeyError returns err wrapped with a session's identity.
func KeyError(appName, userID, id string, err error) error {
	return fmt.Errorf("session %q (app %q, user %q): %w", id, appName, userID, err)
}
