package bolt

import (
	"testing"

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
