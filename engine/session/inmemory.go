package session

import (
	"cmp"
	"context"
	"encoding/json"

	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// InMemoryService is a Service that keeps everything in process memory. It
// is safe for concurrent use; nothing survives the process.
type InMemoryService struct {
	mu       sync.Mutex
	sessions map[sessionKey]*storedSession
	app      map[string]map[string]any
	user     map[[2]string]map[string]any
	// appOrder and userOrder: the key-order hints of app and user values.
	appOrder  map[string]map[string]json.RawMessage
	userOrder map[[2]string]map[string]json.RawMessage
	// revision is the last revision handed out. It is service-wide, not
	// per session, so a session deleted and created again under the same id
	// never repeats a revision a copy of the old one still carries.
	revision uint64
}

type sessionKey struct{ app, user, id string }

type storedSession struct {
	state      map[string]any
	order      map[string]json.RawMessage
	events     []*Event
	lastUpdate time.Time
	revision   uint64
}

// NewInMemoryService returns an empty in-memory session service.
func NewInMemoryService() *InMemoryService {
	return &InMemoryService{
		sessions:  map[sessionKey]*storedSession{},
		app:       map[string]map[string]any{},
		user:      map[[2]string]map[string]any{},
		appOrder:  map[string]map[string]json.RawMessage{},
		userOrder: map[[2]string]map[string]json.RawMessage{},
	}
}

// Create implements Service.
func (m *InMemoryService) Create(_ context.Context, req *CreateRequest) (*Session, error) {
	id := req.SessionID
	if id == "" {
		id = uuid.NewString()
	}
	k := sessionKey{req.AppName, req.UserID, id}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[k]; ok {
		return nil, KeyError(k.app, k.user, k.id, ErrAlreadyExists)
	}
	d := SplitDelta(req.State)
	o := SplitKeyOrder(req.State, req.StateKeyOrder)
	m.revision++
	st := &storedSession{state: map[string]any{}, order: map[string]json.RawMessage{}, lastUpdate: time.Now(), revision: m.revision}
	mergeInto(st.state, d.Session)
	mergeOrder(st.order, d.Session, o.Session)
	m.applyShared(k, d, o)
	m.sessions[k] = st
	return m.view(k, st, nil), nil
}

// Get implements Service.
func (m *InMemoryService) Get(_ context.Context, req *GetRequest) (*Session, error) {
	k := sessionKey{req.AppName, req.UserID, req.SessionID}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.sessions[k]
	if !ok {
		return nil, KeyError(k.app, k.user, k.id, ErrNotFound)
	}
	// No copy: the session never writes the slice (see New), and
	// AppendEvent only appends past the lengths handed out.
	events := FilterEvents(st.events, req.NumRecentEvents, req.After)
	return m.view(k, st, events), nil
}

// List implements Service.
func (m *InMemoryService) List(_ context.Context, req *ListRequest) ([]*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Session
	for k, st := range m.sessions {
		if k.app != req.AppName || (req.UserID != "" && k.user != req.UserID) {
			continue
		}
		out = append(out, m.view(k, st, nil))
	}
	slices.SortFunc(out, func(a, b *Session) int {
		return cmp.Or(a.lastUpdate.Compare(b.lastUpdate), cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Delete implements Service.
func (m *InMemoryService) Delete(_ context.Context, req *DeleteRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, sessionKey{req.AppName, req.UserID, req.SessionID})
	return nil
}

// AppendEvent implements Service.
func (m *InMemoryService) AppendEvent(_ context.Context, s *Session, e *Event) error {
	if e.Partial {
		return nil
	}
	k := sessionKey{s.AppName, s.UserID, s.ID}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.sessions[k]
	if !ok {
		return KeyError(k.app, k.user, k.id, ErrNotFound)
	}
	if s.Revision() != st.revision {
		return KeyError(k.app, k.user, k.id, ErrStale)
	}
	if e.ID == "" {
		e.ID = NewEventID()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now()
	}
	temp := TrimTempDelta(e)
	d := SplitDelta(e.Actions.StateDelta)
	o := SplitKeyOrder(e.Actions.StateDelta, e.Actions.StateKeyOrder)
	mergeInto(st.state, d.Session)
	mergeOrder(st.order, d.Session, o.Session)
	m.applyShared(k, d, o)
	st.events = append(st.events, e)
	st.lastUpdate = e.Timestamp
	m.revision++
	st.revision = m.revision
	s.Commit(e, temp, st.revision)
	return nil
}

func (m *InMemoryService) applyShared(k sessionKey, d ScopedDelta, o ScopedKeyOrder) {
	if len(d.App) > 0 {
		if m.app[k.app] == nil {
			m.app[k.app] = map[string]any{}
			m.appOrder[k.app] = map[string]json.RawMessage{}
		}
		mergeInto(m.app[k.app], d.App)
		mergeOrder(m.appOrder[k.app], d.App, o.App)
	}
	if len(d.User) > 0 {
		uk := [2]string{k.app, k.user}
		if m.user[uk] == nil {
			m.user[uk] = map[string]any{}
			m.userOrder[uk] = map[string]json.RawMessage{}
		}
		mergeInto(m.user[uk], d.User)
		mergeOrder(m.userOrder[uk], d.User, o.User)
	}
}

func (m *InMemoryService) view(k sessionKey, st *storedSession, events []*Event) *Session {
	uk := [2]string{k.app, k.user}
	state := MergeState(st.state, m.app[k.app], m.user[uk])
	s := New(k.app, k.user, k.id, state, events, st.lastUpdate, st.revision)
	s.SetStateKeyOrder(MergeKeyOrder(st.order, m.appOrder[k.app], m.userOrder[uk]))
	return s
}

// mergeOrder sets the hints of the keys of delta in dst: a key written
// without one loses its old hint.
func mergeOrder(dst map[string]json.RawMessage, delta map[string]any, orders map[string]json.RawMessage) {
	for k := range delta {
		if h, ok := orders[k]; ok {
			dst[k] = h
		} else {
			delete(dst, k)
		}
	}
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		dst[k] = DeepCopy(v)
	}
}

var _ Service = (*InMemoryService)(nil)
