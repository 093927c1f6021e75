// Package memorytest is a conformance suite for memory.Service
// implementations: ingestion of sessions and event deltas, the app/user
// scope, deletion that survives re-ingestion, copies in and out, the
// fields of a found memory, and concurrent use (google-adk's memory
// services). Ranking is the implementation's own and is not tested here,
// except that a memory sharing a word with the query is found.
//
// The suite uses only the public API, so any implementation can run it:
//
//	func TestConformance(t *testing.T) {
//		memorytest.Run(t, func(t *testing.T) memory.Service { return newMyService(t) })
//	}
package memorytest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

// Run runs the conformance suite as subtests of t. newService is called once
// per subtest and must return a new, empty service; it may register cleanup
// with t.Cleanup.
func Run(t *testing.T, newService func(t *testing.T) memory.Service) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, svc memory.Service)
	}{
		{"AddSession/Search", testAddSessionSearch},
		{"AddSession/SkipsEventsWithoutParts", testSkipsEmpty},
		{"AddSession/Replaces", testReaddReplaces},
		{"Scope", testScope},
		{"AddEvents/Delta", testAddEventsDelta},
		{"Delete", testDelete},
		{"Copies", testCopies},
		{"AddMemories", testAddMemories},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newService(t)) })
	}
}

var base = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// Event returns an event with a text content (none for an empty text) at
// base plus sec seconds.
func Event(id, author, text string, sec int) *session.Event {
	e := &session.Event{ID: id, InvocationID: "e-1", Author: author, Timestamp: base.Add(time.Duration(sec) * time.Second)}
	if text != "" {
		role := "model"
		if author == "user" {
			role = "user"
		}
		e.Content = &genai.Content{Role: role, Parts: []*genai.Part{{Text: text}}}
	}
	return e
}

func sess(app, user, id string, events ...*session.Event) *session.Session {
	return session.New(app, user, id, nil, events, base, 0)
}

func add(t *testing.T, svc memory.Service, s *session.Session) {
	t.Helper()
	if err := svc.AddSession(t.Context(), s); err != nil {
		t.Fatalf("AddSession(%s): %v", s.ID, err)
	}
}

func search(t *testing.T, svc memory.Service, app, user, query string) []memory.Entry {
	t.Helper()
	resp, err := svc.Search(t.Context(), app, user, query)
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	if resp == nil {
		t.Fatalf("Search(%q): nil response", query)
	}
	return resp.Memories
}

func ids(ms []memory.Entry) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	slices.Sort(out)
	return out
}

func wantIDs(t *testing.T, what string, got []memory.Entry, want ...string) {
	t.Helper()
	slices.Sort(want)
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("%s: found %v, want %v", what, g, want)
	}
}

func testAddSessionSearch(t *testing.T, svc memory.Service) {
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "My cat is called Tom", 1), Event("e2", "bot", "Nice name", 2)))
	got := search(t, svc, "app", "u", "what is my CAT called")
	wantIDs(t, "search", got, "e1")
	if len(got) != 1 {
		return
	}
	m := got[0]
	if m.Author != "user" || m.Content == nil || len(m.Content.Parts) != 1 || m.Content.Parts[0].Text != "My cat is called Tom" || m.Content.Role != "user" {
		t.Errorf("memory = %+v, want the event's author and content", m)
	}
	if want := memory.FormatTimestamp(base.Add(time.Second)); m.Timestamp != want {
		t.Errorf("timestamp = %q, want %q", m.Timestamp, want)
	}
	wantIDs(t, "no shared word", search(t, svc, "app", "u", "dog"))
}

func testSkipsEmpty(t *testing.T, svc memory.Service) {
	empty := Event("e2", "bot", "", 2)
	empty.Content = &genai.Content{Role: "model"}
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "apple", 1), empty, Event("e3", "bot", "", 3), Event("e4", "bot", "apple pie", 4)))
	wantIDs(t, "search", search(t, svc, "app", "u", "apple"), "e1", "e4")
}

func testReaddReplaces(t *testing.T, svc memory.Service) {
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "apple", 1)))
	add(t, svc, sess("app", "u", "s1", Event("e2", "user", "apple tart", 2)))
	wantIDs(t, "after re-adding s1", search(t, svc, "app", "u", "apple"), "e2")
	add(t, svc, sess("app", "u", "s2", Event("e3", "user", "apple juice", 3)))
	wantIDs(t, "two sessions", search(t, svc, "app", "u", "apple"), "e2", "e3")
}

func testScope(t *testing.T, svc memory.Service) {
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "apple", 1)))
	add(t, svc, sess("app", "v", "s1", Event("e2", "user", "apple", 2)))
	add(t, svc, sess("other", "u", "s1", Event("e3", "user", "apple", 3)))
	wantIDs(t, "app/u", search(t, svc, "app", "u", "apple"), "e1")
	wantIDs(t, "app/v", search(t, svc, "app", "v", "apple"), "e2")
	wantIDs(t, "other/u", search(t, svc, "other", "u", "apple"), "e3")
	wantIDs(t, "unknown user", search(t, svc, "app", "nobody", "apple"))
}

func testAddEventsDelta(t *testing.T, svc memory.Service) {
	err := svc.AddEvents(t.Context(), memory.AddEventsRequest{AppName: "app", UserID: "u", SessionID: "s1", Events: []*session.Event{Event("e1", "user", "apple", 1)}})
	if errors.Is(err, memory.ErrNotSupported) {
		t.Skip("AddEvents not supported")
	}
	if err != nil {
		t.Fatal(err)
	}
	// A delta adds to what is there, and an id already there is not
	// added twice.
	req := memory.AddEventsRequest{AppName: "app", UserID: "u", SessionID: "s1", Events: []*session.Event{Event("e1", "user", "apple", 1), Event("e2", "bot", "apple pie", 2), Event("e3", "bot", "", 3)}}
	if err := svc.AddEvents(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	got := search(t, svc, "app", "u", "apple")
	wantIDs(t, "after deltas", got, "e1", "e2")
	// Without a session id.
	if err := svc.AddEvents(t.Context(), memory.AddEventsRequest{AppName: "app", UserID: "u", Events: []*session.Event{Event("e4", "user", "apple cake", 4)}, CustomMetadata: map[string]any{"ttl": "1d"}}); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "no session id", search(t, svc, "app", "u", "apple"), "e1", "e2", "e4")
}

func testDelete(t *testing.T, svc memory.Service) {
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "apple", 1), Event("e2", "bot", "apple pie", 2)))
	err := svc.Delete(t.Context(), "app", "u", "e1")
	if errors.Is(err, memory.ErrNotSupported) {
		t.Skip("Delete not supported")
	}
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "after delete", search(t, svc, "app", "u", "apple"), "e2")
	// A deleted id is never ingested again.
	add(t, svc, sess("app", "u", "s1", Event("e1", "user", "apple", 1), Event("e2", "bot", "apple pie", 2)))
	wantIDs(t, "re-added session", search(t, svc, "app", "u", "apple"), "e2")
	if err := svc.AddEvents(t.Context(), memory.AddEventsRequest{AppName: "app", UserID: "u", SessionID: "s2", Events: []*session.Event{Event("e1", "user", "apple", 1)}}); err != nil && !errors.Is(err, memory.ErrNotSupported) {
		t.Fatal(err)
	}
	wantIDs(t, "re-added event", search(t, svc, "app", "u", "apple"), "e2")
	// Missing ids, empty ids and other users are no error.
	for _, id := range []string{"", "missing"} {
		if err := svc.Delete(t.Context(), "app", "u", id); err != nil {
			t.Errorf("Delete(%q): %v", id, err)
		}
	}
	if err := svc.Delete(t.Context(), "app", "nobody", "e2"); err != nil {
		t.Errorf("Delete for another user: %v", err)
	}
	wantIDs(t, "after no-op deletes", search(t, svc, "app", "u", "apple"), "e2")
}

func testCopies(t *testing.T, svc memory.Service) {
	e := Event("e1", "user", "apple", 1)
	add(t, svc, sess("app", "u", "s1", e))
	e.Content.Parts[0].Text = "banana"
	got := search(t, svc, "app", "u", "apple")
	if len(got) != 1 || got[0].Content.Parts[0].Text != "apple" {
		t.Fatalf("after changing the added event: %+v, want the text as added", got)
	}
	got[0].Content.Parts[0].Text = "cherry"
	got = search(t, svc, "app", "u", "apple")
	if len(got) != 1 || got[0].Content.Parts[0].Text != "apple" {
		t.Fatalf("after changing a found memory: %+v, want the text as added", got)
	}
}

func testAddMemories(t *testing.T, svc memory.Service) {
	m := memory.Entry{ID: "m1", Author: "user", Content: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "apple"}}}}
	err := svc.AddMemories(t.Context(), "app", "u", []memory.Entry{m}, nil)
	if errors.Is(err, memory.ErrNotSupported) {
		var nse *memory.NotSupportedError
		if !errors.As(err, &nse) || nse.Error() == "" {
			t.Errorf("not supported error %v is not a *memory.NotSupportedError with a message", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got := search(t, svc, "app", "u", "apple")
	if len(got) != 1 || got[0].Content.Parts[0].Text != "apple" {
		t.Errorf("search after AddMemories: %+v", got)
	}
}

func testConcurrent(t *testing.T, svc memory.Service) {
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			if err := svc.AddSession(t.Context(), sess("app", "u", id, Event(id+"-e", "user", "apple "+id, i))); err != nil {
				t.Error(err)
			}
			if _, err := svc.Search(t.Context(), "app", "u", "apple"); err != nil {
				t.Error(err)
			}
			if err := svc.Delete(t.Context(), "app", "u", "none"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Every session is there: each matches its own word.
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		wantIDs(t, id, search(t, svc, "app", "u", id), id+"-e")
	}
}
