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
func open(t testing.TB) *bolt.DB { return openConfig(t, bolt.Config{}) }

// openConfig is open with cfg.
func openConfig(t testing.TB, cfg bolt.Config) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "store.db"), cfg)
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
	sessiontest.RunKeyOrder(t, func(t *testing.T) session.Service { return open(t).Sessions() })
}

// TestSessionServiceConformanceStateLimit runs the suite through the state
// bound the server puts around the store (session.WithStateLimit), whose
// Create reads app and user state through a probe session of the store.
func TestSessionServiceConformanceStateLimit(t *testing.T) {
	newService := func(t *testing.T) session.Service { return session.WithStateLimit(open(t).Sessions(), 0) }
	sessiontest.Run(t, newService)
	sessiontest.RunKeyOrder(t, newService)
}

// TestSessionServiceConformanceCache runs the suite without the session
// cache, and with one so small that it keeps dropping sessions.
func TestSessionServiceConformanceCache(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"off", -1}, {"tiny", 4 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			newService := func(t *testing.T) session.Service {
				return openConfig(t, bolt.Config{SessionCacheBytes: c.bytes}).Sessions()
			}
			sessiontest.Run(t, newService)
			sessiontest.RunKeyOrder(t, newService)
		})
	}
}

func TestArtifactServiceConformance(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Service { return open(t).Artifacts() })
}
