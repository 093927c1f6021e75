package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/adkhost/adkhost/engine/session"
)

// UnknownSessionID scopes events added without a session id
// (google-adk's, for AddEvents).
const UnknownSessionID = "__unknown_session_id__"

// InMemoryService is a Service in process memory with google-adk
// InMemoryMemoryService's keyword search: an event matches a query by the
// number of query words it contains, and a search returns the
// MaxSearchResults best, equal scores in ingestion order. It keeps copies
// of the events it ingests; an id once deleted is never ingested again. It
// does not support AddMemories. Meant for tests and development.
type InMemoryService struct {
	mu    sync.RWMutex
	users map[userKey]*userMemories
}

type userKey struct{ app, user string }

// userMemories are one user's events by session, sessions in the order
// they were first added (google-adk iterates a dict).
type userMemories struct {
	order    []string
	sessions map[string][]*Record
	deleted  map[string]bool
}

// NewInMemoryService returns an empty in-memory memory service.
func NewInMemoryService() *InMemoryService {
	return &InMemoryService{users: map[userKey]*userMemories{}}
}

func (m *InMemoryService) user(k userKey) *userMemories {
	u := m.users[k]
	if u == nil {
		u = &userMemories{sessions: map[string][]*Record{}, deleted: map[string]bool{}}
		m.users[k] = u
	}
	return u
}

func (u *userMemories) set(sessionID string, recs []*Record) {
	if _, ok := u.sessions[sessionID]; !ok {
		u.order = append(u.order, sessionID)
	}
	u.sessions[sessionID] = recs
}

// AddSession implements Service: it replaces what the service holds for
// the session with its events that have content, minus deleted ids.
func (m *InMemoryService) AddSession(_ context.Context, s *session.Session) error {
	var recs []*Record
	for _, e := range s.Events() {
		r, err := NewRecord(e)
		if err != nil {
			return err
		}
		if r != nil {
			recs = append(recs, r)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.user(userKey{s.AppName, s.UserID})
	recs = slices.DeleteFunc(recs, func(r *Record) bool { return u.deleted[r.ID] })
	u.set(s.ID, recs)
	return nil
}

// AddEvents implements Service: events with content are appended to the
// session's, skipping ids it already has or that were deleted.
// CustomMetadata is ignored.
func (m *InMemoryService) AddEvents(_ context.Context, req AddEventsRequest) error {
	var recs []*Record
	for _, e := range req.Events {
		r, err := NewRecord(e)
		if err != nil {
			return err
		}
		if r != nil {
			recs = append(recs, r)
		}
	}
	sid := req.SessionID
	if sid == "" {
		sid = UnknownSessionID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.user(userKey{req.AppName, req.UserID})
	existing := slices.Clone(u.sessions[sid])
	have := map[string]bool{}
	for _, r := range existing {
		have[r.ID] = true
	}
	for _, r := range recs {
		if !have[r.ID] && !u.deleted[r.ID] {
			existing = append(existing, r)
			have[r.ID] = true
		}
	}
	u.set(sid, existing)
	return nil
}

// AddMemories implements Service; the in-memory service does not support
// direct writes (google-adk's neither).
func (m *InMemoryService) AddMemories(context.Context, string, string, []Entry, map[string]any) error {
	return &NotSupportedError{Op: "AddMemories", Message: MsgAddMemoriesNotSupported}
}

// Search implements Service.
func (m *InMemoryService) Search(_ context.Context, appName, userID, query string) (*SearchResponse, error) {
	m.mu.RLock()
	var hits []*Record
	if u := m.users[userKey{appName, userID}]; u != nil {
		hits = Rank(query, func(yield func(*Record) bool) {
			for _, sid := range u.order {
				for _, r := range u.sessions[sid] {
					if !yield(r) {
						return
					}
				}
			}
		})
	}
	m.mu.RUnlock()
	// Records are never changed once made: decode them unlocked.
	return Response(hits)
}

// Delete implements Service: the event leaves every session of the user
// that holds it, and its id is never ingested again.
func (m *InMemoryService) Delete(_ context.Context, appName, userID, memoryID string) error {
	if memoryID == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.users[userKey{appName, userID}]
	if u == nil {
		return nil
	}
	for sid, recs := range u.sessions {
		kept := slices.DeleteFunc(slices.Clone(recs), func(r *Record) bool { return r.ID == memoryID })
		if len(kept) != len(recs) {
			u.sessions[sid] = kept
			u.deleted[memoryID] = true
		}
	}
	return nil
}

var _ Service = (*InMemoryService)(nil)
