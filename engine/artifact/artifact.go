// Package artifact stores named, versioned binary or text parts per session,
// and per user for names with the "user:" prefix (google-adk's artifact
// service). Versions count from 0.
package artifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

// Service stores artifacts. Implementations are safe for concurrent use and
// must pass the suite in package artifacttest.
type Service interface {
	// Save stores a copy of part as the next version of k and returns that
	// version. A nil part is an error.
	Save(ctx context.Context, k Key, part *genai.Part) (int, error)
	// Load returns a version of k (Latest for the newest) as a part the
	// caller owns, or an error wrapping ErrNotFound.
	Load(ctx context.Context, k Key, version int) (*genai.Part, error)
	// List returns the names visible to a session, sorted: its own and the
	// user's "user:" names.
	List(ctx context.Context, appName, userID, sessionID string) ([]string, error)
	// Versions returns the versions of k in ascending order; none (and no
	// error) for a missing artifact.
	Versions(ctx context.Context, k Key) ([]int, error)
	// Delete removes every version of k; the next Save starts again at 0.
	// Deleting a missing artifact is not an error.
	Delete(ctx context.Context, k Key) error
}

// IsUserScoped reports whether name is shared across the user's sessions.
func IsUserScoped(name string) bool { return strings.HasPrefix(name, "user:") }

// encodePart is how the in-memory service keeps a part: its JSON encoding
// (genai's wire format). A nil part is an error.
func encodePart(k Key, part *genai.Part) ([]byte, error) {
	if part == nil {
		return nil, fmt.Errorf("artifact %q: nil part", k.Name)
	}
	data, err := json.Marshal(part)
	if err != nil {
		return nil, fmt.Errorf("artifact %q: encode part: %w", k.Name, err)
	}
	return data, nil
}

// decodePart decodes a part encodePart encoded into a new Part.
func decodePart(k Key, data []byte) (*genai.Part, error) {
	part := new(genai.Part)
	if err := json.Unmarshal(data, part); err != nil {
		return nil, fmt.Errorf("artifact %q: decode part: %w", k.Name, err)
	}
	return part, nil
}

// RewindTombstone returns the part a session rewind saves as the newest
// version of an artifact that did not exist at the rewind point: its older
// versions stay, so it cannot be deleted. Every Service loads a version
// holding it as absent (google-adk's rewind tombstone, an empty
// application/octet-stream payload; an artifact saved with exactly that
// content loads as absent too).
func RewindTombstone() *genai.Part {
	return &genai.Part{InlineData: &genai.Blob{MIMEType: "application/octet-stream", Data: []byte{}}}
}

// IsAbsent reports whether a stored part stands for no artifact: the rewind
// tombstone or an empty part. Services return ErrNotFound for such a
// version.
func IsAbsent(p *genai.Part) bool {
	if p == nil {
		return true
	}
	rest := *p
	rest.InlineData = nil
	if !reflect.DeepEqual(rest, genai.Part{}) {
		return false
	}
	b := p.InlineData
	return b == nil || b.MIMEType == "application/octet-stream" && len(b.Data) == 0 && b.DisplayName == ""
}

// InMemoryService is a Service in process memory. It keeps each version as
// its JSON encoding, so a saved part is copied in and a loaded one is a
// fresh copy, as google-adk's in-memory service deep-copies them.
type InMemoryService struct {
	mu    sync.Mutex
	parts map[Key][][]byte
}

// NewInMemoryService returns an empty in-memory artifact service.
func NewInMemoryService() *InMemoryService {
	return &InMemoryService{parts: map[Key][][]byte{}}
}

func norm(k Key) Key {
	if IsUserScoped(k.Name) {
		k.SessionID = ""
	}
	return k
}

// Save implements Service.
func (m *InMemoryService) Save(_ context.Context, k Key, part *genai.Part) (int, error) {
	data, err := encodePart(k, part)
	if err != nil {
		return 0, err
	}
	k = norm(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[k] = append(m.parts[k], data)
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
	part, err := decodePart(k, vs[version])
	if err != nil {
		return nil, err
	}
	if IsAbsent(part) {
		return nil, fmt.Errorf("artifact %q version %d: %w", k.Name, version, ErrNotFound)
	}
	return part, nil
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
