package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

// MemoryService is a memory.Service in adkhost's tables with
// memory.InMemoryService's semantics (google-adk's in-memory memory
// service): its keyword search and ranking (memory.Rank), equal scores in
// ingestion order, a deleted id never ingested again, no AddMemories. Each
// event is stored as a memory.Record (content and searchable words); a
// session's ordinal, given when it is first added, keeps the ingestion
// order. Get it from DB.Memory. It is safe for concurrent use by many
// processes: the writes to one session's memories hold its row in
// adkhost_memory_sessions.
type MemoryService struct {
	db *DB
}

var _ memory.Service = (*MemoryService)(nil)

// records builds the stored records of events, skipping those without
// content.
func records(events []*session.Event) ([]*memory.Record, [][]byte, error) {
	var recs []*memory.Record
	var vals [][]byte
	for _, e := range events {
		r, err := memory.NewRecord(e)
		if err != nil {
			return nil, nil, err
		}
		if r == nil {
			continue
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, err
		}
		recs, vals = append(recs, r), append(vals, b)
	}
	return recs, vals, nil
}

// ordinal returns the session's ordinal, making it on first use, and
// locks its row until tx ends.
func ordinal(ctx context.Context, tx pgx.Tx, app, user, sessionID string) (int64, error) {
	var ord int64
	err := tx.QueryRow(ctx, `INSERT INTO adkhost_memory_sessions (app_name, user_id, session_id) VALUES ($1, $2, $3)
ON CONFLICT (app_name, user_id, session_id) DO UPDATE SET session_id = EXCLUDED.session_id
RETURNING ordinal`, app, user, sessionID).Scan(&ord)
	return ord, err
}

// put stores recs after index last, except deleted ids and ids in have.
func put(ctx context.Context, tx pgx.Tx, app, user string, ord, last int64, recs []*memory.Record, vals [][]byte, have map[string]bool) error {
	if len(recs) == 0 {
		return nil
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	rows, err := tx.Query(ctx, `SELECT memory_id FROM adkhost_memory_deleted WHERE app_name = $1 AND user_id = $2 AND memory_id = ANY($3)`, app, user, ids)
	if err != nil {
		return err
	}
	deleted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	skip := map[string]bool{}
	for _, id := range deleted {
		skip[id] = true
	}
	var b pgx.Batch
	for i, r := range recs {
		if skip[r.ID] || have[r.ID] {
			continue
		}
		last++
		b.Queue(`INSERT INTO adkhost_memories (app_name, user_id, ordinal, idx, memory_id, record) VALUES ($1, $2, $3, $4, $5, $6)`,
			app, user, ord, last, r.ID, vals[i])
		if have != nil {
			have[r.ID] = true
		}
	}
	return tx.SendBatch(ctx, &b).Close()
}

// AddSession implements memory.Service: the session's events with content,
// minus deleted ids, replace what the service took from it before.
func (m *MemoryService) AddSession(ctx context.Context, s *session.Session) error {
	recs, vals, err := records(s.Events())
	if err != nil {
		return err
	}
	err = m.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ord, err := ordinal(ctx, tx, s.AppName, s.UserID, s.ID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM adkhost_memories WHERE app_name = $1 AND user_id = $2 AND ordinal = $3`, s.AppName, s.UserID, ord); err != nil {
			return err
		}
		return put(ctx, tx, s.AppName, s.UserID, ord, 0, recs, vals, nil)
	})
	if err != nil {
		return fmt.Errorf("memory: add session %s: %w", s.ID, err)
	}
	return nil
}

// AddEvents implements memory.Service: events with content are appended
// to the session's, skipping ids it already has or that were deleted.
// CustomMetadata is ignored.
func (m *MemoryService) AddEvents(ctx context.Context, req memory.AddEventsRequest) error {
	recs, vals, err := records(req.Events)
	if err != nil {
		return err
	}
	sid := req.SessionID
	if sid == "" {
		sid = memory.UnknownSessionID
	}
	err = m.db.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ord, err := ordinal(ctx, tx, req.AppName, req.UserID, sid)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT memory_id, idx FROM adkhost_memories WHERE app_name = $1 AND user_id = $2 AND ordinal = $3`, req.AppName, req.UserID, ord)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		var last int64
		for rows.Next() {
			var id string
			var idx int64
			if err := rows.Scan(&id, &idx); err != nil {
				rows.Close()
				return err
			}
			have[id] = true
			last = max(last, idx)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return put(ctx, tx, req.AppName, req.UserID, ord, last, recs, vals, have)
	})
	if err != nil {
		return fmt.Errorf("memory: add events to session %s: %w", sid, err)
	}
	return nil
}

// AddMemories implements memory.Service; like memory.InMemoryService
// (and google-adk's), this service does not support direct writes.
func (m *MemoryService) AddMemories(context.Context, string, string, []memory.Entry, map[string]any) error {
	return &memory.NotSupportedError{Op: "AddMemories", Message: memory.MsgAddMemoriesNotSupported}
}

// Search implements memory.Service: the user's records in ingestion order,
// ranked by memory.Rank.
func (m *MemoryService) Search(ctx context.Context, appName, userID, query string) (*memory.SearchResponse, error) {
	rows, err := m.db.pool.Query(ctx, `SELECT record FROM adkhost_memories WHERE app_name = $1 AND user_id = $2 ORDER BY ordinal, idx`, appName, userID)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	var recs []*memory.Record
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		r := new(memory.Record)
		if err := json.Unmarshal(b, r); err != nil {
			rows.Close()
			return nil, fmt.Errorf("memory: stored record: %w", err)
		}
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	hits := memory.Rank(query, func(yield func(*memory.Record) bool) {
		for _, r := range recs {
			if !yield(r) {
				return
			}
		}
	})
	return memory.Response(hits)
}

// Delete implements memory.Service: the event leaves every session of the
// user that holds it, and, if some session held it, its id is never
// ingested again (as memory.InMemoryService).
func (m *MemoryService) Delete(ctx context.Context, appName, userID, memoryID string) error {
	if memoryID == "" {
		return nil
	}
	_, err := m.db.pool.Exec(ctx, `WITH d AS (
	DELETE FROM adkhost_memories WHERE app_name = $1 AND user_id = $2 AND memory_id = $3 RETURNING 1
)
INSERT INTO adkhost_memory_deleted (app_name, user_id, memory_id)
SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM d)
ON CONFLICT DO NOTHING`, appName, userID, memoryID)
	if err != nil {
		return fmt.Errorf("memory: delete %s: %w", memoryID, err)
	}
	return nil
}
