package bolt_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/memory/memorytest"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

func TestMemoryServiceConformance(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Service { return open(t).Memory() })
}

func memEvent(id, author, text string) *session.Event { return memorytest.Event(id, author, text, 0) }

func searchIDs(t *testing.T, svc memory.Service, app, user, query string) []string {
	t.Helper()
	resp, err := svc.Search(t.Context(), app, user, query)
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	var got []string
	for _, m := range resp.Memories {
		got = append(got, m.ID)
	}
	return got
}

// rankingSessions are memory's TestSearchRanking sessions: twelve events
// match its query, with ties across and within sessions.
func rankingSessions() (s1, s2 *session.Session) {
	s1 = session.New("app", "u", "s1", nil, []*session.Event{
		memEvent("a", "user", "apple"), memEvent("b", "bot", "apple banana"),
		memEvent("c", "user", "banana cherry date"), memEvent("d", "bot", "ok apple"),
		memEvent("e", "user", "apple banana cherry date"), memEvent("f", "bot", "fine cherry"),
	}, time.Time{}, 0)
	s2 = session.New("app", "u", "s2", nil, []*session.Event{
		memEvent("g", "user", "date"), memEvent("h", "bot", "banana date"),
		memEvent("i", "user", "cherry apple"), memEvent("j", "bot", "sure date"),
		memEvent("k", "user", "apple cherry date"), memEvent("l", "bot", "noted banana"),
		memEvent("m", "bot", "nothing here"),
	}, time.Time{}, 0)
	return s1, s2
}

const rankingQuery = "Apple banana, cherry; DATE?"

// The store ranks exactly as memory.InMemoryService: the same ids in the
// same order, for the ranking case and for non-ASCII words.
func TestMemorySearchLikeInMemory(t *testing.T) {
	db := open(t)
	s1, s2 := rankingSessions()
	jp := session.New("app", "u", "s3", nil, []*session.Event{
		memEvent("jp", "user", "東京タワーとTokyoTower"), memEvent("fr", "user", "Un CAFE\u0301 noir"),
	}, time.Time{}, 0)
	svcs := []memory.Service{memory.NewInMemoryService(), db.Memory()}
	for _, svc := range svcs {
		// Re-adding s1 keeps its place before s2.
		for _, s := range []*session.Session{s1, s2, s1, jp} {
			if err := svc.AddSession(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"e", "c", "k", "b", "h", "i", "a", "d", "f", "g"}
	if got := searchIDs(t, db.Memory(), "app", "u", rankingQuery); !slices.Equal(got, want) {
		t.Errorf("ranking = %v, want %v", got, want)
	}
	for _, q := range []string{rankingQuery, "東京", "tower", "tokyotower", "Tokyo", "café", "caf", "apple cafe"} {
		want, err := svcs[0].Search(t.Context(), "app", "u", q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := svcs[1].Search(t.Context(), "app", "u", q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Search(%q) = %+v, in memory %+v", q, got, want)
		}
	}
}

// Memories, deletions and the ingestion order survive closing and
// reopening the file.
func TestMemoryReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := rankingSessions()
	svc := db.Memory()
	// s2 first, then s1: s2's ties now come first.
	for _, s := range []*session.Session{s2, s1} {
		if err := svc.AddSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Delete(ctx, "app", "u", "e"); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEvents(ctx, memory.AddEventsRequest{AppName: "app", UserID: "u", Events: []*session.Event{memEvent("n", "user", "apple banana cherry")}}); err != nil {
		t.Fatal(err)
	}
	want := searchIDs(t, svc, "app", "u", rankingQuery)
	if w := []string{"k", "c", "n", "h", "i", "b", "g", "j", "l", "a"}; !slices.Equal(want, w) {
		t.Fatalf("before reopening: %v, want %v", want, w)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if db, err = bolt.Open(path, bolt.Config{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc = db.Memory()
	if got := searchIDs(t, svc, "app", "u", rankingQuery); !slices.Equal(got, want) {
		t.Errorf("after reopening: %v, want %v", got, want)
	}
	// Re-adding s1 keeps its place after s2 and does not bring back the
	// deleted e.
	if err := svc.AddSession(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, svc, "app", "u", rankingQuery); !slices.Equal(got, want) {
		t.Errorf("after re-adding s1: %v, want %v", got, want)
	}
	if got := searchIDs(t, svc, "app", "u", "banana cherry date"); slices.Contains(got, "e") {
		t.Errorf("deleted e is back: %v", got)
	}
	resp, err := svc.Search(ctx, "app", "u", "apple banana cherry")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Memories) == 0 || resp.Memories[0].ID != "n" || resp.Memories[0].Author != "user" ||
		resp.Memories[0].Content.Parts[0].Text != "apple banana cherry" {
		t.Errorf("after reopening, best memory = %+v, want n as added", resp.Memories)
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
}
