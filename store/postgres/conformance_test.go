package postgres_test

import (
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/artifact/artifacttest"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/memory/memorytest"
	"github.com/adkhost/adkhost/store/registry"
	"github.com/adkhost/adkhost/store/registry/registrytest"
	"log/slog"
	"os"
	"testing"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/session/sessiontest"
	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/store/postgres"
)

// quiet drops the store's logs (migrations, retries).
var quiet = slog.New(slog.DiscardHandler)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on a new database, closed at cleanup.
func open(t testing.TB) *postgres.DB {
	t.Helper()
	return openURL(t, pgtest.Database(t))
}

func openURL(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, postgres.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSessionServiceConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Service { return open(t).Sessions() })
}

// TestSessionServiceConformanceStateLimit runs the suite through the state
// bound the server puts around the store (session.WithStateLimit), whose
// Create reads app and user state through a probe session of the store.
func TestSessionServiceConformanceStateLimit(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Service { return session.WithStateLimit(open(t).Sessions(), 0) })
}

func TestArtifactServiceConformance(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Service { return open(t).Artifacts() })
}

func TestMemoryServiceConformance(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Service { return open(t).Memory() })
}

func TestRegistryConformance(t *testing.T) {
	registrytest.Run(t, func(t *testing.T) registry.Registry { return open(t).Registry() })
}
