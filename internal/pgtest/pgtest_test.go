package pgtest_test

import (
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/adkhost/adkhost/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestDatabase(t *testing.T) {
	url := pgtest.Database(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("new database has %d tables", n)
	}
	if url == pgtest.Database(t) {
		t.Errorf("two databases share a URL")
	}
}

func TestRestart(t *testing.T) {
	c := pgtest.Get(t)
	url := pgtest.Database(t)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	conn.Close(t.Context())
}
