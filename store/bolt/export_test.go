package bolt

import (
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// CountEvents returns the number of events in the file, of all sessions:
// in the log and staged in the tail.
func CountEvents(t testing.TB, db *DB) int {
	t.Helper()
	n := 0
	if err := db.view(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucketEvents).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n + StagedEvents(t, db)
}

// StagedEvents returns the number of events staged in the tail, of all
// sessions.
func StagedEvents(t testing.TB, db *DB) int {
	t.Helper()
	n := 0
	if err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketTail).ForEach(func(_, v []byte) error {
			s, err := decodeStaged(v)
			n += len(s.events)
			return err
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// HoldCommits commits a write that waits for hold to close, and returns
// once it is being committed: writes submitted meanwhile wait behind it.
// release waits for that write to finish.
func HoldCommits(db *DB, hold <-chan struct{}) (release func()) {
	var once sync.Once
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.commit.do(func(tx *bbolt.Tx) error {
			once.Do(func() { close(started) })
			<-hold
			return nil
		})
	}()
	<-started
	return func() { <-done }
}

// WaitPending waits until at least n writes are waiting for a commit.
func WaitPending(db *DB, n int) {
	for {
		db.commit.mu.Lock()
		got := len(db.commit.pending)
		db.commit.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}
