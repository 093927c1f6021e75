package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/artifact/artifacttest"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
	"github.com/adkhost/adkhost/store/bolt"
)

// open opens a new store in t's temporary directory, closed at cleanup.
func open(t testing.TB) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "store.db"), bolt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestSessionServiceConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Service { return open(t).Sessions() })
}

func TestArtifactServiceConformance(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Service { return open(t).Artifacts() })
}
