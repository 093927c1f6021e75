package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// Keys are made of length-prefixed parts (uvarint length, then the bytes),
// so any string is allowed in any part and the key of a parent (an app, an
// app and user) is a byte prefix of the keys below it.

func appendPart(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readPart splits the first length-prefixed part off b.
func readPart(b []byte) (string, []byte, error) {
	start, end, ok := partAt(b, 0)
	if !ok {
		return "", nil, errors.New("malformed key")
	}
	return string(b[start:end]), b[end:], nil
}

// partAt returns where the bytes of the length-prefixed part at b[off:]
// start and end; ok is false if b is too short for it.
func partAt(b []byte, off int) (start, end int, ok bool) {
	n, w := binary.Uvarint(b[off:])
	if w <= 0 || uint64(len(b)-off-w) < n {
		return 0, 0, false
	}
	return off + w, off + w + int(n), true
}

func appKey(app string) []byte { return appendPart(nil, app) }

func userKey(app, user string) []byte { return appendPart(appendPart(nil, app), user) }

func sessionKey(app, user, id string) []byte {
	return appendPart(appendPart(appendPart(nil, app), user), id)
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Tags after a session key in the sessions bucket: a session's header,
// then its state, side by side in one leaf page.
const (
	tagHeader = 0x01
	tagState  = 0x02
)

func tagKey(sessionKey []byte, tag byte) []byte {
	k := make([]byte, len(sessionKey)+1)
	copy(k, sessionKey)
	k[len(sessionKey)] = tag
	return k
}

// header is a session's value under its header key: its revision, its last
// update time (unix microseconds), the sequence number of its newest event
// (0: none) and its number of events.
type header struct {
	rev        uint64
	lastUpdate int64
	last       uint64
	count      uint64
}

const headerSize = 32

func (h header) encode() []byte {
	b := make([]byte, headerSize)
	binary.BigEndian.PutUint64(b, h.rev)
	binary.BigEndian.PutUint64(b[8:], uint64(h.lastUpdate))
	binary.BigEndian.PutUint64(b[16:], h.last)
	binary.BigEndian.PutUint64(b[24:], h.count)
	return b
}

func decodeHeader(v []byte) (header, error) {
	if len(v) != headerSize {
		return header{}, fmt.Errorf("session header is %d bytes, want %d", len(v), headerSize)
	}
	return header{
		rev:        binary.BigEndian.Uint64(v),
		lastUpdate: int64(binary.BigEndian.Uint64(v[8:])),
		last:       binary.BigEndian.Uint64(v[16:]),
		count:      binary.BigEndian.Uint64(v[24:]),
	}, nil
}

// eventRecord is an event's value in the events bucket, after its key (the
// event's sequence number): the sequence number of the session's previous
// event (0: none), the event's timestamp in unix microseconds (what After
// compares, read without decoding the event), the session key, and the
// event's JSON.
type eventRecord struct {
	prev    uint64
	tsMicro int64
	session []byte
	json    []byte
}

func (r eventRecord) encode() []byte {
	b := make([]byte, 16, 16+binary.MaxVarintLen64+len(r.session)+len(r.json))
	binary.BigEndian.PutUint64(b, r.prev)
	binary.BigEndian.PutUint64(b[8:], uint64(r.tsMicro))
	b = binary.AppendUvarint(b, uint64(len(r.session)))
	b = append(b, r.session...)
	return append(b, r.json...)
}

// decodeEventRecord decodes v; session and json alias v.
func decodeEventRecord(v []byte) (eventRecord, error) {
	if len(v) < 17 {
		return eventRecord{}, fmt.Errorf("event record is %d bytes", len(v))
	}
	r := eventRecord{prev: binary.BigEndian.Uint64(v), tsMicro: int64(binary.BigEndian.Uint64(v[8:]))}
	n, w := binary.Uvarint(v[16:])
	if w <= 0 || uint64(len(v)-16-w) < n {
		return eventRecord{}, errors.New("malformed event record")
	}
	r.session = v[16+w : 16+w+int(n)]
	r.json = v[16+w+int(n):]
	return r, nil
}

// encodeDelta encodes each value of a state delta as JSON, before the
// transaction, so the transaction only splices bytes.
// A value's dicts are written in the order of its key-order hint in
// orders (by delta key), so that decodeState finds that order again.
func encodeDelta(delta map[string]any, orders map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if len(delta) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(delta))
	for k, v := range delta {
		b, err := keyorder.Marshal(v, orders[k])
		if err != nil {
			return nil, fmt.Errorf("state key %q: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}

// mergeJSON returns the JSON object cur with delta's keys set. cur may be
// empty (no object yet). The result is a new slice.
func mergeJSON(cur []byte, delta map[string]json.RawMessage) ([]byte, error) {
	m, err := decodeMembers(cur)
	if err != nil {
		return nil, err
	}
	b, _, err := mergeMembers(m, delta)
	return b, err
}

// decodeMembers decodes the JSON object cur (empty: no object yet) into
// its members, undecoded.
func decodeMembers(cur []byte) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(cur) > 0 {
		if err := json.Unmarshal(cur, &m); err != nil {
			return nil, fmt.Errorf("stored state: %w", err)
		}
	}
	return m, nil
}

// mergeMembers returns the JSON object of cur's members with delta's set,
// and those members (a new map: cur is not modified).
func mergeMembers(cur, delta map[string]json.RawMessage) ([]byte, map[string]json.RawMessage, error) {
	m := make(map[string]json.RawMessage, len(cur)+len(delta))
	maps.Copy(m, cur)
	maps.Copy(m, delta)
	b, err := json.Marshal(m)
	return b, m, err
}

// decodeState adds the keys of the JSON object b to into, under prefix,
// and, if orders is not nil, the key-order hints of their values to
// orders (values are stored with their dicts in their order: encodeDelta).
func decodeState(b []byte, prefix string, into map[string]any, orders map[string]json.RawMessage) error {
	if len(b) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("stored state: %w", err)
	}
	for k, v := range m {
		into[prefix+k] = v
	}
	// Only a value holding an object can need a hint: a state without a
	// nested '{' (strings may hold some too) is not scanned again.
	if orders != nil && bytes.Count(b, []byte{'{'}) > 1 {
		keyorder.FieldHints(b, func(k string, h json.RawMessage) { orders[prefix+k] = h })
	}
	return nil
}

// keyLocks are mutexes by key, created on demand and dropped when unused.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	refs int
}

// lock locks k and returns the function that unlocks it.
func (l *keyLocks) lock(k string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	kl := l.m[k]
	if kl == nil {
		kl = &keyLock{}
		l.m[k] = kl
	}
	kl.refs++
	l.mu.Unlock()
	kl.Lock()
	return func() {
		kl.Unlock()
		l.mu.Lock()
		if kl.refs--; kl.refs == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}
