package bolt

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"

	"github.com/adkhost/adkhost/engine/session"
)

// SessionService is a session.Service in the store file (google-adk's
// DatabaseSessionService). Get it from DB.Sessions. It is safe for
// concurrent use.
//
// Every session carries a revision from one counter for the whole file,
// bumped by each create and append. AppendEvent refuses, with an error
// wrapping session.ErrStale, a session copy whose revision is not the
// stored one: another copy appended since it was read, or the session was
// deleted and created again. This is google-adk's stale-writer check, with
// an exact counter where google-adk compares update timestamps.
type SessionService struct {
	db *DB
	// locks serialize appends to one session in this process, from the
	// revision check to Commit (for a queued append, to its queuing), so
	// appends through one copy from several goroutines never see each
	// other as stale.
	locks keyLocks
	// cache holds the decoded history of sessions read or written lately
	// (nil: none); see sessionCache.
	cache *sessionCache

	// queued holds, by what they write (tagged keys, see queuedKey), the
	// appends queued for a caller with a session.Pending and not yet
	// finished (see checkQueued and waitQueued).
	qmu    sync.Mutex
	queued map[string]*queuedKey
}

var _ session.Service = (*SessionService)(nil)

// errAbsent refuses a delete of a session that is not there.
var errAbsent = errors.New("absent")

// Create implements session.Service. It commits one transaction (grouped
// with concurrent writes).
func (s *SessionService) Create(ctx context.Context, req *session.CreateRequest) (*session.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := req.SessionID
	if id == "" {
		id = uuid.NewString()
	}
	fail := func(err error) (*session.Session, error) {
		return nil, session.KeyError(req.AppName, req.UserID, id, err)
	}
	d := session.SplitDelta(req.State)
	o := session.SplitKeyOrder(req.State, req.StateKeyOrder)
	own, err := encodeDelta(d.Session, o.Session)
	if err != nil {
		return fail(err)
	}
	ownState, err := mergeJSON(nil, own)
	if err != nil {
		return fail(err)
	}
	appDelta, err := encodeDelta(d.App, o.App)
	if err != nil {
		return fail(err)
	}
	userDelta, err := encodeDelta(d.User, o.User)
	if err != nil {
		return fail(err)
	}
	key := sessionKey(req.AppName, req.UserID, id)
	ak, uk := appKey(req.AppName), userKey(req.AppName, req.UserID)
	lastUpdate := time.Now().UnixMicro()

	rev := s.db.nextRev()
	var appState, userState []byte
	err = s.db.commit.do(func(tx *bbolt.Tx) error {
		sessions := tx.Bucket(bucketSessions)
		hk := tagKey(key, tagHeader)
		if sessions.Get(hk) != nil {
			return refuse(session.ErrAlreadyExists)
		}
		var err error
		if appState, err = s.mergeStored(tx.Bucket(bucketAppState), ak, appDelta); err != nil {
			return err
		}
		if userState, err = s.mergeStored(tx.Bucket(bucketUserState), uk, userDelta); err != nil {
			return err
		}
		if err := setRev(tx, rev); err != nil {
			return err
		}
		if err := sessions.Put(hk, header{rev: rev, lastUpdate: lastUpdate}.encode()); err != nil {
			return err
		}
		return sessions.Put(tagKey(key, tagState), ownState)
	})
	if err != nil {
		return fail(err)
	}
	s.cache.put(string(key), header{rev: rev, lastUpdate: lastUpdate}, nil, nil, 0, ownState)
	state, orders := map[string]any{}, map[string]json.RawMessage{}
	for _, part := range []struct {
		b      []byte
		prefix string
	}{{ownState, ""}, {appState, session.AppPrefix}, {userState, session.UserPrefix}} {
		if err := decodeState(part.b, part.prefix, state, orders); err != nil {
			return fail(s.db.corrupt("%v", err))
		}
	}
	out := session.New(req.AppName, req.UserID, id, state, nil, time.UnixMicro(lastUpdate), rev)
	out.SetStateKeyOrder(orders)
	return out, nil
}

// mergeStored sets delta's keys in the JSON object stored under key in b
// and returns the object (a copy, valid after the transaction). Without a
// delta it only reads.
func (s *SessionService) mergeStored(b *bbolt.Bucket, key []byte, delta map[string]json.RawMessage) ([]byte, error) {
	cur := b.Get(key)
	if len(delta) == 0 {
		return bytes.Clone(cur), nil
	}
	merged, err := mergeJSON(cur, delta)
	if err != nil {
		return nil, s.db.corrupt("%v", err)
	}
	return merged, b.Put(key, merged)
}

// Get implements session.Service. It runs one read transaction. A session
// whose history is in the cache (read in full or written lately by this
// process, and not changed since) costs a read of its header and state,
// whatever its length. Otherwise Get decodes only the events it returns:
// it follows the session's chain of events from the newest back, and with
// NumRecentEvents or After stops at the first one not asked for. A Get of
// the whole history fills the cache.
func (s *SessionService) Get(ctx context.Context, req *session.GetRequest) (*session.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := sessionKey(req.AppName, req.UserID, req.SessionID)
	// A queued append returned before its commit: waiting for it makes a
	// Get that follows an AppendEvent see its event, as with appends that
	// wait for their commit.
	if err := s.waitQueued(ctx, req.AppName, req.UserID, key); err != nil {
		return nil, err
	}
	whole := req.NumRecentEvents <= 0 && req.After.IsZero()
	var (
		out *session.Session
		// Set when Get read the whole history from the file: what to cache.
		fill     bool
		h        header
		all      []*session.Event
		allTS    []int64
		jsonSz   int
		ownState []byte
	)
	err := s.db.view(func(tx *bbolt.Tx) error {
		cur, ok, err := loadSession(tx, key)
		if err != nil {
			return s.db.corrupt("session %q: %v", req.SessionID, err)
		}
		if !ok {
			return session.ErrNotFound
		}
		state, orders, err := s.state(tx, req.AppName, req.UserID, cur.state, nil, nil)
		if err != nil {
			return err
		}
		var events []*session.Event
		if cached, ts, hit := s.cache.get(string(key), cur.h); hit {
			events = selectEvents(cached, ts, req.NumRecentEvents, req.After)
		} else {
			read, ts, n, err := readEvents(tx.Bucket(bucketEvents), key, cur, req.NumRecentEvents, req.After)
			if err != nil {
				return s.db.corrupt("session %q: %v", req.SessionID, err)
			}
			events = read
			if whole && s.cache != nil {
				// The session and the cache share read: session.New never
				// writes into the slice it is handed.
				fill, h, all, allTS, jsonSz = true, cur.h, read, ts, n
				ownState = bytes.Clone(cur.state)
			}
		}
		out = session.New(req.AppName, req.UserID, req.SessionID, state, events, time.UnixMicro(cur.h.lastUpdate), cur.h.rev)
		out.SetStateKeyOrder(orders)
		return nil
	})
	if err != nil {
		return nil, session.KeyError(req.AppName, req.UserID, req.SessionID, err)
	}
	if fill {
		s.cache.put(string(key), h, all, allTS, jsonSz, ownState)
	}
	return out, nil
}

// state builds a session's merged state, and the key-order hints of its
// values, from its own JSON state and the stored app and user states.
// appState and userState, if not nil, are those states already decoded,
// with their prefixes (List decodes each once), and sharedOrders their
// hints; they are copied, not shared.
func (s *SessionService) state(tx *bbolt.Tx, app, user string, own []byte, appState, userState map[string]any, sharedOrders ...map[string]json.RawMessage) (map[string]any, map[string]json.RawMessage, error) {
	state, orders := map[string]any{}, map[string]json.RawMessage{}
	if err := decodeState(own, "", state, orders); err != nil {
		return nil, nil, s.db.corrupt("%v", err)
	}
	for _, scope := range []struct {
		decoded map[string]any
		bucket  []byte
		key     []byte
		prefix  string
	}{{appState, bucketAppState, appKey(app), session.AppPrefix}, {userState, bucketUserState, userKey(app, user), session.UserPrefix}} {
		if scope.decoded != nil {
			for k, v := range scope.decoded {
				state[k] = session.DeepCopy(v)
			}
			continue
		}
		if err := decodeState(tx.Bucket(scope.bucket).Get(scope.key), scope.prefix, state, orders); err != nil {
			return nil, nil, s.db.corrupt("%v", err)
		}
	}
	for _, o := range sharedOrders {
		maps.Copy(orders, o)
	}
	return state, orders, nil
}

// chain calls fn for the session's events in the log, from last back,
// until fn returns false, checking that each belongs to the session and
// that there are no more than count.
func chain(events *bbolt.Bucket, key []byte, last, count uint64, fn func(seq uint64, r eventRecord) (bool, error)) error {
	n := uint64(0)
	for seq := last; seq != 0; n++ {
		if n >= count {
			return fmt.Errorf("event chain longer than the %d events its header counts", count)
		}
		v := events.Get(u64(seq))
		if v == nil {
			return fmt.Errorf("event %d is missing", seq)
		}
		r, err := decodeEventRecord(v)
		if err != nil {
			return fmt.Errorf("event %d: %v", seq, err)
		}
		if !bytes.Equal(r.session, key) {
			return fmt.Errorf("event %d belongs to another session", seq)
		}
		if r.prev >= seq {
			return fmt.Errorf("event %d points forward to %d", seq, r.prev)
		}
		if more, err := fn(seq, r); err != nil || !more {
			return err
		}
		seq = r.prev
	}
	return nil
}

// readEvents returns a session's events, selected as session.FilterEvents
// does: at most numRecent of the latest (if positive), then only the
// latest run of those at or after after (if set). The newest are the
// staged ones, then the log's. It also returns the events' stored
// timestamps (unix µs) and the size of their JSON, for the cache.
func readEvents(events *bbolt.Bucket, key []byte, cur staged, numRecent int, after time.Time) ([]*session.Event, []int64, int, error) {
	want := cur.h.count
	if numRecent > 0 {
		want = min(want, uint64(numRecent))
	}
	raw := make([][]byte, 0, min(want, 1024)) // want comes from the file: do not trust it with memory
	ts := make([]int64, 0, cap(raw))
	size := 0
	take := func(tsMicro int64, json []byte) bool {
		if uint64(len(raw)) >= want || (!after.IsZero() && time.UnixMicro(tsMicro).Before(after)) {
			return false
		}
		raw = append(raw, json)
		ts = append(ts, tsMicro)
		size += len(json)
		return true
	}
	more := true
	for i := len(cur.events) - 1; i >= 0 && more; i-- {
		more = take(cur.events[i].tsMicro, cur.events[i].json)
	}
	if more {
		err := chain(events, key, cur.h.last, cur.logCount(), func(seq uint64, r eventRecord) (bool, error) {
			return take(r.tsMicro, r.json), nil
		})
		if err != nil {
			return nil, nil, 0, err
		}
	}
	slices.Reverse(raw)
	slices.Reverse(ts)
	out, err := decodeEvents(raw)
	if err != nil {
		return nil, nil, 0, err
	}
	return out, ts, size, nil
}

// decodeEvents decodes events' JSON, spread over the CPUs when there are
// enough of them: decoding is most of what Get costs. raw may point into
// the mmap of a read transaction, so each decoder guards against faults.
func decodeEvents(raw [][]byte) ([]*session.Event, error) {
	out := make([]*session.Event, len(raw))
	decode := func(first, step int) (err error) {
		old := debug.SetPanicOnFault(true)
		defer func() {
			debug.SetPanicOnFault(old)
			if r := recover(); r != nil {
				err = fmt.Errorf("reading an event: %v", r)
			}
		}()
		for i := first; i < len(raw); i += step {
			// Event.UnmarshalJSON checks its input as json.Unmarshal does:
			// calling it directly saves json.Unmarshal's first pass.
			e := new(session.Event)
			if err := e.UnmarshalJSON(raw[i]); err != nil {
				return fmt.Errorf("stored event: %v", err)
			}
			out[i] = e
		}
		return nil
	}
	const perWorker = 4
	workers := min(runtime.GOMAXPROCS(0), len(raw)/perWorker)
	if workers <= 1 {
		return out, decode(0, 1)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { errs[w] = decode(w, workers) })
	}
	errs[0] = decode(0, workers)
	wg.Wait()
	return out, errors.Join(errs...)
}

// List implements session.Service. It reads the sessions of the app (or
// of one user) in one read transaction, without their events.
func (s *SessionService) List(ctx context.Context, req *session.ListRequest) ([]*session.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := appKey(req.AppName)
	if req.UserID != "" {
		prefix = userKey(req.AppName, req.UserID)
	}
	var out []*session.Session
	err := s.db.view(func(tx *bbolt.Tx) error {
		appState, appOrders := map[string]any{}, map[string]json.RawMessage{}
		if err := decodeState(tx.Bucket(bucketAppState).Get(appKey(req.AppName)), session.AppPrefix, appState, appOrders); err != nil {
			return s.db.corrupt("%v", err)
		}
		userStates := map[string]map[string]any{}
		userOrders := map[string]map[string]json.RawMessage{}
		// Tail entries supersede the header and state in sessions; the
		// tail is small, so read those under prefix once.
		tails := map[string]staged{}
		tc := tx.Bucket(bucketTail).Cursor()
		for k, v := tc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = tc.Next() {
			t, err := decodeStaged(v)
			if err != nil {
				return s.db.corrupt("tail entry %q: %v", k, err)
			}
			tails[string(k)] = t
		}
		sessions := tx.Bucket(bucketSessions)
		c := sessions.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if k[len(k)-1] != tagHeader {
				continue
			}
			key := k[:len(k)-1]
			app, rest, err := readPart(key)
			if err != nil {
				return s.db.corrupt("session key %q: %v", k, err)
			}
			user, rest, err := readPart(rest)
			if err != nil {
				return s.db.corrupt("session key %q: %v", k, err)
			}
			id, _, err := readPart(rest)
			if err != nil {
				return s.db.corrupt("session key %q: %v", k, err)
			}
			h, err := decodeHeader(v)
			if err != nil {
				return s.db.corrupt("session %q: %v", id, err)
			}
			own := sessions.Get(tagKey(key, tagState))
			if t, ok := tails[string(key)]; ok {
				h, own = t.h, t.state
			}
			userState := userStates[user]
			if userState == nil {
				userState = map[string]any{}
				userOrders[user] = map[string]json.RawMessage{}
				if err := decodeState(tx.Bucket(bucketUserState).Get(userKey(app, user)), session.UserPrefix, userState, userOrders[user]); err != nil {
					return s.db.corrupt("%v", err)
				}
				userStates[user] = userState
			}
			state, orders, err := s.state(tx, app, user, own, appState, userState, appOrders, userOrders[user])
			if err != nil {
				return err
			}
			sess := session.New(app, user, id, state, nil, time.UnixMicro(h.lastUpdate), h.rev)
			sess.SetStateKeyOrder(orders)
			out = append(out, sess)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions of app %q: %w", req.AppName, err)
	}
	// Oldest update first, ties broken on user id then session id, as
	// google-adk orders them.
	slices.SortFunc(out, func(a, b *session.Session) int {
		return cmp.Or(a.LastUpdateTime().Compare(b.LastUpdateTime()), strings.Compare(a.UserID, b.UserID), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Delete implements session.Service. It removes the session, its state
// and its events in one transaction; app: and user: state stay, as in
// google-adk. Its cost grows with the number of events.
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := sessionKey(req.AppName, req.UserID, req.SessionID)
	hk := tagKey(key, tagHeader)
	err := s.db.commit.do(func(tx *bbolt.Tx) error {
		cur, ok, err := loadSession(tx, key)
		if err != nil {
			return s.db.corrupt("session %q: %v", req.SessionID, err)
		}
		if !ok {
			return refuse(errAbsent)
		}
		events := tx.Bucket(bucketEvents)
		var seqs []uint64
		if err := chain(events, key, cur.h.last, cur.logCount(), func(seq uint64, _ eventRecord) (bool, error) {
			seqs = append(seqs, seq)
			return true, nil
		}); err != nil {
			return s.db.corrupt("session %q: %v", req.SessionID, err)
		}
		for _, seq := range seqs {
			if err := events.Delete(u64(seq)); err != nil {
				return err
			}
		}
		if tail := tx.Bucket(bucketTail); tail.Get(key) != nil {
			if err := tail.Delete(key); err != nil {
				return err
			}
		}
		sessions := tx.Bucket(bucketSessions)
		if err := sessions.Delete(hk); err != nil {
			return err
		}
		return sessions.Delete(tagKey(key, tagState))
	})
	if err == nil || errors.Is(err, errAbsent) {
		s.cache.remove(string(key))
		return nil
	}
	return session.KeyError(req.AppName, req.UserID, req.SessionID, err)
}

// AppendEvent implements session.Service. In one transaction (grouped with
// concurrent writes to other sessions) it checks the copy's revision,
// stores the event, applies its state delta to the session, user and app
// states and moves the session's revision and last update time. Only once
// that transaction is on disk does it trim temp: keys from e and commit e
// to the copy. A partial event is neither stored nor applied.
//
// With a session.Pending in ctx it checks the copy's revision against the
// session's last queued or stored one, queues the transaction and commits
// e to the copy at once; the Pending's Wait reports the write (see
// "Durability" in the package doc).
func (s *SessionService) AppendEvent(ctx context.Context, sess *session.Session, e *session.Event) error {
	if e.Partial {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fail := func(err error) error { return session.KeyError(sess.AppName, sess.UserID, sess.ID, err) }
	key := sessionKey(sess.AppName, sess.UserID, sess.ID)
	unlock := s.locks.lock(string(key))
	defer unlock()
	// Announced once the session's lock is held: a group commit waits for
	// announced writes, and must not wait for one queued behind it.
	t := s.db.commit.announce()
	defer t.cancel()
	rev := sess.Revision()
	// A caller with a Pending takes the write queued, unwaited for; the
	// checks that need no transaction are made here first, so a stale or
	// missing session still fails this call.
	pend := session.PendingFrom(ctx)
	if pend != nil {
		if err := pend.Err(); err != nil {
			return err // an earlier queued append failed: the run stops
		}
		if err := s.checkQueued(key, rev); err != nil {
			return fail(err)
		}
	}

	// Encode the event as it will be stored, without changing e until the
	// append is committed.
	stored := *e
	if stored.ID == "" {
		stored.ID = session.NewEventID()
	}
	if stored.Timestamp.IsZero() {
		stored.Timestamp = time.Now()
	}
	stored.Actions.StateDelta = withoutTemp(e.Actions.StateDelta)
	// Event.MarshalJSON's output is json.Marshal's, already compact:
	// calling it directly skips json.Marshal's second pass over it.
	data, err := stored.MarshalJSON()
	if err != nil {
		return fail(fmt.Errorf("encode event %s: %w", stored.ID, err))
	}
	d := session.SplitDelta(stored.Actions.StateDelta)
	o := session.SplitKeyOrder(stored.Actions.StateDelta, stored.Actions.StateKeyOrder)
	own, err := encodeDelta(d.Session, o.Session)
	if err != nil {
		return fail(err)
	}
	appDelta, err := encodeDelta(d.App, o.App)
	if err != nil {
		return fail(err)
	}
	userDelta, err := encodeDelta(d.User, o.User)
	if err != nil {
		return fail(err)
	}
	// The time google-adk's float seconds keep, which Get's After compares.
	ts := session.FloatToTime(session.TimeToFloat(stored.Timestamp)).UnixMicro()
	// Only scopes with a delta: most events change no app: or user: key.
	var others []*merge
	if len(appDelta) > 0 {
		others = append(others, &merge{bucket: bucketAppState, key: appKey(sess.AppName), delta: appDelta})
	}
	if len(userDelta) > 0 {
		others = append(others, &merge{bucket: bucketUserState, key: userKey(sess.AppName, sess.UserID), delta: userDelta})
	}
	ownMerge, merges, err := s.prepareMerges(rev, &merge{key: key, delta: own}, others)
	if err != nil {
		return fail(err)
	}

	// count and newState are those of the run of apply that committed;
	// newState is the session's own state if the event changed it (nil:
	// unchanged), newMembers its members if known. apply and finish run on
	// the committing goroutine.
	newRev := s.db.nextRev()
	// What a queued append writes, for checkQueued and Get (waitQueued).
	var qkeys []string
	if pend != nil {
		qkeys = append(qkeys, queuedSession+string(key))
		if len(userDelta) > 0 {
			qkeys = append(qkeys, queuedUser+string(userKey(sess.AppName, sess.UserID)))
		}
		if len(appDelta) > 0 {
			qkeys = append(qkeys, queuedApp+string(appKey(sess.AppName)))
		}
	}
	var count uint64
	var newState []byte
	var newMembers map[string]json.RawMessage
	apply := func(tx *bbolt.Tx, alone bool) error {
		cur, ok, err := loadSession(tx, key)
		if err != nil {
			return s.db.corrupt("%v", err)
		}
		if !ok {
			return refuse(session.ErrNotFound)
		}
		if cur.h.rev != rev {
			return refuse(session.ErrStale)
		}
		state := cur.state
		newState, newMembers = nil, nil
		if ownMerge != nil {
			if bytes.Equal(state, ownMerge.base) {
				state, newMembers = ownMerge.merged, ownMerge.members
			} else if state, err = mergeJSON(state, ownMerge.delta); err != nil {
				return s.db.corrupt("%v", err)
			}
			newState = state // a new slice either way, not tx memory
		}
		if err := setRev(tx, newRev); err != nil {
			return err
		}
		count = cur.h.count + 1
		next := staged{
			h:      header{rev: newRev, lastUpdate: ts, last: cur.h.last, count: count},
			state:  state,
			events: append(cur.events[:len(cur.events):len(cur.events)], stagedEvent{tsMicro: ts, json: data}),
			inTail: cur.inTail,
		}
		// A lone append stages the event in the tail; in a group, or
		// when the tail is full, the session's staged events and this one
		// go to the log.
		done := false
		if alone {
			if done, err = s.db.stage(tx, key, next); err != nil {
				return err
			}
		}
		if !done {
			if err := settle(tx, key, next); err != nil {
				return err
			}
		}
		for _, m := range merges {
			if err := m.apply(s, tx); err != nil {
				return err
			}
		}
		return nil
	}
	finish := func(err error) {
		if err == nil {
			// The cache keeps the bytes stored, not e (which the caller
			// still owns), and decodes them when a Get asks, as Get would
			// from the file.
			s.cache.append(string(key), rev, header{rev: newRev, lastUpdate: ts, count: count}, data, ts, newState, newMembers)
		}
		if pend != nil {
			s.unqueue(qkeys)
		}
	}
	if pend == nil {
		if err := s.db.commit.submit(t, apply, finish); err != nil {
			return fail(err)
		}
	} else {
		s.enqueue(qkeys, newRev)
		w, err := s.db.commit.queue(t, apply, finish)
		if err != nil {
			s.unqueue(qkeys)
			return fail(err)
		}
		pend.Add(session.Deferred{Done: w.fin, Err: func() error {
			if w.err != nil {
				return fail(w.err)
			}
			return nil
		}})
	}
	e.ID, e.Timestamp = stored.ID, stored.Timestamp
	temp := session.TrimTempDelta(e)
	sess.Commit(e, temp, newRev)
	return nil
}

// queuedKey is what AppendEvent knows of the queued appends that write a
// key: how many are unfinished and, for a session, the revision the last
// of them gives it. The queued map's keys are tagged by what they name:
// queuedSession, queuedUser or queuedApp, then the bucket key.
type queuedKey struct {
	rev uint64
	n   int
	// idle is closed when the last of them finishes.
	idle chan struct{}
}

const (
	queuedSession = "s"
	queuedUser    = "u"
	queuedApp     = "a"
)

// waitQueued waits until no queued append writes what a Get of the
// session key (of app and user) reads: the session itself, and its user:
// and app: state, which other sessions' appends change too. With nothing
// queued it builds no key.
func (s *SessionService) waitQueued(ctx context.Context, app, user string, key []byte) error {
	s.qmu.Lock()
	if len(s.queued) == 0 {
		s.qmu.Unlock()
		return nil
	}
	qs := [...]*queuedKey{
		s.queued[queuedSession+string(key)],
		s.queued[queuedUser+string(userKey(app, user))],
		s.queued[queuedApp+string(appKey(app))],
	}
	s.qmu.Unlock()
	for _, q := range qs {
		if q == nil {
			continue
		}
		select {
		case <-q.idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// checkQueued checks a session copy at revision rev before an append is
// queued: against the last queued append of the session if one is
// unfinished, else against the stored session. The session's lock is
// held. The transaction checks again (a write may fail in between).
func (s *SessionService) checkQueued(key []byte, rev uint64) error {
	s.qmu.Lock()
	q, ok := s.queued[queuedSession+string(key)]
	s.qmu.Unlock()
	if ok {
		if q.rev != rev {
			return session.ErrStale
		}
		return nil
	}
	return s.db.view(func(tx *bbolt.Tx) error {
		cur, ok, err := loadSession(tx, key)
		switch {
		case err != nil:
			return s.db.corrupt("%v", err)
		case !ok:
			return session.ErrNotFound
		case cur.h.rev != rev:
			return session.ErrStale
		}
		return nil
	})
}

// enqueue records an append queued to give its session revision rev; keys
// are what it writes (tagged, see queuedKey), its session first.
func (s *SessionService) enqueue(keys []string, rev uint64) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.queued == nil {
		s.queued = map[string]*queuedKey{}
	}
	for _, k := range keys {
		q := s.queued[k]
		if q == nil {
			q = &queuedKey{idle: make(chan struct{})}
			s.queued[k] = q
		}
		q.rev = rev
		q.n++
	}
}

// unqueue records that a queued append writing keys finished.
func (s *SessionService) unqueue(keys []string) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for _, k := range keys {
		if q := s.queued[k]; q != nil {
			if q.n--; q.n == 0 {
				delete(s.queued, k)
				close(q.idle)
			}
		}
	}
}

// merge is a state delta to apply to the JSON object under key in bucket
// (or, for a session's own state, to the state of the session key is).
// prepareMerges computes the result from the stored object before the
// write transaction, outside the group commit's one-at-a-time section;
// apply then only checks that the stored object is still the one merged
// into, and merges again if not (another session changed app: or user:
// state in between).
type merge struct {
	bucket, key  []byte
	delta        map[string]json.RawMessage
	base, merged []byte
	// baseMembers is base decoded, if the cache had it (else nil);
	// members is merged decoded.
	baseMembers, members map[string]json.RawMessage
}

// prepareMerges computes own, the session's own state delta (key is the
// session's), and the merges of others that have a delta, from what is
// stored now. It returns nil for own, and drops others, without a delta.
// The session's own state at revision rev comes from the cache if it
// knows it: an append that changes only its session's state then reads
// nothing here.
func (s *SessionService) prepareMerges(rev uint64, own *merge, others []*merge) (*merge, []*merge, error) {
	var out []*merge
	for _, m := range others {
		if len(m.delta) > 0 {
			out = append(out, m)
		}
	}
	if len(own.delta) == 0 {
		own = nil
	}
	if own == nil && len(out) == 0 {
		return nil, nil, nil
	}
	readOwn := false
	if own != nil {
		// Shared with the cache, never modified: merging makes a new slice.
		var known bool
		own.base, own.baseMembers, known = s.cache.ownState(string(own.key), rev)
		readOwn = !known
	}
	if readOwn || len(out) > 0 {
		err := s.db.view(func(tx *bbolt.Tx) error {
			for _, m := range out {
				m.base = bytes.Clone(tx.Bucket(m.bucket).Get(m.key))
			}
			if readOwn {
				// A session that is gone is refused in the transaction.
				cur, _, err := loadSession(tx, own.key)
				if err != nil {
					return s.db.corrupt("%v", err)
				}
				own.base = bytes.Clone(cur.state)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	var err error
	for _, m := range append(out, own) {
		if m == nil {
			continue
		}
		base := m.baseMembers
		if base == nil {
			if base, err = decodeMembers(m.base); err != nil {
				return nil, nil, s.db.corrupt("%v", err)
			}
		}
		if m.merged, m.members, err = mergeMembers(base, m.delta); err != nil {
			return nil, nil, s.db.corrupt("%v", err)
		}
	}
	return own, out, nil
}

func (m *merge) apply(s *SessionService, tx *bbolt.Tx) error {
	b := tx.Bucket(m.bucket)
	if cur := b.Get(m.key); !bytes.Equal(cur, m.base) {
		_, err := s.mergeStored(b, m.key, m.delta)
		return err
	}
	return b.Put(m.key, m.merged)
}

// withoutTemp returns delta without its temp: keys: delta itself if it has
// none, else a copy (an empty map, not nil, if only temp: keys were set).
func withoutTemp(delta map[string]any) map[string]any {
	n := 0
	for k := range delta {
		if strings.HasPrefix(k, session.TempPrefix) {
			n++
		}
	}
	if n == 0 {
		return delta
	}
	out := make(map[string]any, len(delta)-n)
	for k, v := range delta {
		if !strings.HasPrefix(k, session.TempPrefix) {
			out[k] = v
		}
	}
	return out
}
