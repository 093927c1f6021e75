package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// MaxSearchResults is how many memories InMemoryService.Search returns at
// most (google-adk _MAX_SEARCH_RESULTS).
const MaxSearchResults = 10

// unknownSessionID scopes events added without a session id.
const unknownSessionID = "__unknown_session_id__"

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
	sessions map[string][]*record
	deleted  map[string]bool
}

// record is an ingested event: a private copy of what a search needs.
type record struct {
	id, author string
	time       time.Time
	content    []byte // the event's content as JSON, decoded per result
	words      map[string]struct{}
	textLower  string
}

// NewInMemoryService returns an empty in-memory memory service.
func NewInMemoryService() *InMemoryService {
	return &InMemoryService{users: map[userKey]*userMemories{}}
}

func (m *InMemoryService) user(k userKey) *userMemories {
	u := m.users[k]
	if u == nil {
		u = &userMemories{sessions: map[string][]*record{}, deleted: map[string]bool{}}
		m.users[k] = u
	}
	return u
}

func (u *userMemories) set(sessionID string, recs []*record) {
	if _, ok := u.sessions[sessionID]; !ok {
		u.order = append(u.order, sessionID)
	}
	u.sessions[sessionID] = recs
}

// newRecord copies an event with content parts; nil for one without.
func newRecord(e *session.Event) (*record, error) {
	if e == nil || e.Content == nil || len(e.Content.Parts) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(e.Content)
	if err != nil {
		return nil, fmt.Errorf("memory: encode content of event %s: %w", e.ID, err)
	}
	text := partsText(e.Content.Parts, " ")
	return &record{
		id: e.ID, author: e.Author, time: e.Timestamp, content: data,
		words: searchableWords(text), textLower: pyLower(normNFC(text)),
	}, nil
}

// AddSession implements Service: it replaces what the service holds for
// the session with its events that have content, minus deleted ids.
func (m *InMemoryService) AddSession(_ context.Context, s *session.Session) error {
	var recs []*record
	for _, e := range s.Events() {
		r, err := newRecord(e)
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
	recs = slices.DeleteFunc(recs, func(r *record) bool { return u.deleted[r.id] })
	u.set(s.ID, recs)
	return nil
}

// AddEvents implements Service: events with content are appended to the
// session's, skipping ids it already has or that were deleted.
// CustomMetadata is ignored.
func (m *InMemoryService) AddEvents(_ context.Context, req AddEventsRequest) error {
	var recs []*record
	for _, e := range req.Events {
		r, err := newRecord(e)
		if err != nil {
			return err
		}
		if r != nil {
			recs = append(recs, r)
		}
	}
	sid := req.SessionID
	if sid == "" {
		sid = unknownSessionID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.user(userKey{req.AppName, req.UserID})
	existing := slices.Clone(u.sessions[sid])
	have := map[string]bool{}
	for _, r := range existing {
		have[r.id] = true
	}
	for _, r := range recs {
		if !have[r.id] && !u.deleted[r.id] {
			existing = append(existing, r)
			have[r.id] = true
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
	queryWords := slices.Sorted(maps.Keys(wordsLower(query)))
	type scored struct {
		score int
		rec   *record
	}
	var hits []scored
	m.mu.RLock()
	if u := m.users[userKey{appName, userID}]; u != nil {
		for _, sid := range u.order {
			for _, r := range u.sessions[sid] {
				if len(r.words) == 0 {
					continue
				}
				n := 0
				for _, q := range queryWords {
					if _, ok := r.words[q]; ok || !isASCII(q) && strings.Contains(r.textLower, q) {
						n++
					}
				}
				if n > 0 {
					hits = append(hits, scored{n, r})
				}
			}
		}
	}
	m.mu.RUnlock()
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	resp := &SearchResponse{Memories: []Entry{}}
	for _, h := range hits[:min(len(hits), MaxSearchResults)] {
		c := new(genai.Content)
		if err := json.Unmarshal(h.rec.content, c); err != nil {
			return nil, fmt.Errorf("memory: decode content of event %s: %w", h.rec.id, err)
		}
		resp.Memories = append(resp.Memories, Entry{
			Content: c, CustomMetadata: map[string]any{}, ID: h.rec.id, Author: h.rec.author,
			Timestamp: FormatTimestamp(h.rec.time),
		})
	}
	return resp, nil
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
		kept := slices.DeleteFunc(slices.Clone(recs), func(r *record) bool { return r.id == memoryID })
		if len(kept) != len(recs) {
			u.sessions[sid] = kept
			u.deleted[memoryID] = true
		}
	}
	return nil
}

var _ Service = (*InMemoryService)(nil)
