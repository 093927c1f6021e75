package bolt

import (
	"testing"

	bbolt "go.etcd.io/bbolt"
)

// CountEvents returns the number of events in the file, of all sessions.
func CountEvents(t testing.TB, db *DB) int {
	t.Helper()
	n := 0
	if err := db.view(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucketEvents).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
