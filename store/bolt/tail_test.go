package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// tailCounts returns, per session key, the number of events staged in the
// tail, and the number of events in the log.
func tailCounts(t *testing.T, db *DB) (map[string]int, int) {
	t.Helper()
	staged := map[string]int{}
	logged := 0
	if err := db.view(func(tx *bbolt.Tx) error {
		logged = tx.Bucket(bucketEvents).Stats().KeyN
		return tx.Bucket(bucketTail).ForEach(func(k, v []byte) error {
			s, err := decodeStaged(v)
			staged[string(k)] = len(s.events)
			return err
		})
	}); err != nil {
		t.Fatal(err)
	}
	return staged, logged
}

func tailEvent(i int) *session.Event {
	e := session.NewEvent("inv", "agent", "")
	e.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: fmt.Sprintf("event %d %s", i, strings.Repeat("x", 150))}}}
	e.Actions.StateDelta = map[string]any{"n": i, "user:u_n": i, "app:a_n": i, "temp:t": i}
	e.Timestamp = time.UnixMicro(1_700_000_000_000_000 + int64(i)*1000)
	return e
}

// checkSession reads the session back and compares it with the n events
// appended by tailEvent and the state they set.
func checkSession(t *testing.T, svc *SessionService, app, user, id string, first, n int) {
	t.Helper()
	ctx := context.Background()
	g, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	evs := g.Events()
	if len(evs) != n {
		t.Fatalf("%s: %d events, want %d", id, len(evs), n)
	}
	for i, e := range evs {
		want := fmt.Sprintf("event %d ", first+i)
		if got := e.Content.Parts[0].Text; !strings.HasPrefix(got, want) {
			t.Fatalf("%s: event %d is %q, want %q...", id, i, got[:20], want)
		}
		if _, ok := e.Actions.StateDelta["temp:t"]; ok {
			t.Fatalf("%s: event %d stored a temp: key", id, i)
		}
	}
	last := float64(first + n - 1)
	for _, k := range []string{"n", "user:u_n", "app:a_n"} {
		if got := g.State()[k]; got != last {
			t.Fatalf("%s: state %s = %v, want %v", id, k, got, last)
		}
	}
	if _, ok := g.State()["temp:t"]; ok {
		t.Fatalf("%s: temp: key in stored state", id)
	}
	// The newest 3, and those from the third newest on, come from the tail
	// and the log alike.
	for _, req := range []*session.GetRequest{
		{AppName: app, UserID: user, SessionID: id, NumRecentEvents: 3},
		{AppName: app, UserID: user, SessionID: id, After: evs[max(0, n-3)].Timestamp},
	} {
		r, err := svc.Get(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Events()
		if want := evs[max(0, n-3):]; len(got) != len(want) || got[0].ID != want[0].ID || got[len(got)-1].ID != want[len(want)-1].ID {
			t.Fatalf("%s: Get %+v returned %d events, want the last %d", id, req, len(got), len(want))
		}
	}
}

// TestTailStagesLoneAppends checks that appends committed alone are staged
// in the tail, that the tail is settled into the log when it is full, and
// that Get, List, reopening and Delete see staged and logged events alike.
func TestTailStagesLoneAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := Open(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	key := string(sessionKey("a", "u", "s"))
	for i := range 3 {
		if err := svc.AppendEvent(ctx, s, tailEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	if staged, logged := tailCounts(t, db); staged[key] != 3 || logged != 0 {
		t.Fatalf("after 3 lone appends: %d staged, %d in the log; want 3 and 0", staged[key], logged)
	}
	checkSession(t, svc, "a", "u", "s", 0, 3)
	const n = 40
	settled := false
	for i := 3; i < n; i++ {
		if err := svc.AppendEvent(ctx, s, tailEvent(i)); err != nil {
			t.Fatal(err)
		}
		staged, logged := tailCounts(t, db)
		if staged[key]+logged != i+1 {
			t.Fatalf("after %d appends: %d staged + %d logged", i+1, staged[key], logged)
		}
		settled = settled || logged > 0
	}
	if !settled {
		t.Fatalf("%d events never filled the tail", n)
	}
	checkSession(t, svc, "a", "u", "s", 0, n)
	list, err := svc.List(ctx, &session.ListRequest{AppName: "a"})
	if err != nil || len(list) != 1 || list[0].State()["n"] != float64(n-1) || list[0].Revision() != s.Revision() {
		t.Fatalf("List: %v, %+v", err, list)
	}

	// A stale copy is refused, with its staged events in place.
	stale, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(ctx, s, tailEvent(n)); err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(ctx, stale, tailEvent(n+1)); !errors.Is(err, session.ErrStale) {
		t.Fatalf("append through a stale copy: %v, want ErrStale", err)
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(path, Config{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc = db.Sessions()
	checkSession(t, svc, "a", "u", "s", 0, n+1)
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "a", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if staged, logged := tailCounts(t, db); len(staged) != 0 || logged != 0 {
		t.Fatalf("after Delete: %v staged, %d in the log", staged, logged)
	}
}

// TestTailSettlesOthers checks that lone appends to several sessions share
// the tail, that the append finding it full settles every session's
// staged events, and that a group commit settles the staged events of the
// sessions it appends to.
func TestTailSettlesOthers(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "store.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := db.Sessions()
	const k = 4
	var ss []*session.Session
	for i := range k {
		s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	sawShared, sawSettleAll := false, false
	const rounds = 12
	prevLogged := 0
	for r := range rounds {
		for i, s := range ss {
			if err := svc.AppendEvent(ctx, s, tailEvent(r)); err != nil {
				t.Fatal(err)
			}
			staged, logged := tailCounts(t, db)
			// The append that finds the tail full empties it.
			if logged != prevLogged {
				if len(staged) != 0 {
					t.Fatalf("the tail was settled, yet it stages %v", staged)
				}
				sawSettleAll = true
			}
			prevLogged = logged
			total := logged
			for _, c := range staged {
				total += c
			}
			if want := r*k + i + 1; total != want {
				t.Fatalf("%d events stored, want %d", total, want)
			}
			sawShared = sawShared || len(staged) > 1
		}
	}
	if !sawShared || !sawSettleAll {
		t.Fatalf("tail shared by several sessions: %v; settled at once: %v", sawShared, sawSettleAll)
	}
	for i := range k {
		checkSession(t, svc, "a", "u", fmt.Sprint(i), 0, rounds)
	}

	// Concurrent appends commit in groups, which write to the log and take
	// the sessions' staged events with them.
	var wg sync.WaitGroup
	const more = 20
	for i, s := range ss {
		wg.Go(func() {
			for j := range more {
				if err := svc.AppendEvent(ctx, s, tailEvent(rounds+j)); err != nil {
					t.Errorf("session %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range k {
		checkSession(t, svc, "a", "u", fmt.Sprint(i), 0, rounds+more)
	}
	if got, want := CountEvents(t, db), k*(rounds+more); got != want {
		t.Fatalf("CountEvents = %d, want %d", got, want)
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
}

// downgrade makes db's file one of format ver: it settles the tail if
// ver has none, drops the buckets added after ver and writes its marker.
func downgrade(t *testing.T, db *DB, ver uint32) {
	t.Helper()
	if err := db.update(func(tx *bbolt.Tx) error {
		if ver < 2 {
			if err := db.settleTail(tx, nil); err != nil {
				return err
			}
		}
		for _, b := range layout {
			if b.since > ver {
				if err := tx.DeleteBucket(b.name); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(keyFormat, binary.BigEndian.AppendUint32(nil, ver))
	}); err != nil {
		t.Fatal(err)
	}
}

// TestUpgrade checks that a file of each older format (1: no tail and no
// memory buckets; 2: no memory buckets) opens as the current format with
// its sessions intact, its layout complete and every store usable.
func TestUpgrade(t *testing.T) {
	for ver := uint32(1); ver < FormatVersion; ver++ {
		t.Run(fmt.Sprintf("format%d", ver), func(t *testing.T) { testUpgrade(t, ver) })
	}
}

func testUpgrade(t *testing.T, from uint32) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := Open(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := svc.AppendEvent(ctx, s, tailEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	downgrade(t, db, from)
	db.Close()

	if db, err = Open(path, Config{}); err != nil {
		t.Fatalf("Open of a format %d file: %v", from, err)
	}
	defer db.Close()
	var format []byte
	var missing [][]byte
	db.view(func(tx *bbolt.Tx) error {
		format = append(format, tx.Bucket(bucketMeta).Get(keyFormat)...)
		for _, b := range layout {
			if tx.Bucket(b.name) == nil {
				missing = append(missing, b.name)
			}
		}
		return nil
	})
	if !reflect.DeepEqual(format, []byte{0, 0, 0, FormatVersion}) {
		t.Fatalf("format marker after upgrade: %v", format)
	}
	if len(missing) > 0 {
		t.Fatalf("buckets missing after upgrade: %q", missing)
	}
	svc = db.Sessions()
	g, err := svc.Get(ctx, &session.GetRequest{AppName: "a", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatalf("Get after upgrade: %v", err)
	}
	if len(g.Events()) != 2 {
		t.Fatalf("Get after upgrade: %d events, want 2", len(g.Events()))
	}
	if err := svc.AppendEvent(ctx, g, tailEvent(2)); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().AddSession(ctx, g); err != nil {
		t.Fatalf("memory after upgrade: %v", err)
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Upgraded once: the next Open finds the current format.
	if db, err = Open(path, Config{}); err != nil {
		t.Fatalf("Open after the upgrade: %v", err)
	}
}

// TestMissingBucket checks that a file of the current format missing a
// bucket of its format is refused as corrupt, not upgraded.
func TestMissingBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := Open(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.update(func(tx *bbolt.Tx) error { return tx.DeleteBucket(bucketMemoryDeleted) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(path, Config{}); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			db.Close()
		}
		t.Fatalf("Open of a format %d file without %s: err = %v, want ErrCorrupt", FormatVersion, bucketMemoryDeleted, err)
	}
}
