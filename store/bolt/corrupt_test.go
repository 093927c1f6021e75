package bolt_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

// goodFile writes a store with a few sessions, events, artifacts and a
// module, closes it and returns its bytes.
func goodFile(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "good.db")
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for s := range 4 {
		sess, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint("s", s), State: map[string]any{"k": s}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			e := session.NewEvent("inv", "agent", "")
			e.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: strings.Repeat("text ", 40) + fmt.Sprint(i)}}}
			e.Actions.StateDelta = map[string]any{"i": i, "user:last": i}
			if err := db.Sessions().AppendEvent(ctx, sess, e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Artifacts().Save(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: sess.ID, Name: "a"}, genai.NewPartFromText(strings.Repeat("a", 5000))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Registry().PutModule(ctx, make([]byte, 20000), "m", nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exercise opens path and runs every read and a few writes; it returns the
// first error. A damaged file must give errors, never a panic or a crash.
func exercise(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	ctx := context.Background()
	db, err := bolt.Open(path, bolt.Config{LockTimeout: -1})
	if err != nil {
		return err
	}
	defer db.Close()
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(db.Verify())
	svc := db.Sessions()
	_, err = svc.List(ctx, &session.ListRequest{AppName: "app"})
	add(err)
	for s := range 4 {
		id := fmt.Sprint("s", s)
		g, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: id})
		add(err)
		_, err = svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: id, NumRecentEvents: 3})
		add(err)
		if g != nil {
			add(svc.AppendEvent(ctx, g, session.NewEvent("inv", "agent", "")))
		}
		_, err = db.Artifacts().Load(ctx, artifact.Key{AppName: "app", UserID: "u", SessionID: id, Name: "a"}, artifact.Latest)
		add(err)
	}
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "new"})
	add(err)
	_, err = db.Registry().Modules(ctx)
	add(err)
	return errors.Join(errs...)
}

// writeFile writes b to the one scratch file of t's test and returns its
// path.
func writeFile(t *testing.T, dir string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// highWater returns how many bytes the file's newest valid meta page says
// are in use (bbolt's meta: magic at 16, txid at 64, pgid at 56).
func highWater(t *testing.T, b []byte, page int) int {
	t.Helper()
	var best, txid uint64
	for _, off := range []int{0, page} {
		m := b[off+16:]
		if binary.LittleEndian.Uint32(m) != 0xED0CDAED {
			continue
		}
		if tx := binary.LittleEndian.Uint64(m[48:]); tx >= txid {
			txid, best = tx, binary.LittleEndian.Uint64(m[40:])
		}
	}
	if best == 0 {
		t.Fatal("no meta page in the good file")
	}
	return int(best) * page
}

func TestCorruptFiles(t *testing.T) {
	good := goodFile(t)
	const page = 4096
	dir := t.TempDir()
	hw := highWater(t, good, page)
	if hw < 8*page || hw > len(good) {
		t.Fatalf("good file: %d bytes, %d in use", len(good), hw)
	}
	good = good[:hw] // what is past the high water mark is not read
	if err := exercise(writeFile(t, dir, good)); err != nil {
		t.Fatalf("the undamaged file: %v", err)
	}

	// Damage Open must refuse with ErrCorrupt, naming the problem.
	refused := map[string]struct {
		b    []byte
		says string
	}{
		"truncated to 50 bytes":   {good[:50], "no valid bbolt meta page"},
		"truncated to 100 bytes":  {good[:100], "truncated"},
		"truncated to one page":   {good[:page], "truncated"},
		"truncated to two pages":  {good[:2*page], "truncated"},
		"truncated to half":       {good[:len(good)/2], "truncated"},
		"truncated by one page":   {good[:len(good)-page], "truncated"},
		"truncated mid-page":      {good[:len(good)-page/2], "truncated"},
		"not a bbolt file":        {[]byte(strings.Repeat("this is not a database\n", 1000)), "no valid bbolt meta page"},
		"both meta pages zeroed":  {zero(good, 0, 2*page), "no valid bbolt meta page"},
		"both meta pages garbled": {garble(garble(good, 20, 40, 1), page+20, 40, 2), "no valid bbolt meta page"},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			err := exercise(writeFile(t, dir, tc.b))
			if err == nil || strings.Contains(err.Error(), "PANIC") {
				t.Fatalf("err = %v", err)
			}
			if !errors.Is(err, bolt.ErrCorrupt) {
				t.Errorf("err = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want it to say %q", err, tc.says)
			}
		})
	}

	// One torn meta page: bbolt falls back to the other one.
	t.Run("one meta page garbled", func(t *testing.T) {
		if err := exercise(writeFile(t, dir, garble(good, 20, 40, 3))); err != nil {
			t.Errorf("err = %v, want the store to open on the other meta page", err)
		}
	})

	// Damage inside the file: every data page in turn, zeroed, filled with
	// 0xff or with random bytes. Operations may fail, with ErrCorrupt;
	// the process must not crash.
	pages := len(good) / page
	failed := 0
	for p := 2; p < pages; p++ {
		for k, damage := range []func([]byte, int, int) []byte{
			zero,
			func(b []byte, off, n int) []byte { return fill(b, off, n, 0xff) },
			func(b []byte, off, n int) []byte { return garble(b, off, n, uint64(off)) },
			// A page header pointing elsewhere, the rest intact.
			func(b []byte, off, n int) []byte { return garble(b, off, 16, uint64(off)) },
		} {
			err := exercise(writeFile(t, dir, damage(good, p*page, page)))
			if err != nil && strings.Contains(err.Error(), "PANIC") {
				t.Fatalf("page %d, damage %d: %v", p, k, err)
			}
			if err != nil {
				failed++
				if !errors.Is(err, bolt.ErrCorrupt) && !errors.Is(err, session.ErrNotFound) && !errors.Is(err, artifact.ErrNotFound) {
					t.Errorf("page %d, damage %d: err = %v, want ErrCorrupt", p, k, err)
				}
			}
		}
	}
	t.Logf("%d pages damaged 4 ways each: %d of %d runs gave errors, none crashed", pages-2, failed, 4*(pages-2))
	if failed == 0 {
		t.Errorf("no damaged page was noticed")
	}
}

func zero(b []byte, off, n int) []byte { return fill(b, off, n, 0) }

func fill(b []byte, off, n int, v byte) []byte {
	out := append([]byte(nil), b...)
	for i := off; i < off+n && i < len(out); i++ {
		out[i] = v
	}
	return out
}

func garble(b []byte, off, n int, seed uint64) []byte {
	out := append([]byte(nil), b...)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := off; i < off+n && i < len(out); i++ {
		out[i] = byte(r.Uint32())
	}
	return out
}
