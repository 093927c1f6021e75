package session

import "strings"

// State is the state view a callback or tool works through (google-adk's
// State): reads see the pending delta first, then the session; writes land in
// both, so later reads in the invocation see them and the event that carries
// the delta persists them.
//
// A State is used by one goroutine; the session beneath it is shared safely.
type State struct {
	session *Session
	actions *EventActions
}

// NewState returns a view whose writes are recorded in actions.StateDelta.
func NewState(s *Session, actions *EventActions) *State {
	return &State{session: s, actions: actions}
}

// Get returns the value of key.
func (st *State) Get(key string) (any, bool) {
	if v, ok := st.actions.StateDelta[key]; ok {
		return v, true
	}
	if st.session == nil {
		return nil, false
	}
	return st.session.StateValue(key)
}

// Set writes key. A nil value is stored as null, as google-adk does.
func (st *State) Set(key string, value any) {
	if st.actions.StateDelta == nil {
		st.actions.StateDelta = map[string]any{}
	}
	st.actions.StateDelta[key] = value
	if st.session != nil {
		st.session.setState(key, value)
	}
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
