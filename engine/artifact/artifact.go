// Package artifact stores named, versioned binary or text parts per session,
// and per user for names with the "user:" prefix (google-adk's artifact
// service). Versions count from 0.
package artifact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// Latest asks Load for the newest version.
const Latest = -1

// ErrNotFound is returned, wrapped, for a missing artifact or version.
var ErrNotFound = errors.New("artifact not found")

// Key names an artifact. Names starting with "user:" belong to the user and
// are shared by all of the user's sessions; SessionID is ignored for them.
type Key struct {
	AppName, UserID, SessionID, Name string
}

// Service stores artifacts. Implementations are safe for concurrent use.
type Service interface {
	// Save stores part as the next version of k and returns that version.
	Save(ctx context.Context, k Key, part *genai.Part) (int, error)
	// Load returns a version of k (Latest for the newest).
	Load(ctx context.Context, k Key, version int) (*genai.Part, error)
	// List returns the names visible to a session, sorted.
	List(ctx context.Context, appName, userID, sessionID string) ([]string, error)
	// Versions returns the versions of k in ascending order.
	Versions(ctx context.Context, k Key) ([]int, error)
	// Delete removes every version of k.
	Delete(ctx context.Context, k Key) error
}

// IsUserScoped reports whether name is shared across the user's sessions.
func IsUserScoped(name string) bool { return strings.HasPrefix(name, "user:") }

// InMemoryService is a Service in process memory.
type InMemoryService struct {
	mu    sync.Mutex
	parts map[Key][]*genai.Part
}

// NewInMemoryService returns an empty in-memory artifact service.
func NewInMemoryService() *InMemoryService {
	return &InMemoryService{parts: map[Key][]*genai.Part{}}
}

func norm(k Key) Key {
	if IsUserScoped(k.Name) {
		k.SessionID = ""
	}
	return k
}

// Save implements Service.
func (m *InMemoryService) Save(_ context.Context, k Key, part *genai.Part) (int, error) {
	if part == nil {
		return 0, fmt.Errorf("artifact %q: nil part", k.Name)
	}
	k = norm(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[k] = append(m.parts[k], part)
	return len(m.parts[k]) - 1, nil
}

// Load implements Service.
func (m *InMemoryService) Load(_ context.Context, k Key, version int) (*genai.Part, error) {
	k = norm(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.parts[k]
	if version == Latest {
		version = len(vs) - 1
	}
	if version < 0 || version >= len(vs) {
		return nil, fmt.Errorf("artifact %q version %d: %w", k.Name, version, ErrNotFound)
	}
	return vs[version], nil
}

// List implements Service.
func (m *InMemoryService) List(_ context.Context, appName, userID, sessionID string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for k := range m.parts {
		if k.AppName == appName && k.UserID == userID && (k.SessionID == sessionID || k.SessionID == "" && IsUserScoped(k.Name)) {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// Versions implements Service.
func (m *InMemoryService) Versions(_ context.Context, k Key) ([]int, error) {
	k = norm(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int, len(m.parts[k]))
	for i := range out {
		out[i] = i
	}
	return out, nil
}

// Delete implements Service.
func (m *InMemoryService) Delete(_ context.Context, k Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parts, norm(k))
	return nil
}
