package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s1", State: map[string]any{"k": "v", "app:a": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		e := session.NewEvent("inv", "agent", "")
		e.ID = fmt.Sprintf("e%d", i)
		e.Actions.StateDelta = map[string]any{"i": float64(i), "user:u": float64(i)}
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Artifacts().Save(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: "f"}, genai.NewPartFromText("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Registry().PutApp(ctx, "app", []byte("def")); err != nil {
		t.Fatal(err)
	}
	rev := s.Revision()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g, err := db.Sessions().Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.Events()); n != 5 {
		t.Errorf("%d events after reopen, want 5", n)
	}
	if g.Revision() != rev {
		t.Errorf("revision after reopen = %d, want %d", g.Revision(), rev)
	}
	want := map[string]any{"k": "v", "app:a": 1.0, "i": 4.0, "user:u": 4.0}
	if st := g.State(); fmt.Sprint(st) != fmt.Sprint(want) {
		t.Errorf("state after reopen = %v, want %v", st, want)
	}
	// The copy from before the reopen is still current: revisions are
	// stored, not per process.
	if err := db.Sessions().AppendEvent(ctx, s, session.NewEvent("inv", "agent", "")); err != nil {
		t.Errorf("append through a copy read before reopening: %v", err)
	}
	// A new session gets a revision above every stored one.
	s2, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Revision() <= rev {
		t.Errorf("revision after reopen = %d, not above %d", s2.Revision(), rev)
	}
	if _, err := db.Artifacts().Load(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: "f"}, artifact.Latest); err != nil {
		t.Errorf("artifact after reopen: %v", err)
	}
	if _, err := db.Registry().App(ctx, "app", bolt.LatestVersion); err != nil {
		t.Errorf("app after reopen: %v", err)
	}
	if err := db.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestUnknownFormatVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A later release's file: same layout, format 4.
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("adkhost")).Put([]byte("format"), []byte{0, 0, 0, 4})
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	_, err = bolt.Open(path, bolt.Config{})
	var fe *bolt.FormatError
	if !errors.As(err, &fe) || fe.Version != 4 {
		t.Fatalf("Open of a format 4 file: err = %v, want a *FormatError for version 4", err)
	}
	for _, want := range []string{path, "format version 4", "version 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestNotAStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket([]byte("someone-else"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = bolt.Open(path, bolt.Config{})
	var fe *bolt.FormatError
	if !errors.As(err, &fe) || fe.Version != 0 || !strings.Contains(err.Error(), "not an adkhost store") {
		t.Fatalf("Open of another program's bbolt file: err = %v", err)
	}
}

func TestLockedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = bolt.Open(path, bolt.Config{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("second Open: err = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %v", d)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "store.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := db.Sessions().Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"}); !errors.Is(err, bolt.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if err := db.Sessions().AppendEvent(ctx, s, session.NewEvent("i", "a", "")); !errors.Is(err, bolt.ErrClosed) {
		t.Errorf("AppendEvent after Close: %v", err)
	}
	if _, err := db.Artifacts().Save(ctx, artifact.Key{Name: "x"}, genai.NewPartFromText("x")); !errors.Is(err, bolt.ErrClosed) {
		t.Errorf("Save after Close: %v", err)
	}
}

// TestCloseWaitsForWrites closes the store while appends are under way:
// each append either succeeded (and is in the file) or failed with
// ErrClosed.
func TestCloseWaitsForWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]int{}
	for w := range writers {
		s, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: fmt.Sprint(w)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				err := db.Sessions().AppendEvent(ctx, s, session.NewEvent("i", "a", ""))
				if errors.Is(err, bolt.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[s.ID]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	db, err = bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for w := range writers {
		g, err := db.Sessions().Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: fmt.Sprint(w)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(g.Events()); n != acked[g.ID] {
			t.Errorf("session %s: %d events stored, %d acknowledged", g.ID, n, acked[g.ID])
		}
	}
}

// TestDeleteFreesEvents checks that Delete removes a session's
// events from the file, not only its header.
func TestDeleteFreesEvents(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "keep"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		for _, x := range []*session.Session{s, keep} {
			e := session.NewEvent("inv", "agent", "")
			e.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: strings.Repeat("x", 200) + fmt.Sprint(i)}}}
			if err := svc.AppendEvent(ctx, x, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "a", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if got := bolt.CountEvents(t, db); got != 50 {
		t.Errorf("%d events in the file after deleting one of two 50-event sessions, want 50", got)
	}
	g, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "keep"})
	if err != nil || len(g.Events()) != 50 {
		t.Fatalf("the other session: %v, %d events", err, len(g.Events()))
	}
	// Created again under the id, the session starts empty.
	s, err = svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(ctx, s, session.NewEvent("inv", "agent", "")); err != nil {
		t.Fatal(err)
	}
	g, err = svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil || len(g.Events()) != 1 {
		t.Fatalf("re-created session: %v, %d events", err, len(g.Events()))
	}
	if err := db.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestOpenEmptyFile: a zero-byte store file is refused, not silently made
// a new empty store: it is most likely a truncated one. A missing file is
// a new store.
func TestOpenEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := bolt.Open(path, bolt.Config{})
	if !errors.Is(err, bolt.ErrCorrupt) || !strings.Contains(err.Error(), "the file is empty (0 bytes)") || !strings.Contains(err.Error(), "remove the file") {
		t.Fatalf("Open of an empty file: %v, want a refusal saying what to do", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatalf("Open of a missing file (a new store): %v", err)
	}
	db.Close()
}
