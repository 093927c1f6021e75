package session

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// State is the state view a callback or tool works through (google-adk's
// State): reads see the pending delta first, then the session; writes land in
// both, so later reads in the invocation see them and the event that carries
// the delta persists them.
//
// A State is used by one goroutine; the session beneath it is shared safely.
//
// Like google-adk 2.13, a write made in place into a map or slice that Get
// handed out (st.Get("cart") then cart["apples"] = 3) is found by comparing
// the container with a copy taken at the read; RecordNestedWrites puts such
// changed keys into the delta. The engine calls it before it turns the
// actions into an event, and Actions accessors of callback contexts do too.
type State struct {
	session *Session
	actions *EventActions
	// snapshots holds, by key, the container Get handed out and a deep copy
	// of it taken then.
	snapshots map[string]stateSnapshot
}

type stateSnapshot struct{ handed, copy any }

// NewState returns a view whose writes are recorded in actions.StateDelta.
func NewState(s *Session, actions *EventActions) *State {
	return &State{session: s, actions: actions}
}

// Get returns the value of key. A map or slice is the stored value itself,
// so writes into it are recorded (see RecordNestedWrites).
func (st *State) Get(key string) (any, bool) {
	v, ok := st.lookup(key)
	if ok && isContainer(v) {
		if _, tracked := st.snapshots[key]; !tracked {
			st.snapshot(key, v)
		}
	}
	return v, ok
}

func (st *State) lookup(key string) (any, bool) {
	if v, ok := st.actions.StateDelta[key]; ok {
		return v, true
	}
	if st.session == nil {
		return nil, false
	}
	return st.session.StateValue(key)
}

// snapshot keeps v beside a copy to compare it with later. A value whose
// copy differs from it (a NaN inside) could never read as unchanged, so it
// is left untracked, as google-adk does.
func (st *State) snapshot(key string, v any) {
	c := DeepCopy(v)
	if !reflect.DeepEqual(v, c) {
		delete(st.snapshots, key)
		return
	}
	if st.snapshots == nil {
		st.snapshots = map[string]stateSnapshot{}
	}
	st.snapshots[key] = stateSnapshot{handed: v, copy: c}
}

// RecordNestedWrites records in the delta every key whose map or slice,
// handed out by Get, has changed in place since (google-adk's
// State._record_nested_writes). A key assigned since the read keeps the
// assigned value.
func (st *State) RecordNestedWrites() {
	if st == nil || st.actions == nil {
		return
	}
	for key, snap := range st.snapshots {
		current, ok := st.lookup(key)
		if !ok || !sameContainer(current, snap.handed) {
			delete(st.snapshots, key)
			continue
		}
		if reflect.DeepEqual(current, snap.copy) {
			continue
		}
		if st.actions.StateDelta == nil {
			st.actions.StateDelta = map[string]any{}
		}
		st.actions.StateDelta[key] = current
		// Keys added in place go at the end, in Python, of a dict whose
		// order is known; the hint's key check sorts such a dict instead.
		order := st.keyOrder(key)
		if st.session != nil {
			st.session.setState(key, current, order)
		}
		st.snapshot(key, current)
	}
}

// isContainer reports whether v is a map or slice, which can change in
// place.
func isContainer(v any) bool {
	if v == nil {
		return false
	}
	k := reflect.TypeOf(v).Kind()
	return k == reflect.Map || k == reflect.Slice
}

// sameContainer reports whether a and b are the same map, or slices over
// the same elements (Python's identity check).
func sameContainer(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() || va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Map:
		return va.UnsafePointer() == vb.UnsafePointer()
	case reflect.Slice:
		return va.UnsafePointer() == vb.UnsafePointer() && va.Len() == vb.Len()
	}
	return false
}

// Set writes key. A nil value is stored as null, as google-adk does. The
// dicts of value print with sorted keys; SetOrdered keeps an order.
func (st *State) Set(key string, value any) { st.SetOrdered(key, value, nil) }

// SetOrdered writes key with the key-order hint of value (the JSON it was
// decoded from, or its skeleton; see model.Response.KeyOrder), so that
// its dicts print in that order where google-adk formats state into text
// (instruction templates), as Python keeps a dict's insertion order.
func (st *State) SetOrdered(key string, value any, order json.RawMessage) {
	order = keyorder.Of(order)
	if st.actions.StateDelta == nil {
		st.actions.StateDelta = map[string]any{}
	}
	st.actions.StateDelta[key] = value
	if order != nil {
		if st.actions.StateKeyOrder == nil {
			st.actions.StateKeyOrder = map[string]json.RawMessage{}
		}
		st.actions.StateKeyOrder[key] = order
	} else {
		delete(st.actions.StateKeyOrder, key)
	}
	if st.session != nil {
		st.session.setState(key, value, order)
	}
	delete(st.snapshots, key)
}

// KeyOrder returns the key-order hint of key's value: the pending one,
// else the session's; nil when none is known.
func (st *State) KeyOrder(key string) json.RawMessage { return st.keyOrder(key) }

func (st *State) keyOrder(key string) json.RawMessage {
	if _, ok := st.actions.StateDelta[key]; ok {
		return st.actions.StateKeyOrder[key]
	}
	if st.session == nil {
		return nil
	}
	return st.session.StateKeyOrder(key)
}

// Delta returns the pending changes. It must not be modified.
func (st *State) Delta() map[string]any { return st.actions.StateDelta }

// All returns the session state with the pending delta applied.
func (st *State) All() map[string]any {
	var out map[string]any
	if st.session != nil {
		out = st.session.State()
	} else {
		out = map[string]any{}
	}
	for k, v := range st.actions.StateDelta {
		out[k] = v
	}
	return out
}

// IsScoped reports whether key has one of the app:, user: or temp: prefixes.
func IsScoped(key string) bool {
	return strings.HasPrefix(key, AppPrefix) || strings.HasPrefix(key, UserPrefix) || strings.HasPrefix(key, TempPrefix)
}
