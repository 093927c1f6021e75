package postgres_test

import (
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
