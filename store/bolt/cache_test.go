package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// uncached returns a view of db's sessions without a cache: what Get
// returns read from the file alone.
func uncached(db *DB) *SessionService { return &SessionService{db: db} }

// cacheEvent is an event with text, a state delta of every scope and a
// temp: key, and a timestamp i ms after a fixed time.
func cacheEvent(i int) *session.Event {
	e := session.NewEvent(fmt.Sprintf("inv%d", i/3), "agent", "")
	e.ID = fmt.Sprintf("e%d", i)
	e.Content = &genai.Content{Role: "model", Parts: []*genai.Part{{Text: fmt.Sprintf("event %d", i)}}}
	e.Actions.StateDelta = map[string]any{"n": i, "last": e.ID, "user:u_n": i, "app:a_n": i, "temp:t": i,
		"nested": map[string]any{"list": []any{i, "x"}}}
	e.Timestamp = time.UnixMicro(1_700_000_000_000_000 + int64(i)*1000)
	return e
}

func get(t *testing.T, svc *SessionService, req *session.GetRequest) *session.Session {
	t.Helper()
	s, err := svc.Get(context.Background(), req)
	if err != nil {
		t.Fatalf("Get %+v: %v", req, err)
	}
	return s
}

// sameSession fails unless a and b have equal identity, revision, last
// update time, state and events (compared by value).
func sameSession(t *testing.T, what string, a, b *session.Session) {
	t.Helper()
	if a.ID != b.ID || a.AppName != b.AppName || a.UserID != b.UserID {
		t.Fatalf("%s: sessions %s/%s/%s and %s/%s/%s", what, a.AppName, a.UserID, a.ID, b.AppName, b.UserID, b.ID)
	}
	if a.Revision() != b.Revision() || !a.LastUpdateTime().Equal(b.LastUpdateTime()) {
		t.Fatalf("%s: revision %d at %v, want %d at %v", what, a.Revision(), a.LastUpdateTime(), b.Revision(), b.LastUpdateTime())
	}
	if !reflect.DeepEqual(a.State(), b.State()) {
		t.Fatalf("%s: state %v, want %v", what, a.State(), b.State())
	}
	ae, be := a.Events(), b.Events()
	if len(ae) != len(be) {
		t.Fatalf("%s: %d events, want %d", what, len(ae), len(be))
	}
	for i := range ae {
		if !reflect.DeepEqual(*ae[i], *be[i]) {
			t.Fatalf("%s: event %d is\n%+v\nwant\n%+v", what, i, *ae[i], *be[i])
		}
	}
}

// shares reports whether a and b hold the very same decoded events: both
// came from the cache.
func shares(a, b *session.Session) bool {
	ae, be := a.Events(), b.Events()
	return len(ae) > 0 && len(ae) == len(be) && ae[0] == be[0] && ae[len(ae)-1] == be[len(be)-1]
}

// requests are the Gets compared: the whole history, the newest n, those
// after a time, and both.
func requests(app, user, id string, evs []*session.Event) []*session.GetRequest {
	reqs := []*session.GetRequest{{AppName: app, UserID: user, SessionID: id}}
	for _, n := range []int{1, 3, len(evs), len(evs) + 5} {
		reqs = append(reqs, &session.GetRequest{AppName: app, UserID: user, SessionID: id, NumRecentEvents: n})
	}
	for _, i := range []int{0, 1, len(evs) / 2, len(evs) - 1} {
		at := evs[i].Timestamp
		reqs = append(reqs,
			&session.GetRequest{AppName: app, UserID: user, SessionID: id, After: at},
			&session.GetRequest{AppName: app, UserID: user, SessionID: id, After: at.Add(time.Microsecond)},
			&session.GetRequest{AppName: app, UserID: user, SessionID: id, After: at, NumRecentEvents: 2})
	}
	return append(reqs, &session.GetRequest{AppName: app, UserID: user, SessionID: id, After: evs[len(evs)-1].Timestamp.Add(time.Hour)})
}

// TestCacheMatchesUncached checks that Gets served from the cache, filled
// by appends or by a Get, equal Gets read from the file, for every kind of
// request, with events staged in the tail and in the log.
func TestCacheMatchesUncached(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := Open(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc, plain := db.Sessions(), uncached(db)
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s", State: map[string]any{"k": "v", "app:a": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	// Lone appends are staged in the tail until it settles; appends
	// concurrent with another session's go to the log in groups.
	other, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u2", SessionID: "o"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		if i%10 >= 5 {
			if err := svc.AppendEvent(ctx, s, cacheEvent(i)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = svc.AppendEvent(ctx, s, cacheEvent(i)) })
		wg.Go(func() { errs[1] = svc.AppendEvent(ctx, other, cacheEvent(1000+i)) })
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	if StagedEvents(t, db) == CountEvents(t, db) || StagedEvents(t, db) == 0 {
		t.Logf("staged %d of %d events: the test covers only one of tail and log", StagedEvents(t, db), CountEvents(t, db))
	}

	check := func(when string, wantHit bool) {
		t.Helper()
		whole := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
		first := get(t, svc, whole)
		second := get(t, svc, whole)
		if hit := shares(first, second); hit != wantHit {
			t.Fatalf("%s: served from the cache: %v, want %v", when, hit, wantHit)
		}
		if len(first.Events()) != n {
			t.Fatalf("%s: %d events, want %d", when, len(first.Events()), n)
		}
		for _, req := range requests("app", "u", "s", first.Events()) {
			sameSession(t, fmt.Sprintf("%s: Get %+v", when, req), get(t, svc, req), get(t, plain, req))
		}
	}
	// Filled by Create and the appends (which kept the JSON they stored,
	// decoded by the first Get): the first Get is a hit already.
	check("after appends", true)

	// Filled by a Get, in a process that did not write the session.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(path, Config{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, plain = db.Sessions(), uncached(db)
	get(t, svc, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s", NumRecentEvents: 3})
	if k, _ := svc.cache.stats(); k != 0 {
		t.Fatalf("a Get of part of a session cached %d sessions", k)
	}
	check("after reopening", true)
}

// TestCacheSeesOtherWriters checks that a cached session changed by a
// writer that does not update this cache (another SessionService on the
// file, a raw bbolt transaction), deleted, or deleted and created again,
// is read from the file, not served stale.
func TestCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	svc, plain := db.Sessions(), uncached(db)
	otherView := &SessionService{db: db, cache: newSessionCache(DefaultSessionCacheBytes)}
	whole := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}

	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := svc.AppendEvent(ctx, s, cacheEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := get(t, svc, whole), get(t, svc, whole)
	if !shares(a, b) {
		t.Fatal("the session is not cached")
	}

	// Another view appends.
	o := get(t, otherView, whole)
	if err := otherView.AppendEvent(ctx, o, cacheEvent(5)); err != nil {
		t.Fatal(err)
	}
	g := get(t, svc, whole)
	if len(g.Events()) != 6 || g.Events()[5].ID != "e5" || g.State()["last"] != "e5" {
		t.Fatalf("after another view's append: %d events, last %v", len(g.Events()), g.State()["last"])
	}
	sameSession(t, "after another view's append", g, get(t, plain, whole))
	// The copy read before is stale, cache or not.
	if err := svc.AppendEvent(ctx, a, cacheEvent(99)); !errors.Is(err, session.ErrStale) {
		t.Fatalf("append through a stale copy: %v, want ErrStale", err)
	}

	// Settling the staged events into the log moves the header's newest
	// event but not the history: the cache still serves it.
	key := sessionKey("app", "u", "s")
	if err := db.bdb.Update(func(tx *bbolt.Tx) error {
		cur, _, err := loadSession(tx, key)
		if err != nil || !cur.inTail {
			return fmt.Errorf("no tail entry to settle (%v)", err)
		}
		return settle(tx, key, cur)
	}); err != nil {
		t.Fatal(err)
	}
	if g2 := get(t, svc, whole); !shares(g, g2) {
		t.Fatal("settling the tail dropped the session from the cache")
	}
	// A raw transaction adds events, as another handle on the file would.
	if err := bulkAppend(db, g, 3, cacheEvent); err != nil {
		t.Fatal(err)
	}
	g = get(t, svc, whole)
	if len(g.Events()) != 9 {
		t.Fatalf("after a raw write: %d events, want 9", len(g.Events()))
	}
	sameSession(t, "after a raw write", g, get(t, plain, whole))

	// Another view deletes the session: it is gone.
	get(t, svc, whole) // cached again
	if err := otherView.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, whole); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get after another view's delete: %v, want ErrNotFound", err)
	}

	// ... and creates it again with one event.
	n, err := otherView.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := otherView.AppendEvent(ctx, n, cacheEvent(50)); err != nil {
		t.Fatal(err)
	}
	g = get(t, svc, whole)
	if len(g.Events()) != 1 || g.Events()[0].ID != "e50" {
		t.Fatalf("after delete and create: %d events", len(g.Events()))
	}
	sameSession(t, "after delete and create", g, get(t, plain, whole))

	// Its own delete drops the entry.
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	if k, used := svc.cache.stats(); k != 0 || used != 0 {
		t.Fatalf("after Delete the cache holds %d sessions, %d bytes", k, used)
	}
}

// TestCacheCopiesAreIndependent checks that sessions served from one
// cache entry do not see each other's appends.
func TestCacheCopiesAreIndependent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	svc := db.Sessions()
	whole := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := svc.AppendEvent(ctx, s, cacheEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	a, b := get(t, svc, whole), get(t, svc, whole)
	if !shares(a, b) {
		t.Fatal("the session is not cached")
	}
	for i := 3; i < 6; i++ {
		if err := svc.AppendEvent(ctx, a, cacheEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.Events()); n != 3 {
		t.Fatalf("a copy sees another copy's appends: %d events, want 3", n)
	}
	if _, ok := b.StateValue("temp:t"); ok {
		t.Fatal("a copy sees another copy's temp: state")
	}
	g := get(t, svc, whole)
	ids := []string{}
	for _, e := range g.Events() {
		ids = append(ids, e.ID)
	}
	if want := []string{"e0", "e1", "e2", "e3", "e4", "e5"}; !slices.Equal(ids, want) {
		t.Fatalf("events %v, want %v", ids, want)
	}
	// The appended events are in the cache as stored (no temp: key), not
	// the caller's values.
	if _, ok := g.Events()[5].Actions.StateDelta["temp:t"]; ok {
		t.Fatal("the cached event keeps a temp: key")
	}
	sameSession(t, "after appends through one copy", g, get(t, uncached(db), whole))
	if err := svc.AppendEvent(ctx, b, cacheEvent(9)); !errors.Is(err, session.ErrStale) {
		t.Fatalf("append through the other copy: %v, want ErrStale", err)
	}
}

// TestCacheConcurrent runs appends and Gets of the same sessions at once
// (run it with -race): every Get must show a consistent session, its
// events a prefix of the final history and its state the one its last
// event set.
func TestCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	svc := db.Sessions()
	const sessions, writers, each, readers = 3, 3, 15, 4
	for k := range sessions {
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	stop := make(chan struct{})
	var writing sync.WaitGroup
	for k := range sessions {
		if k > 0 {
			// Writers each read a fresh copy for each append and retry
			// when it is stale, as runners do.
			for w := range writers {
				writing.Go(func() {
					for i := 0; i < each; {
						c, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)})
						if err != nil {
							errs <- err
							return
						}
						e := cacheEvent(0)
						e.ID = fmt.Sprintf("s%d-w%d-%d", k, w, i)
						e.Actions.StateDelta = map[string]any{"last": e.ID}
						e.Timestamp = time.Time{}
						switch err := svc.AppendEvent(ctx, c, e); {
						case err == nil:
							i++
						case !errors.Is(err, session.ErrStale):
							errs <- err
							return
						}
					}
				})
			}
			continue
		}
		// Writers share one copy (appends through it are serialized).
		shared := get(t, svc, &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)})
		for w := range writers {
			writing.Go(func() {
				for i := range each {
					e := cacheEvent(0)
					e.ID = fmt.Sprintf("s%d-w%d-%d", k, w, i)
					e.Actions.StateDelta = map[string]any{"last": e.ID}
					e.Timestamp = time.Time{}
					if err := svc.AppendEvent(ctx, shared, e); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	type read struct {
		session int
		ids     []string
	}
	seen := make([][]read, readers) // per reader, each whole Get
	for r := range readers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := i % sessions
				req := &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)}
				if i%3 == 1 {
					req.NumRecentEvents = 4
				}
				g, err := svc.Get(ctx, req)
				if err != nil {
					errs <- err
					return
				}
				evs := g.Events()
				if len(evs) == 0 {
					continue
				}
				if last := g.State()["last"]; last != evs[len(evs)-1].ID {
					errs <- fmt.Errorf("session %d: state last=%v, newest event %s", k, last, evs[len(evs)-1].ID)
					return
				}
				if req.NumRecentEvents == 0 {
					ids := make([]string, len(evs))
					for j, e := range evs {
						ids[j] = e.ID
					}
					seen[r] = append(seen[r], read{k, ids})
				}
			}
		})
	}
	writing.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final := make([][]string, sessions)
	for k := range sessions {
		g := get(t, svc, &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)})
		if n := len(g.Events()); n != writers*each {
			t.Fatalf("session %d: %d events, want %d", k, n, writers*each)
		}
		sameSession(t, fmt.Sprint("session ", k), g, get(t, uncached(db), &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(k)}))
		for _, e := range g.Events() {
			final[k] = append(final[k], e.ID)
		}
	}
	for _, gets := range seen {
		for _, g := range gets {
			if h := final[g.session]; len(g.ids) > len(h) || !slices.Equal(g.ids, h[:len(g.ids)]) {
				t.Fatalf("a Get of session %d returned %v, not a prefix of its history %v", g.session, g.ids, h)
			}
		}
	}
}

// TestCacheEviction checks that the cache stays within its budget,
// dropping the least recently used sessions first, and that sessions
// dropped, or too large to cache, are still read right.
func TestCacheEviction(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	plain := uncached(db)
	const events = 10
	ids := []string{"a", "b", "c", "d", "big"}
	for _, id := range ids {
		s, err := plain.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: id})
		if err != nil {
			t.Fatal(err)
		}
		n := events
		if id == "big" {
			n = 5 * events
		}
		for i := range n {
			if err := plain.AppendEvent(ctx, s, cacheEvent(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	req := func(id string) *session.GetRequest {
		return &session.GetRequest{AppName: "app", UserID: "u", SessionID: id}
	}
	// The charge for one session, to size a cache for three.
	probe := &SessionService{db: db, cache: newSessionCache(DefaultSessionCacheBytes)}
	get(t, probe, req("a"))
	_, one := probe.cache.stats()
	svc := &SessionService{db: db, cache: newSessionCache(3*one + one/2)}
	cached := func() []string {
		var out []string
		for _, id := range ids {
			if _, ok := svc.cache.entries.Peek(string(sessionKey("app", "u", id))); ok {
				out = append(out, id)
			}
		}
		return out
	}
	check := func(want ...string) {
		t.Helper()
		if got := cached(); !slices.Equal(got, want) {
			t.Fatalf("cached %v, want %v", got, want)
		}
		if _, used := svc.cache.stats(); used > svc.cache.max {
			t.Fatalf("cache uses %d bytes, budget %d", used, svc.cache.max)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		get(t, svc, req(id))
	}
	check("a", "b", "c")
	get(t, svc, req("a")) // a is now the most recently used
	get(t, svc, req("d"))
	check("a", "c", "d")
	// A session larger than the budget is not cached, and evicts nothing.
	get(t, svc, req("big"))
	check("a", "c", "d")
	// Appends grow an entry: c, least recently used, goes.
	d := get(t, svc, req("d"))
	for i := events; i < 2*events; i++ {
		if err := svc.AppendEvent(ctx, d, cacheEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("a", "d")
	for _, id := range ids {
		sameSession(t, id, get(t, svc, req(id)), get(t, plain, req(id)))
	}
}

// TestCacheOff checks that a negative SessionCacheBytes turns the cache
// off.
func TestCacheOff(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "store.db"), Config{SessionCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Sessions().cache != nil {
		t.Fatal("the cache is on")
	}
	s, err := db.Sessions().Create(context.Background(), &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Sessions().AppendEvent(context.Background(), s, cacheEvent(0)); err != nil {
		t.Fatal(err)
	}
	whole := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	if a, b := get(t, db.Sessions(), whole), get(t, db.Sessions(), whole); shares(a, b) {
		t.Fatal("two Gets share decoded events without a cache")
	}
}

// BenchmarkGet1000 measures Get of a whole session of 1,000 events, from
// the cache and from the file.
func BenchmarkGet1000(b *testing.B) {
	ctx := context.Background()
	db, err := Open(filepath.Join(b.TempDir(), "store.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s, err := db.Sessions().Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "u", SessionID: "s", State: map[string]any{"k": "v"}})
	if err != nil {
		b.Fatal(err)
	}
	if err := bulkAppend(db, s, 1000, benchEvent); err != nil {
		b.Fatal(err)
	}
	req := &session.GetRequest{AppName: "bench", UserID: "u", SessionID: "s"}
	for _, bc := range []struct {
		name string
		svc  *SessionService
	}{{"cached", db.Sessions()}, {"uncached", uncached(db)}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				g, err := bc.svc.Get(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if len(g.Events()) != 1000 {
					b.Fatalf("%d events", len(g.Events()))
				}
			}
		})
	}
}

// TestCacheDecodesOnGet checks that an append keeps its event's stored
// JSON in the cache, undecoded, and that the next Get decodes it once
// into events equal to those read from the file, keeping the events
// decoded before.
func TestCacheDecodesOnGet(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "store.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, plain := db.Sessions(), uncached(db)
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	key := string(sessionKey("app", "u", "s"))
	entry := func() *cacheEntry {
		t.Helper()
		e, ok := svc.cache.entries.Peek(key)
		if !ok {
			t.Fatal("the session is not cached")
		}
		return e
	}
	req := &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"}
	var prev *session.Session
	for round, n := range []int{3, 2} {
		for i := range n {
			if err := svc.AppendEvent(ctx, s, cacheEvent(10*round+i)); err != nil {
				t.Fatal(err)
			}
		}
		if e := entry(); len(e.raw) != n {
			t.Fatalf("round %d: %d events undecoded after %d appends", round, len(e.raw), n)
		}
		got := get(t, svc, req)
		if e := entry(); len(e.raw) != 0 || len(e.events) != len(got.Events()) {
			t.Fatalf("round %d: after a Get, %d events decoded and %d not, want %d and 0", round, len(e.events), len(e.raw), len(got.Events()))
		}
		sameSession(t, fmt.Sprintf("round %d", round), got, get(t, plain, req))
		if prev != nil && got.Events()[0] != prev.Events()[0] {
			t.Fatalf("round %d: an event decoded by an earlier Get was decoded again", round)
		}
		prev = got
	}
}

// TestAppendMergesIntoStoredState checks that an append whose merge base
// came from the cache merges into the state actually stored when the two
// differ: the transaction, not the cache, decides. The stored state is
// changed behind the cache's back, revision unchanged, which only a bug
// could do.
func TestAppendMergesIntoStoredState(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "store.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := db.Sessions()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s", State: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	key := sessionKey("app", "u", "s")
	if base, _, ok := svc.cache.ownState(string(key), s.Revision()); !ok || string(base) != `{"k":"v"}` {
		t.Fatalf("cached own state %q (%v), want {\"k\":\"v\"}", base, ok)
	}
	if err := db.bdb.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).Put(tagKey(key, tagState), []byte(`{"k":"w","x":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	e := session.NewEvent("inv", "agent", "")
	e.Actions.StateDelta = map[string]any{"y": 2.0}
	if err := svc.AppendEvent(ctx, s, e); err != nil {
		t.Fatal(err)
	}
	got := get(t, uncached(db), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if want := map[string]any{"k": "w", "x": 1.0, "y": 2.0}; !reflect.DeepEqual(got.State(), want) {
		t.Fatalf("stored state %v, want %v", got.State(), want)
	}
	if base, _, ok := svc.cache.ownState(string(key), got.Revision()); !ok || string(base) != `{"k":"w","x":1,"y":2}` {
		t.Fatalf("cached own state %q (%v) after the append, want the stored one", base, ok)
	}
	// Later appends merge into the cached state (decoded by the first of
	// them, kept decoded for the next).
	want := map[string]any{"k": "w", "x": 1.0, "y": 2.0}
	for i := range 3 {
		e := session.NewEvent("inv", "agent", "")
		e.Actions.StateDelta = map[string]any{"y": float64(3 + i), fmt.Sprintf("z%d", i): "z"}
		if err := svc.AppendEvent(ctx, s, e); err != nil {
			t.Fatal(err)
		}
		want["y"], want[fmt.Sprintf("z%d", i)] = float64(3+i), "z"
		got := get(t, uncached(db), &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
		if !reflect.DeepEqual(got.State(), want) {
			t.Fatalf("append %d: stored state %v, want %v", i, got.State(), want)
		}
	}
}
