package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// The tail bucket holds, for a session appended to by a lone writer, its
// newest events together with its current header and state, so that such
// an append rewrites one small leaf instead of the right edge of the event
// log and the session's leaf in sessions (README.md, "Why this shape").
//
// A session's tail entry, when there is one, supersedes its header and
// state in sessions, and its staged events follow the newest event in the
// log. An append committed in a group of several, or one that would make
// the bucket outgrow tailMaxBytes, moves staged events to the log instead.

// tailMaxBytes bounds the bucket's keys and values, so that it stays one
// 4 KiB leaf (and is inline in the root page while under 1 KiB): a lone
// append then writes the same few pages whatever the size of the file.
const tailMaxBytes = 3 << 10

// tailElemOverhead is what bbolt stores per leaf element beside its key and
// value.
const tailElemOverhead = 16

// staged is a session's tail entry: its header (count includes the staged
// events; last is the newest event in the log), its state, and its staged
// events, oldest first.
type staged struct {
	h      header
	state  []byte
	events []stagedEvent
	// inTail is set when the session has a tail entry (not stored).
	inTail bool
}

type stagedEvent struct {
	tsMicro int64
	json    []byte
}

// encode lays out a tail entry: the header, the state's length (uvarint)
// and bytes, then each event as its timestamp (8 bytes), its JSON's length
// (uvarint) and its JSON.
func (s staged) encode() []byte {
	n := headerSize + binary.MaxVarintLen64 + len(s.state)
	for _, e := range s.events {
		n += 8 + binary.MaxVarintLen64 + len(e.json)
	}
	b := make([]byte, 0, n)
	b = append(b, s.h.encode()...)
	b = binary.AppendUvarint(b, uint64(len(s.state)))
	b = append(b, s.state...)
	for _, e := range s.events {
		b = binary.BigEndian.AppendUint64(b, uint64(e.tsMicro))
		b = binary.AppendUvarint(b, uint64(len(e.json)))
		b = append(b, e.json...)
	}
	return b
}

// decodeStaged decodes a tail entry; state and the events' JSON alias v.
func decodeStaged(v []byte) (staged, error) {
	if len(v) < headerSize {
		return staged{}, fmt.Errorf("tail entry is %d bytes", len(v))
	}
	h, err := decodeHeader(v[:headerSize])
	if err != nil {
		return staged{}, err
	}
	rest := v[headerSize:]
	field := func() ([]byte, error) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return nil, errors.New("malformed tail entry")
		}
		f := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		return f, nil
	}
	s := staged{h: h}
	if s.state, err = field(); err != nil {
		return staged{}, err
	}
	for len(rest) > 0 {
		if len(rest) < 8 {
			return staged{}, errors.New("malformed tail entry")
		}
		e := stagedEvent{tsMicro: int64(binary.BigEndian.Uint64(rest))}
		rest = rest[8:]
		if e.json, err = field(); err != nil {
			return staged{}, err
		}
		s.events = append(s.events, e)
	}
	if uint64(len(s.events)) > h.count {
		return staged{}, fmt.Errorf("tail entry stages %d events, its header counts %d", len(s.events), h.count)
	}
	return s, nil
}

// loadSession reads a session's header, state and staged events in tx:
// from its tail entry if it has one, else from sessions. ok is false if
// the session does not exist. The slices alias tx's memory.
func loadSession(tx *bbolt.Tx, key []byte) (s staged, ok bool, err error) {
	v := tx.Bucket(bucketSessions).Get(tagKey(key, tagHeader))
	if v == nil {
		return staged{}, false, nil
	}
	if t := tx.Bucket(bucketTail).Get(key); t != nil {
		if s, err = decodeStaged(t); err != nil {
			return staged{}, false, fmt.Errorf("tail entry: %w", err)
		}
		s.inTail = true
		return s, true, nil
	}
	if s.h, err = decodeHeader(v); err != nil {
		return staged{}, false, err
	}
	s.state = tx.Bucket(bucketSessions).Get(tagKey(key, tagState))
	return s, true, nil
}

// logCount is how many of the session's events are in the log.
func (s staged) logCount() uint64 { return s.h.count - uint64(len(s.events)) }

// settle writes s to the log and sessions: its staged events become the
// session's newest events in the log, its header and state go to
// sessions, and its tail entry (if any) is deleted.
func settle(tx *bbolt.Tx, key []byte, s staged) error {
	events := tx.Bucket(bucketEvents)
	// Keys only ever go at the end: fill pages.
	events.FillPercent = 1
	last := s.h.last
	for _, e := range s.events {
		seq, err := events.NextSequence()
		if err != nil {
			return err
		}
		if err := events.Put(u64(seq), eventRecord{prev: last, tsMicro: e.tsMicro, session: key, json: e.json}.encode()); err != nil {
			return err
		}
		last = seq
	}
	s.h.last = last
	sessions := tx.Bucket(bucketSessions)
	if err := sessions.Put(tagKey(key, tagHeader), s.h.encode()); err != nil {
		return err
	}
	if err := sessions.Put(tagKey(key, tagState), bytes.Clone(s.state)); err != nil {
		return err
	}
	if !s.inTail {
		return nil
	}
	return tx.Bucket(bucketTail).Delete(key)
}

// stage stores s as key's tail entry if the bucket stays within
// tailMaxBytes, and reports whether it did. If the bucket is full, it
// settles every other entry (so sessions no longer written to cannot hold
// the space) and reports false: the caller settles s itself, so the tail
// starts empty again.
func (db *DB) stage(tx *bbolt.Tx, key []byte, s staged) (bool, error) {
	v := s.encode()
	need := len(key) + len(v) + tailElemOverhead
	if need > tailMaxBytes {
		return false, nil
	}
	tail := tx.Bucket(bucketTail)
	used := 0
	c := tail.Cursor()
	for k, tv := c.First(); k != nil; k, tv = c.Next() {
		if !bytes.Equal(k, key) {
			used += len(k) + len(tv) + tailElemOverhead
		}
	}
	if used+need > tailMaxBytes {
		return false, db.settleTail(tx, key)
	}
	return true, tail.Put(key, v)
}

// settleTail settles every tail entry but except's.
func (db *DB) settleTail(tx *bbolt.Tx, except []byte) error {
	type entry struct{ key, v []byte }
	var all []entry
	c := tx.Bucket(bucketTail).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if !bytes.Equal(k, except) {
			all = append(all, entry{bytes.Clone(k), bytes.Clone(v)})
		}
	}
	for _, e := range all {
		s, err := decodeStaged(e.v)
		if err != nil {
			return db.corrupt("tail entry: %v", err)
		}
		s.inTail = true
		if err := settle(tx, e.key, s); err != nil {
			return err
		}
	}
	return nil
}
