package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Config configures Open. The zero value is ready to use.
type Config struct {
	// ConnectTimeout bounds how long Open keeps trying to reach the
	// database, with exponential backoff between tries (100 ms doubling up
	// to 5 s). Zero means one try only.
	ConnectTimeout time.Duration
	// MaxConns caps the pool's connections. Zero means pool_max_conns
	// from the URL, or DefaultMaxConns. Each commit waits for its WAL
	// flush on a connection of its own, so concurrent appends commit
	// together only as far as the pool lets them run at once.
	MaxConns int32
	// Logger receives connection retries and migrations. Nil: slog.Default.
	Logger *slog.Logger
	// SessionCacheBytes bounds the decoded session histories a replica
	// keeps so that Get reads only the events stored since (see
	// SessionService). Zero means DefaultSessionCacheBytes; negative, no
	// cache.
	SessionCacheBytes int64
}

// DefaultMaxConns is the pool size when neither Config.MaxConns nor the
// URL's pool_max_conns sets one: enough concurrent commits to share WAL
// flushes, few enough that several replicas stay under PostgreSQL's
// default max_connections (100).
const DefaultMaxConns = 16

// DB is one PostgreSQL database holding google-adk's session tables and
// adkhost's own. It is safe for concurrent use; every replica opens its
// own DB on the same database.
type DB struct {
	pool      *pgxpool.Pool
	log       *slog.Logger
	sessions  *SessionService
	artifacts *ArtifactService
	memory    *MemoryService
	registry  *Registry
}

// Open connects to the database named by url (a postgres:// URL or a
// key=value connection string, as pgx reads them), retrying within
// cfg.ConnectTimeout, and runs the migrations this build knows that the
// database lacks. Concurrent Opens (replicas starting together) migrate
// once: migrations run under a transaction-level advisory lock.
func Open(ctx context.Context, url string, cfg Config) (*DB, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: connection string %s: %w", Redact(url), err)
	}
	switch {
	case cfg.MaxConns > 0:
		pcfg.MaxConns = cfg.MaxConns
	case !strings.Contains(url, "pool_max_conns"):
		pcfg.MaxConns = DefaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", Redact(url), err)
	}
	if err := connect(ctx, pool, url, cfg.ConnectTimeout, log); err != nil {
		pool.Close()
		return nil, err
	}
	db := &DB{pool: pool, log: log}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	cacheBytes := cfg.SessionCacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultSessionCacheBytes
	}
	db.sessions = &SessionService{db: db, cache: newSessionCache(cacheBytes)}
	db.artifacts = &ArtifactService{db: db}
	db.memory = &MemoryService{db: db}
	db.registry = &Registry{db: db}
	return db, nil
}

// connect pings the database until it answers or timeout has passed.
func connect(ctx context.Context, pool *pgxpool.Pool, url string, timeout time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := pool.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !time.Now().Add(wait).Before(deadline) || !retryable(err) {
			return fmt.Errorf("postgres: cannot reach the database at %s after %d attempt(s) over %v: %w (is PostgreSQL running and the URL right?)",
				Redact(url), try, timeout.Round(time.Millisecond), err)
		}
		log.Warn("postgres: database not reachable, retrying", "url", Redact(url), "attempt", try, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// retryable reports whether a connection error may go away by itself: the
// server down or starting, not a wrong password or database name.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P03", "53300": // cannot_connect_now (starting up), too_many_connections
			return true
		}
		return false
	}
	return true
}

// Redact returns a connection URL with its password replaced by "xxxxx".
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Pool returns the connection pool, for tests and tools.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Sessions returns the session store (google-adk's tables).
func (db *DB) Sessions() *SessionService { return db.sessions }

// Artifacts returns the artifact store.
func (db *DB) Artifacts() *ArtifactService { return db.artifacts }

// Memory returns the memory store.
func (db *DB) Memory() *MemoryService { return db.memory }

// Registry returns the app and module registry.
func (db *DB) Registry() *Registry { return db.registry }

// Close closes the pool's connections, waiting for those in use.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// tx runs fn in a transaction, committed if fn returns nil.
func (db *DB) tx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db.pool, opts, fn)
}
