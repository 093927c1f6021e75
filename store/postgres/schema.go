package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order, each once, recorded in
// adkhost_migrations. A released migration never changes: a new schema
// change is a new entry.
//
// Migration 1 is google-adk 2.13's DatabaseSessionService schema v1 as its
// SQLAlchemy models create it on PostgreSQL (google/adk/sessions/schemas/
// v1.py): the same tables, columns, types, keys and index, with IF NOT
// EXISTS so a database google-adk made first is taken as it is.
var migrations = []struct {
	description string
	sql         string
}{
	{"google-adk DatabaseSessionService schema v1", `
CREATE TABLE IF NOT EXISTS adk_internal_metadata (
	key VARCHAR(128) NOT NULL,
	value VARCHAR(256) NOT NULL,
	PRIMARY KEY (key)
);
CREATE TABLE IF NOT EXISTS sessions (
	app_name VARCHAR(128) NOT NULL,
	user_id VARCHAR(128) NOT NULL,
	id VARCHAR(128) NOT NULL,
	state JSONB NOT NULL,
	create_time TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	update_time TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (app_name, user_id, id)
);
CREATE TABLE IF NOT EXISTS app_states (
	app_name VARCHAR(128) NOT NULL,
	state JSONB NOT NULL,
	update_time TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (app_name)
);
CREATE TABLE IF NOT EXISTS user_states (
	app_name VARCHAR(128) NOT NULL,
	user_id VARCHAR(128) NOT NULL,
	state JSONB NOT NULL,
	update_time TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (app_name, user_id)
);
CREATE TABLE IF NOT EXISTS events (
	id VARCHAR(128) NOT NULL,
	app_name VARCHAR(128) NOT NULL,
	user_id VARCHAR(128) NOT NULL,
	session_id VARCHAR(128) NOT NULL,
	invocation_id VARCHAR(256) NOT NULL,
	timestamp TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	event_data JSONB,
	PRIMARY KEY (id, app_name, user_id, session_id),
	FOREIGN KEY (app_name, user_id, session_id) REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_events_app_user_session_ts_id ON events (app_name, user_id, session_id, timestamp DESC, id DESC);
INSERT INTO adk_internal_metadata (key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO NOTHING;
`},
	{"adkhost artifacts, memories and registry", `
CREATE TABLE adkhost_artifacts (
	app_name TEXT NOT NULL,
	user_id TEXT NOT NULL,
	session_id TEXT NOT NULL, -- '' for a user: artifact
	name TEXT NOT NULL,
	version INTEGER NOT NULL,
	part BYTEA NOT NULL,      -- the genai Part's JSON
	PRIMARY KEY (app_name, user_id, session_id, name, version)
);
CREATE TABLE adkhost_memory_sessions (
	app_name TEXT NOT NULL,
	user_id TEXT NOT NULL,
	session_id TEXT NOT NULL,
	ordinal BIGSERIAL NOT NULL,
	PRIMARY KEY (app_name, user_id, session_id)
);
CREATE TABLE adkhost_memories (
	app_name TEXT NOT NULL,
	user_id TEXT NOT NULL,
	ordinal BIGINT NOT NULL,  -- the session's, from adkhost_memory_sessions
	idx BIGINT NOT NULL,      -- from 1 within the session
	memory_id TEXT NOT NULL,
	record BYTEA NOT NULL,    -- memory.Record, JSON
	PRIMARY KEY (app_name, user_id, ordinal, idx)
);
CREATE INDEX adkhost_memories_id ON adkhost_memories (app_name, user_id, memory_id);
CREATE TABLE adkhost_memory_deleted (
	app_name TEXT NOT NULL,
	user_id TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	PRIMARY KEY (app_name, user_id, memory_id)
);
CREATE TABLE adkhost_apps (
	name TEXT NOT NULL,
	version INTEGER NOT NULL,
	created TIMESTAMPTZ NOT NULL,
	definition BYTEA NOT NULL,
	PRIMARY KEY (name, version)
);
CREATE TABLE adkhost_app_sequences (
	name TEXT PRIMARY KEY,
	last_version INTEGER NOT NULL
);
CREATE TABLE adkhost_modules (
	sha256 BYTEA PRIMARY KEY,
	info JSONB NOT NULL,
	wasm BYTEA NOT NULL
);
`},
}

// SchemaVersion is the number of migrations this build knows.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key migrations hold ("adkhost" in
// ASCII), so replicas starting together migrate once.
const migrationLock = 0x61646b686f7374

// migrate applies the migrations the database lacks, in one transaction.
func (db *DB) migrate(ctx context.Context) error {
	return db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("postgres: migration lock: %w", err)
		}
		if err := checkADKSchema(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS adkhost_migrations (
	version INTEGER PRIMARY KEY,
	description TEXT NOT NULL,
	applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`); err != nil {
			return fmt.Errorf("postgres: create adkhost_migrations: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM adkhost_migrations`).Scan(&have); err != nil {
			return fmt.Errorf("postgres: read schema version: %w", err)
		}
		if have > len(migrations) {
			return fmt.Errorf("postgres: the database has adkhost schema version %d, this build knows up to %d; run the adkhost release that migrated it (or newer)", have, len(migrations))
		}
		for i := have; i < len(migrations); i++ {
			m := migrations[i]
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("postgres: migration %d (%s): %w", i+1, m.description, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO adkhost_migrations (version, description) VALUES ($1, $2)`, i+1, m.description); err != nil {
				return fmt.Errorf("postgres: record migration %d: %w", i+1, err)
			}
			db.log.Info("postgres: migrated", "version", i+1, "what", m.description)
		}
		return nil
	})
}

// checkADKSchema refuses a database with google-adk session tables of
// another schema version: v0 (an events table with a column per field,
// no event_data) or a schema_version other than "1".
func checkADKSchema(ctx context.Context, tx pgx.Tx) error {
	var hasEvents, hasEventData, hasMeta bool
	err := tx.QueryRow(ctx, `SELECT
	to_regclass('events') IS NOT NULL,
	EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'events' AND column_name = 'event_data'),
	to_regclass('adk_internal_metadata') IS NOT NULL`).Scan(&hasEvents, &hasEventData, &hasMeta)
	if err != nil {
		return fmt.Errorf("postgres: inspect schema: %w", err)
	}
	if hasEvents && !hasEventData {
		return errors.New("postgres: the database holds google-adk's session schema v0 (an events table without event_data); migrate it to schema v1 with google-adk's migration tool (adk migrate session) first")
	}
	if !hasMeta {
		return nil
	}
	var v string
	err = tx.QueryRow(ctx, `SELECT value FROM adk_internal_metadata WHERE key = 'schema_version'`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: read adk_internal_metadata: %w", err)
	}
	if v != "1" {
		return fmt.Errorf("postgres: adk_internal_metadata says google-adk session schema version %q; adkhost reads and writes version \"1\" only", v)
	}
	return nil
}
