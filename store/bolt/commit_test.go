package bolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "store.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var testBucket = []byte("test")

func putTest(k string) func(tx *bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(testBucket)
		if err != nil {
			return err
		}
		return b.Put([]byte(k), []byte(k))
	}
}

func has(t *testing.T, db *DB, k string) bool {
	t.Helper()
	var ok bool
	if err := db.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(testBucket)
		ok = b != nil && b.Get([]byte(k)) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestGroupCommit checks that concurrent writes share transactions, and
// that a write that fails or is refused does not fail the others of its
// group.
func TestGroupCommit(t *testing.T) {
	db := openTest(t)
	const writers, each = 32, 20
	errBad := errors.New("bad write")
	before := db.commit.commits.Load()
	var wg sync.WaitGroup
	errs := make([][]error, writers)
	for w := range writers {
		errs[w] = make([]error, each)
		wg.Go(func() {
			for i := range each {
				k := fmt.Sprintf("%d-%d", w, i)
				put := putTest(k)
				switch {
				case i%5 == 1: // refused before writing
					errs[w][i] = db.commit.do(func(*bbolt.Tx) error { return refuse(errBad) })
				case i%5 == 2: // fails after writing: its group is retried one by one
					errs[w][i] = db.commit.do(func(tx *bbolt.Tx) error {
						if err := put(tx); err != nil {
							return err
						}
						return errBad
					})
				default:
					errs[w][i] = db.commit.do(put)
				}
			}
		})
	}
	wg.Wait()
	commits := db.commit.commits.Load() - before
	for w := range writers {
		for i := range each {
			k := fmt.Sprintf("%d-%d", w, i)
			err := errs[w][i]
			switch i % 5 {
			case 1, 2:
				if !errors.Is(err, errBad) || isRefusal(err) {
					t.Errorf("%s: err = %v, want the write's own error", k, err)
				}
				if has(t, db, k) {
					t.Errorf("%s: a failed write is in the file", k)
				}
			default:
				if err != nil {
					t.Errorf("%s: %v", k, err)
				}
				if !has(t, db, k) {
					t.Errorf("%s: an acknowledged write is not in the file", k)
				}
			}
		}
	}
	t.Logf("%d writes in %d commits", writers*each, commits)
	if commits >= writers*each*3/5 {
		t.Errorf("%d commits for %d successful concurrent writes: no grouping", commits, writers*each*3/5)
	}
}

// TestGroupCommitRetries checks the retry path: a write whose
// group failed runs again, and its function sees a fresh transaction.
func TestGroupCommitRetries(t *testing.T) {
	db := openTest(t)
	var mu sync.Mutex
	runs := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range 16 {
		wg.Go(func() {
			<-start
			k := fmt.Sprint(w)
			err := db.commit.do(func(tx *bbolt.Tx) error {
				mu.Lock()
				runs[k]++
				mu.Unlock()
				if w == 3 {
					return errors.New("poison")
				}
				return putTest(k)(tx)
			})
			if (w == 3) != (err != nil) {
				t.Errorf("writer %d: err = %v", w, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for w := range 16 {
		if k := fmt.Sprint(w); w != 3 && !has(t, db, k) {
			t.Errorf("writer %d's write is missing", w)
		}
	}
	if has(t, db, "3") {
		t.Errorf("the failed write is in the file")
	}
}

// TestGroupWaitsForAnnounced checks that a commit waits for a write
// announced before it started (its writer is encoding it), so both share
// one transaction, and that a write announced but never submitted holds a
// commit back no longer than gatherMax.
func TestGroupWaitsForAnnounced(t *testing.T) {
	db := openTest(t)
	c := &db.commit
	setMax := func(d time.Duration) {
		c.mu.Lock()
		c.gatherMax = d
		c.mu.Unlock()
	}
	// A lone writer commits at once, alone.
	before := c.commits.Load()
	if err := c.do(putTest("lone")); err != nil {
		t.Fatal(err)
	}
	if n := c.commits.Load() - before; n != 1 {
		t.Fatalf("a lone write took %d commits", n)
	}

	// Long enough for this test's goroutines to be scheduled on a loaded
	// machine; the wait ends when the announced write arrives.
	setMax(time.Minute)
	tk := c.announce()
	before = c.commits.Load()
	first := make(chan error, 1)
	go func() { first <- c.do(putTest("first")) }()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := c.submit(tk, func(tx *bbolt.Tx, alone bool) error {
		if alone {
			return errors.New("the announced write was committed alone")
		}
		return putTest("announced")(tx)
	}, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := c.commits.Load() - before; n != 1 {
		t.Fatalf("the announced write and the one waiting for it took %d commits, want 1", n)
	}
	for _, k := range []string{"first", "announced"} {
		if !has(t, db, k) {
			t.Fatalf("%q is not stored", k)
		}
	}

	// An announced write that never comes delays a commit by gatherMax.
	const wait = 20 * time.Millisecond
	setMax(wait)
	tk = c.announce()
	defer tk.cancel()
	start := time.Now()
	if err := c.do(putTest("late")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < wait || d > 100*wait {
		t.Fatalf("commit with an announced write outstanding took %v, want about %v", d, wait)
	}
}
