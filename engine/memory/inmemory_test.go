package memory_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/memory/memorytest"
	"github.com/adkhost/adkhost/engine/session"
)

func TestInMemoryServiceConformance(t *testing.T) {
	memorytest.Run(t, func(*testing.T) memory.Service { return memory.NewInMemoryService() })
}

func ev(id, author, text string) *session.Event { return memorytest.Event(id, author, text, 0) }

// Twelve events match: the ten with the most query words come back, best
// first, ties in ingestion order (sessions in the order first added).
func TestSearchRanking(t *testing.T) {
	svc := memory.NewInMemoryService()
	ctx := t.Context()
	s1 := session.New("app", "u", "s1", nil, []*session.Event{
		ev("a", "user", "apple"), ev("b", "bot", "apple banana"),
		ev("c", "user", "banana cherry date"), ev("d", "bot", "ok apple"),
		ev("e", "user", "apple banana cherry date"), ev("f", "bot", "fine cherry"),
	}, time.Time{}, 0)
	s2 := session.New("app", "u", "s2", nil, []*session.Event{
		ev("g", "user", "date"), ev("h", "bot", "banana date"),
		ev("i", "user", "cherry apple"), ev("j", "bot", "sure date"),
		ev("k", "user", "apple cherry date"), ev("l", "bot", "noted banana"),
		ev("m", "bot", "nothing here"),
	}, time.Time{}, 0)
	for _, s := range []*session.Session{s1, s2} {
		if err := svc.AddSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// Re-adding s1 keeps its place before s2.
	if err := svc.AddSession(ctx, s1); err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Search(ctx, "app", "u", "Apple banana, cherry; DATE?")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range resp.Memories {
		got = append(got, m.ID)
	}
	want := []string{"e", "c", "k", "b", "h", "i", "a", "d", "f", "g"}
	if !slices.Equal(got, want) {
		t.Errorf("ranking = %v, want %v", got, want)
	}
	if len(resp.Memories) != memory.MaxSearchResults {
		t.Errorf("%d results, want %d", len(resp.Memories), memory.MaxSearchResults)
	}
}

// A non-ASCII query word also matches as a substring of the event's text;
// an ASCII one only as a whole word.
func TestSearchSubstringRule(t *testing.T) {
	svc := memory.NewInMemoryService()
	ctx := t.Context()
	s := session.New("app", "u", "s1", nil, []*session.Event{
		ev("jp", "user", "東京タワーとTokyoTower"),
		ev("fr", "user", "Un CAFE\u0301 noir"),
	}, time.Time{}, 0)
	if err := svc.AddSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{
		"東京":         {"jp"},
		"tower":      nil,
		"tokyotower": {"jp"},
		"Tokyo":      nil,
		"café":       {"fr"},
		"caf":        nil,
	} {
		resp, err := svc.Search(ctx, "app", "u", q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range resp.Memories {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Search(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestAddMemoriesNotSupported(t *testing.T) {
	err := memory.NewInMemoryService().AddMemories(t.Context(), "app", "u", []memory.Entry{{ID: "m"}}, nil)
	if !errors.Is(err, memory.ErrNotSupported) || err.Error() != memory.MsgAddMemoriesNotSupported {
		t.Errorf("AddMemories error = %v, want memory.ErrNotSupported with google-adk's message", err)
	}
}

func TestEntryText(t *testing.T) {
	e := memorytest.Event("x", "user", "hello", 0)
	e.Content.Parts = append(e.Content.Parts, nil, e.Content.Parts[0], &genai.Part{})
	m := memory.Entry{Content: e.Content}
	if got := m.Text(" "); got != "hello hello" {
		t.Errorf("Text = %q", got)
	}
	if got := (&memory.Entry{}).Text(" "); got != "" {
		t.Errorf("Text of an empty entry = %q", got)
	}
}
