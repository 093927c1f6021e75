package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

// MemoryService is a memory.Service in the store file with exactly
// memory.InMemoryService's semantics (google-adk's in-memory memory
// service): the same keyword search and ranking (memory.Rank), equal scores
// in ingestion order, a deleted id never ingested again, no AddMemories.
// Get it from DB.Memory. Each event is stored with its searchable words,
// so a search reads the user's memories in one read transaction and decodes
// only the contents it returns. Writes commit one transaction each,
// grouped with concurrent writes. It is safe for concurrent use.
type MemoryService struct {
	db *DB
}

var _ memory.Service = (*MemoryService)(nil)

// memoryKeyTail is what follows the user's key in a memories key: the
// session's ordinal and the event's index in it, u64 each.
const memoryKeyTail = 16

// withPart returns prefix followed by part(s), never sharing prefix's
// backing array.
func withPart(prefix []byte, s string) []byte { return appendPart(slices.Clip(prefix), s) }

// encodeMemory is a record's value in the memories bucket: its time (unix
// µs) i64, then part(id) part(author) part(content JSON) part(lowercased
// text) and part(word) for each of its words, sorted.
func encodeMemory(r *memory.Record) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(r.Time.UnixMicro()))
	for _, s := range []string{r.ID, r.Author, string(r.Content), r.TextLower} {
		b = appendPart(b, s)
	}
	for _, w := range r.Words {
		b = appendPart(b, w)
	}
	return b
}

// decodeMemory decodes v into a record whose Content aliases v. Its
// strings share one copy of v, so a record costs a few allocations
// whatever its number of words.
func decodeMemory(v []byte) (*memory.Record, error) {
	if len(v) < 8 {
		return nil, errors.New("memory record too short")
	}
	r := &memory.Record{Time: time.UnixMicro(int64(binary.BigEndian.Uint64(v)))}
	v = v[8:]
	s := string(v)
	var fields [4][2]int // start and end in v of id, author, content, text
	off := 0
	for i := range fields {
		start, end, err := nextPart(v, off)
		if err != nil {
			return nil, err
		}
		fields[i], off = [2]int{start, end}, end
	}
	field := func(i int) string { return s[fields[i][0]:fields[i][1]] }
	r.ID, r.Author, r.TextLower = field(0), field(1), field(3)
	r.Content = v[fields[2][0]:fields[2][1]]
	for off < len(v) {
		start, end, err := nextPart(v, off)
		if err != nil {
			return nil, err
		}
		r.Words, off = append(r.Words, s[start:end]), end
	}
	return r, nil
}

// nextPart is partAt for a memory record.
func nextPart(v []byte, off int) (start, end int, err error) {
	start, end, ok := partAt(v, off)
	if !ok {
		return 0, 0, errors.New("malformed memory record")
	}
	return start, end, nil
}

// recordID reads only the id of a record's value.
func recordID(v []byte) (string, error) {
	if len(v) < 8 {
		return "", errors.New("memory record too short")
	}
	id, _, err := readPart(v[8:])
	return id, err
}

// records builds the records of events, skipping those without content.
func records(events []*session.Event) ([]*memory.Record, [][]byte, error) {
	var recs []*memory.Record
	var vals [][]byte
	for _, e := range events {
		r, err := memory.NewRecord(e)
		if err != nil {
			return nil, nil, err
		}
		if r != nil {
			recs = append(recs, r)
			vals = append(vals, encodeMemory(r))
		}
	}
	return recs, vals, nil
}

// sessionPrefix returns the key prefix of a session's memories: the
// user's key and the session's ordinal, given from the memory_sessions
// bucket's sequence the first time the session is added, so that keys
// sort sessions in the order they were first added.
func (m *MemoryService) sessionPrefix(tx *bbolt.Tx, uk []byte, sessionID string) ([]byte, error) {
	sb := tx.Bucket(bucketMemorySessions)
	sk := withPart(uk, sessionID)
	ord := sb.Get(sk)
	if ord == nil {
		seq, err := sb.NextSequence()
		if err != nil {
			return nil, err
		}
		ord = u64(seq)
		if err := sb.Put(sk, ord); err != nil {
			return nil, err
		}
	}
	if len(ord) != 8 {
		return nil, m.db.corrupt("memory session ordinal is %d bytes", len(ord))
	}
	return append(slices.Clip(uk), ord...), nil
}

func memoryKey(prefix []byte, idx uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clip(prefix), idx)
}

// putMemories stores recs, encoded as vals, in the session at prefix
// after its index last, except ids the user deleted and ids in have (nil:
// none), to which it adds those it stores.
func putMemories(tx *bbolt.Tx, uk, prefix []byte, last uint64, recs []*memory.Record, vals [][]byte, have map[string]bool) error {
	b, del := tx.Bucket(bucketMemories), tx.Bucket(bucketMemoryDeleted)
	for i, r := range recs {
		if have[r.ID] || del.Get(withPart(uk, r.ID)) != nil {
			continue
		}
		last++
		if err := b.Put(memoryKey(prefix, last), vals[i]); err != nil {
			return err
		}
		if have != nil {
			have[r.ID] = true
		}
	}
	return nil
}

// AddSession implements memory.Service: the session's events with content,
// minus deleted ids, replace what the service took from it before.
func (m *MemoryService) AddSession(ctx context.Context, s *session.Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	recs, vals, err := records(s.Events())
	if err != nil {
		return err
	}
	uk := userKey(s.AppName, s.UserID)
	err = m.db.commit.do(func(tx *bbolt.Tx) error {
		prefix, err := m.sessionPrefix(tx, uk, s.ID)
		if err != nil {
			return err
		}
		b := tx.Bucket(bucketMemories)
		var old [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			old = append(old, bytes.Clone(k))
		}
		for _, k := range old {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return putMemories(tx, uk, prefix, 0, recs, vals, nil)
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
	if err := ctx.Err(); err != nil {
		return err
	}
	recs, vals, err := records(req.Events)
	if err != nil {
		return err
	}
	sid := req.SessionID
	if sid == "" {
		sid = memory.UnknownSessionID
	}
	uk := userKey(req.AppName, req.UserID)
	err = m.db.commit.do(func(tx *bbolt.Tx) error {
		prefix, err := m.sessionPrefix(tx, uk, sid)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		var last uint64
		c := tx.Bucket(bucketMemories).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			id, err := recordID(v)
			if err != nil || len(k) != len(prefix)+8 {
				return m.db.corrupt("memory %q: malformed record", k)
			}
			have[id] = true
			last = binary.BigEndian.Uint64(k[len(prefix):])
		}
		return putMemories(tx, uk, prefix, last, recs, vals, have)
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

// Search implements memory.Service. It reads the user's memories in one
// read transaction, in ingestion order, and decodes the contents of the
// best only.
func (m *MemoryService) Search(ctx context.Context, appName, userID, query string) (*memory.SearchResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	uk := userKey(appName, userID)
	var resp *memory.SearchResponse
	err := m.db.view(func(tx *bbolt.Tx) error {
		var bad error
		c := tx.Bucket(bucketMemories).Cursor()
		hits := memory.Rank(query, func(yield func(*memory.Record) bool) {
			for k, v := c.Seek(uk); k != nil && bytes.HasPrefix(k, uk); k, v = c.Next() {
				r, err := decodeMemory(v)
				if err != nil || len(k) != len(uk)+memoryKeyTail {
					bad = m.db.corrupt("memory %q: malformed record", k)
					return
				}
				if !yield(r) {
					return
				}
			}
		})
		if bad != nil {
			return bad
		}
		// The hits' contents alias the file's pages: decode them here.
		var err error
		resp, err = memory.Response(hits)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Delete implements memory.Service: the event leaves every session of the
// user that holds it, and, if some session held it, its id is never
// ingested again (as memory.InMemoryService).
func (m *MemoryService) Delete(ctx context.Context, appName, userID, memoryID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if memoryID == "" {
		return nil
	}
	uk := userKey(appName, userID)
	err := m.db.commit.do(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketMemories)
		var found [][]byte
		c := b.Cursor()
		for k, v := c.Seek(uk); k != nil && bytes.HasPrefix(k, uk); k, v = c.Next() {
			id, err := recordID(v)
			if err != nil {
				return m.db.corrupt("memory %q: malformed record", k)
			}
			if id == memoryID {
				found = append(found, bytes.Clone(k))
			}
		}
		if len(found) == 0 {
			return refuse(errAbsent)
		}
		for _, k := range found {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		// One byte, not none: bbolt's Get does not tell an empty value
		// from a missing key on every path.
		return tx.Bucket(bucketMemoryDeleted).Put(withPart(uk, memoryID), []byte{1})
	})
	if err != nil && !errors.Is(err, errAbsent) {
		return fmt.Errorf("memory: delete %s: %w", memoryID, err)
	}
	return nil
}
