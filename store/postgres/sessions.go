package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/adkhost/adkhost/engine/session"
)

// SessionService is a session.Service in google-adk's DatabaseSessionService
// tables (schema v1), readable and writable by google-adk 2.13 on the same
// database. Get it from DB.Sessions. It is safe for concurrent use, by
// many goroutines and many processes.
//
// A session's revision is its update_time in microseconds since the
// epoch: google-adk's stale-writer marker. AppendEvent stores the event
// only if update_time is still the one the session copy was read at, in
// the same statement that moves it (to the event's timestamp, as
// google-adk does, or one microsecond past the stored one if that is not
// later), so a copy that another writer, here or in google-adk, has
// appended through since, is refused with session.ErrStale, and so is
// adkhost's copy in google-adk.
type SessionService struct {
	db *DB
	// locks serialize appends through copies of one session in this
	// process, from reading the copy's revision to Commit, so appends
	// through one copy from several goroutines are not stale to each
	// other.
	locks keyLocks
	// cache holds the decoded history of sessions read or written lately
	// (nil: none).
	cache *sessionCache
}

var _ session.Service = (*SessionService)(nil)

// maxKey is google-adk's DEFAULT_MAX_KEY_LENGTH: app names, user ids,
// session ids and event ids are VARCHAR(128).
const maxKey = 128

func checkKeys(keys ...string) error {
	for _, k := range keys {
		if n := utf8.RuneCountInString(k); n > maxKey {
			return fmt.Errorf("%.32q… is %d characters long; google-adk's session tables hold at most %d", k, n, maxKey)
		}
	}
	return nil
}

// micros is t in google-adk's storage precision, in UTC.
func micros(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func revisionOf(t time.Time) uint64 { return uint64(t.UnixMicro()) }

// stateJSON encodes a scope's state or delta; nil for none.
func stateJSON(m map[string]any, what string) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, checkNUL(b, what)
}

// decodeState adds the keys of a stored state object to out, with prefix.
func decodeState(b []byte, prefix string, out map[string]any) error {
	if len(b) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("stored state: %w", err)
	}
	for k, v := range m {
		out[prefix+k] = v
	}
	return nil
}

const createSQL = `
WITH s AS (
	INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time)
	VALUES ($1, $2, $3, coalesce($4::jsonb, '{}'), $7, $7)
	ON CONFLICT DO NOTHING
	RETURNING 1
), a AS (
	INSERT INTO app_states (app_name, state, update_time)
	SELECT $1, coalesce($5::jsonb, '{}'), $7 FROM s
	ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
	WHERE $5::jsonb IS NOT NULL
	RETURNING state
), u AS (
	INSERT INTO user_states (app_name, user_id, state, update_time)
	SELECT $1, $2, coalesce($6::jsonb, '{}'), $7 FROM s
	ON CONFLICT (app_name, user_id) DO UPDATE SET state = user_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
	WHERE $6::jsonb IS NOT NULL
	RETURNING state
)
SELECT EXISTS (SELECT 1 FROM s),
	coalesce((SELECT state FROM a), (SELECT state FROM app_states WHERE app_name = $1)),
	coalesce((SELECT state FROM u), (SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2))`

// Create implements session.Service in one statement: the session row,
// and the app and user state rows google-adk expects every session to
// have, created or merged with the initial state's app: and user: keys.
func (s *SessionService) Create(ctx context.Context, req *session.CreateRequest) (*session.Session, error) {
	id := req.SessionID
	if id == "" {
		id = uuid.NewString()
	}
	fail := func(err error) (*session.Session, error) {
		return nil, session.KeyError(req.AppName, req.UserID, id, err)
	}
	if err := checkKeys(req.AppName, req.UserID, id); err != nil {
		return fail(err)
	}
	d := session.SplitDelta(req.State)
	own, err := stateJSON(d.Session, "session state")
	if err != nil {
		return fail(err)
	}
	app, err := stateJSON(d.App, "app: state")
	if err != nil {
		return fail(err)
	}
	user, err := stateJSON(d.User, "user: state")
	if err != nil {
		return fail(err)
	}
	now := micros(time.Now())
	var created bool
	var appState, userState []byte
	err = s.db.pool.QueryRow(ctx, createSQL, req.AppName, req.UserID, id, jsonArg(own), jsonArg(app), jsonArg(user), now).
		Scan(&created, &appState, &userState)
	if err != nil {
		return fail(err)
	}
	if !created {
		return fail(session.ErrAlreadyExists)
	}
	state := map[string]any{}
	for _, part := range []struct {
		b      []byte
		prefix string
	}{{own, ""}, {appState, session.AppPrefix}, {userState, session.UserPrefix}} {
		if err := decodeState(part.b, part.prefix, state); err != nil {
			return fail(err)
		}
	}
	return session.New(req.AppName, req.UserID, id, state, nil, now, revisionOf(now)), nil
}

// jsonArg passes JSON text to a jsonb parameter, nil as NULL.
func jsonArg(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Get implements session.Service: one round trip, a batch in a
// repeatable-read transaction, so the session row, its events and the app
// and user state are one snapshot. Of the events, only those stored after
// the cached history's newest are read (see sessionCache); without a
// cached history, a Get asking for recent events only reads just those
// (google-adk's query: newest first by timestamp and id, limited), any
// other reads them all and fills the cache.
func (s *SessionService) Get(ctx context.Context, req *session.GetRequest) (*session.Session, error) {
	key := sessionKey(req.AppName, req.UserID, req.SessionID)
	if c, ok := s.cache.get(key); ok {
		sess, err := s.get(ctx, req, key, &c)
		if !errors.Is(err, errCacheMismatch) {
			return sess, err
		}
		s.cache.remove(key)
	}
	return s.get(ctx, req, key, nil)
}

// errCacheMismatch says the cached history is not a prefix of the stored one.
var errCacheMismatch = errors.New("cached history does not match the stored one")

func sessionKey(app, user, id string) string { return app + "\x00" + user + "\x00" + id }

// get is Get on top of the cached history c (nil: none).
func (s *SessionService) get(ctx context.Context, req *session.GetRequest, key string, c *cached) (*session.Session, error) {
	fail := func(err error) (*session.Session, error) {
		return nil, session.KeyError(req.AppName, req.UserID, req.SessionID, err)
	}
	// whole: the events read, after c's, are the rest of the history, and
	// the cache gets it all.
	whole := c != nil || (s.cache != nil && req.NumRecentEvents <= 0 && req.After.IsZero())
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SELECT state, update_time, create_time,
	(SELECT count(*) FROM events WHERE app_name = $1 AND user_id = $2 AND session_id = $3)
FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3`, req.AppName, req.UserID, req.SessionID)
	q := `SELECT id, invocation_id, timestamp, event_data FROM events WHERE app_name = $1 AND user_id = $2 AND session_id = $3`
	args := []any{req.AppName, req.UserID, req.SessionID}
	switch {
	case c != nil:
		if ts, id, ok := c.last(); ok {
			args = append(args, ts, id)
			q += " AND (timestamp, id) > ($4, $5)"
		}
	case !whole && !req.After.IsZero():
		args = append(args, micros(req.After))
		q += fmt.Sprintf(" AND timestamp >= $%d", len(args))
	}
	q += " ORDER BY timestamp DESC, id DESC"
	if !whole && req.NumRecentEvents > 0 {
		args = append(args, req.NumRecentEvents)
		q += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	b.Queue(q, args...)
	b.Queue(`SELECT state FROM app_states WHERE app_name = $1`, req.AppName)
	b.Queue(`SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2`, req.AppName, req.UserID)
	b.Queue(`COMMIT`)
	br := s.db.pool.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return fail(err)
	}
	var own []byte
	var updated, created time.Time
	var count int64
	err := br.QueryRow().Scan(&own, &updated, &created, &count)
	if errors.Is(err, pgx.ErrNoRows) {
		return fail(session.ErrNotFound)
	}
	if err != nil {
		return fail(err)
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	events, ts, size, err := scanEvents(rows)
	if err != nil {
		return fail(err)
	}
	slices.Reverse(events)
	slices.Reverse(ts)
	var appState, userState []byte
	if err := scanOptional(br.QueryRow(), &appState); err != nil {
		return fail(err)
	}
	if err := scanOptional(br.QueryRow(), &userState); err != nil {
		return fail(err)
	}
	if _, err := br.Exec(); err != nil {
		return fail(err)
	}
	if whole {
		if c != nil {
			if !c.created.Equal(created) || int64(c.count()+len(events)) != count {
				return nil, errCacheMismatch
			}
			prior, priorTS, err := c.decoded()
			if err != nil {
				return nil, errCacheMismatch
			}
			events, ts, size = slices.Concat(prior, events), slices.Concat(priorTS, ts), size+c.jsonBytes
		}
		s.cache.put(key, created, revisionOf(updated), events, ts, size)
		events = selectEvents(events, ts, req.NumRecentEvents, req.After)
	}
	state := map[string]any{}
	for _, part := range []struct {
		b      []byte
		prefix string
	}{{own, ""}, {appState, session.AppPrefix}, {userState, session.UserPrefix}} {
		if err := decodeState(part.b, part.prefix, state); err != nil {
			return fail(err)
		}
	}
	return session.New(req.AppName, req.UserID, req.SessionID, state, events, updated, revisionOf(updated)), nil
}

func scanOptional(r pgx.Row, dst *[]byte) error {
	err := r.Scan(dst)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// scanEvents decodes rows of id, invocation_id, timestamp, event_data
// (see decodeEvent), returning the events, their stored timestamps and
// the size of their stored JSON.
func scanEvents(rows pgx.Rows) ([]*session.Event, []time.Time, int, error) {
	defer rows.Close()
	var out []*session.Event
	var ts []time.Time
	size := 0
	for rows.Next() {
		var r storedEvent
		if err := rows.Scan(&r.id, &r.invocation, &r.ts, &r.data); err != nil {
			return nil, nil, 0, err
		}
		e, err := decodeEvent(r)
		if err != nil {
			return nil, nil, 0, err
		}
		out = append(out, e)
		ts = append(ts, r.ts)
		size += len(r.data)
	}
	return out, ts, size, rows.Err()
}

// decodeEvent decodes a stored event as google-adk's StorageEvent.to_event
// does: the columns give the id and invocation id, event_data the rest,
// its timestamp preferred to the column's.
func decodeEvent(r storedEvent) (*session.Event, error) {
	e := new(session.Event)
	switch {
	case r.camel:
		if err := json.Unmarshal(r.data, e); err != nil {
			return nil, fmt.Errorf("event %q: %w", r.id, err)
		}
	case len(r.data) > 0 && string(r.data) != "null":
		var err error
		if e, err = eventFromPython(r.data); err != nil {
			return nil, fmt.Errorf("event %q: stored event_data: %w", r.id, err)
		}
	}
	e.ID, e.InvocationID = r.id, r.invocation
	if e.Timestamp.IsZero() {
		e.Timestamp = r.ts
	}
	return e, nil
}

// decoded returns c's history with its pending events decoded.
func (c *cached) decoded() ([]*session.Event, []time.Time, error) {
	if len(c.pending) == 0 {
		return c.events, c.ts, nil
	}
	// c's slices are clipped: these appends copy.
	events := slices.Grow(c.events, len(c.pending))
	ts := slices.Grow(c.ts, len(c.pending))
	for _, p := range c.pending {
		e, err := decodeEvent(p)
		if err != nil {
			return nil, nil, err
		}
		events, ts = append(events, e), append(ts, p.ts)
	}
	return events, ts, nil
}

// List implements session.Service: the sessions oldest update first (ties
// by user id and id, as google-adk orders them), with merged state and no
// events, from one snapshot.
func (s *SessionService) List(ctx context.Context, req *session.ListRequest) ([]*session.Session, error) {
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	if req.UserID != "" {
		b.Queue(`SELECT user_id, id, state, update_time FROM sessions WHERE app_name = $1 AND user_id = $2 ORDER BY update_time, user_id, id`, req.AppName, req.UserID)
		b.Queue(`SELECT user_id, state FROM user_states WHERE app_name = $1 AND user_id = $2`, req.AppName, req.UserID)
	} else {
		b.Queue(`SELECT user_id, id, state, update_time FROM sessions WHERE app_name = $1 ORDER BY update_time, user_id, id`, req.AppName)
		b.Queue(`SELECT user_id, state FROM user_states WHERE app_name = $1`, req.AppName)
	}
	b.Queue(`SELECT state FROM app_states WHERE app_name = $1`, req.AppName)
	b.Queue(`COMMIT`)
	fail := func(err error) ([]*session.Session, error) {
		return nil, fmt.Errorf("list sessions of app %q: %w", req.AppName, err)
	}
	br := s.db.pool.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return fail(err)
	}
	type row struct {
		user, id string
		state    []byte
		updated  time.Time
	}
	var sessions []row
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.user, &r.id, &r.state, &r.updated); err != nil {
			rows.Close()
			return fail(err)
		}
		sessions = append(sessions, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	userStates := map[string]map[string]any{}
	rows, err = br.Query()
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var user string
		var st []byte
		if err := rows.Scan(&user, &st); err != nil {
			rows.Close()
			return fail(err)
		}
		m := map[string]any{}
		if err := decodeState(st, session.UserPrefix, m); err != nil {
			rows.Close()
			return fail(err)
		}
		userStates[user] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	var appJSON []byte
	if err := scanOptional(br.QueryRow(), &appJSON); err != nil {
		return fail(err)
	}
	if _, err := br.Exec(); err != nil {
		return fail(err)
	}
	appState := map[string]any{}
	if err := decodeState(appJSON, session.AppPrefix, appState); err != nil {
		return fail(err)
	}
	out := make([]*session.Session, 0, len(sessions))
	for _, r := range sessions {
		state := map[string]any{}
		if err := decodeState(r.state, "", state); err != nil {
			return fail(err)
		}
		for k, v := range appState {
			state[k] = session.DeepCopy(v)
		}
		for k, v := range userStates[r.user] {
			state[k] = session.DeepCopy(v)
		}
		out = append(out, session.New(req.AppName, r.user, r.id, state, nil, r.updated, revisionOf(r.updated)))
	}
	return out, nil
}

// Delete implements session.Service; the session's events go with it (the
// events table's foreign key cascades).
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	_, err := s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3`, req.AppName, req.UserID, req.SessionID)
	s.cache.remove(sessionKey(req.AppName, req.UserID, req.SessionID))
	if err != nil {
		return session.KeyError(req.AppName, req.UserID, req.SessionID, err)
	}
	return nil
}

// appendSQL stores one event, conditional on the session's update_time
// being the copy's ($6), in one statement. UPDATE re-checks its condition
// on the newest row version when it waited for a concurrent writer, so of
// two appends through copies at one revision exactly one matches.
const appendSQL = `
WITH upd AS (
	UPDATE sessions SET
		state = CASE WHEN $4::jsonb IS NULL THEN state ELSE state || $4::jsonb END,
		update_time = GREATEST($5::timestamp, update_time + interval '1 microsecond')
	WHERE app_name = $1 AND user_id = $2 AND id = $3 AND update_time = $6
	RETURNING update_time
), ev AS (
	INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data)
	SELECT $7, $1, $2, $3, $8, $5, $9::jsonb FROM upd
), a AS (
	INSERT INTO app_states (app_name, state, update_time)
	SELECT $1, $10::jsonb, $12 FROM upd WHERE $10::jsonb IS NOT NULL
	ON CONFLICT (app_name) DO UPDATE SET state = app_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
), u AS (
	INSERT INTO user_states (app_name, user_id, state, update_time)
	SELECT $1, $2, $11::jsonb, $12 FROM upd WHERE $11::jsonb IS NOT NULL
	ON CONFLICT (app_name, user_id) DO UPDATE SET state = user_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
)
SELECT (SELECT update_time FROM upd),
	EXISTS (SELECT 1 FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3)`

// AppendEvent implements session.Service in one statement (see appendSQL):
// the event row with google-adk's event_data, the session's state and
// update_time, and the app and user state, all or nothing.
func (s *SessionService) AppendEvent(ctx context.Context, sess *session.Session, e *session.Event) error {
	if e.Partial {
		return nil
	}
	fail := func(err error) error { return session.KeyError(sess.AppName, sess.UserID, sess.ID, err) }
	if e.ID == "" {
		e.ID = session.NewEventID()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now()
	}
	if err := checkKeys(e.ID); err != nil {
		return fail(fmt.Errorf("event id: %w", err))
	}
	if n := utf8.RuneCountInString(e.InvocationID); n > 256 {
		return fail(fmt.Errorf("invocation id is %d characters long; google-adk's events table holds at most 256", n))
	}
	key := sessionKey(sess.AppName, sess.UserID, sess.ID)
	unlock := s.locks.lock(key)
	defer unlock()
	// As google-adk's append_event, temp: keys leave the event before it
	// is stored, whether or not the append goes through.
	temp := session.TrimTempDelta(e)
	d := session.SplitDelta(e.Actions.StateDelta)
	own, err := stateJSON(d.Session, "state delta")
	if err != nil {
		return fail(err)
	}
	app, err := stateJSON(d.App, "app: state delta")
	if err != nil {
		return fail(err)
	}
	user, err := stateJSON(d.User, "user: state delta")
	if err != nil {
		return fail(err)
	}
	data, camel, err := eventToPython(e)
	if err != nil {
		return fail(fmt.Errorf("encode event %q: %w", e.ID, err))
	}
	if err := checkNUL(data, "event "+e.ID); err != nil {
		return fail(err)
	}
	rev := time.UnixMicro(int64(sess.Revision())).UTC()
	var updated *time.Time
	var exists bool
	err = s.db.pool.QueryRow(ctx, appendSQL,
		sess.AppName, sess.UserID, sess.ID, jsonArg(own), micros(e.Timestamp), rev,
		e.ID, e.InvocationID, string(data), jsonArg(app), jsonArg(user), micros(time.Now())).Scan(&updated, &exists)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return fail(fmt.Errorf("event id %q is already in the session: %w", e.ID, err))
		}
		return fail(err)
	}
	switch {
	case updated != nil:
	case exists:
		return fail(session.ErrStale)
	default:
		return fail(session.ErrNotFound)
	}
	s.cache.append(key, sess.Revision(), revisionOf(*updated), storedEvent{id: e.ID, invocation: e.InvocationID, ts: micros(e.Timestamp), data: camel, camel: true})
	sess.Commit(e, temp, revisionOf(*updated))
	return nil
}

// keyLocks is a set of mutexes by key, each dropped when no one holds or
// waits for it.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (l *keyLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}
