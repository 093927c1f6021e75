// Package memory recalls what a user said in earlier sessions (google-adk's
// memory service): sessions or event deltas are ingested per app and user,
// and a search returns the memories that best match a query. The built-in
// load_memory and preload_memory tools of package engine read it through
// the callback context.
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// Entry is one memory (google-adk MemoryEntry). Its JSON is google-adk's
// model_dump of it: snake_case keys, unset optional fields left out.
type Entry struct {
	// Content is the remembered content, e.g. an event's.
	Content *genai.Content `json:"content"`
	// CustomMetadata is free-form data about the memory.
	CustomMetadata map[string]any `json:"custom_metadata"`
	// ID identifies the memory for Delete; for ingested events it is the
	// event's id.
	ID string `json:"id,omitempty"`
	// Author is who said it ("user" or an agent name).
	Author string `json:"author,omitempty"`
	// Timestamp is when the content was said, as text the model reads
	// (google-adk formats it with datetime.isoformat, see FormatTimestamp).
	Timestamp string `json:"timestamp,omitempty"`
}

// SearchResponse is the result of Service.Search (google-adk
// SearchMemoryResponse).
type SearchResponse struct {
	Memories []Entry `json:"memories"`
}

// AddEventsRequest is an incremental update for Service.AddEvents.
type AddEventsRequest struct {
	AppName, UserID string
	// SessionID scopes the events; "" when the caller has none.
	SessionID string
	// Events are a delta, not a whole session.
	Events []*session.Event
	// CustomMetadata is implementation-defined; services ignore keys they
	// do not know.
	CustomMetadata map[string]any
}

// Service stores memories. Implementations are safe for concurrent use and
// must pass the suite in package memorytest. An operation a service does
// not offer returns an error matching ErrNotSupported.
type Service interface {
	// AddSession ingests a session's events. A session may be added many
	// times; each time replaces what the service took from it before.
	AddSession(ctx context.Context, s *session.Session) error
	// AddEvents ingests a delta of events without assuming it is a whole
	// session.
	AddEvents(ctx context.Context, req AddEventsRequest) error
	// AddMemories writes entries directly.
	AddMemories(ctx context.Context, appName, userID string, memories []Entry, customMetadata map[string]any) error
	// Search returns the user's memories that match query, best first.
	Search(ctx context.Context, appName, userID, query string) (*SearchResponse, error)
	// Delete removes one memory by its Entry.ID; a memory that is not
	// there, or an empty id, is not an error.
	Delete(ctx context.Context, appName, userID, memoryID string) error
}

// ErrNotSupported is matched (errors.Is) by the error of an operation a
// service does not offer.
var ErrNotSupported = errors.New("memory operation not supported")

// NotSupportedError is the error of an operation a service does not offer:
// google-adk's NotImplementedError, with its message. It matches
// ErrNotSupported.
type NotSupportedError struct {
	// Op is the Service method, e.g. "AddMemories".
	Op string
	// Message is what google-adk says for it.
	Message string
}

func (e *NotSupportedError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("memory service does not support %s", e.Op)
}

// Is makes errors.Is(err, ErrNotSupported) true.
func (e *NotSupportedError) Is(target error) bool { return target == ErrNotSupported }

// ErrorCode names google-adk's exception in an error event.
func (e *NotSupportedError) ErrorCode() string { return "NotImplementedError" }

// google-adk BaseMemoryService's messages for the operations a service may
// leave out, for implementations to return in a NotSupportedError.
const (
	MsgAddEventsNotSupported   = "This memory service does not support adding event deltas. Call add_session_to_memory(session) to ingest the full session."
	MsgAddMemoriesNotSupported = "This memory service does not support direct memory writes. Call add_events_to_memory(...) or add_session_to_memory(session) instead."
	MsgDeleteNotSupported      = "This memory service does not support deleting individual memories."
)

// FormatTimestamp formats an event time as google-adk does for a memory
// (datetime.fromtimestamp(ts).isoformat()): local wall time, seconds, and
// a six-digit fraction only when the microseconds are not zero. Times are
// taken at microsecond resolution, as sessions store them.
func FormatTimestamp(t time.Time) string { return formatTimestamp(t, time.Local) }

func formatTimestamp(t time.Time, loc *time.Location) string {
	var us int64
	if !t.IsZero() {
		us = t.UnixMicro()
	}
	lt := time.UnixMicro(us).In(loc)
	s := lt.Format("2006-01-02T15:04:05")
	if frac := lt.Nanosecond() / 1000; frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	return s
}

// Text joins the texts of an entry's parts with sep, skipping parts
// without text (google-adk _memory_entry_utils.extract_text).
func (e *Entry) Text(sep string) string {
	if e.Content == nil {
		return ""
	}
	return partsText(e.Content.Parts, sep)
}

// partsText joins the non-empty texts of parts with sep.
func partsText(parts []*genai.Part, sep string) string {
	var texts []string
	for _, p := range parts {
		if p != nil && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}
