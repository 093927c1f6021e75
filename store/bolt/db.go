package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// FormatVersion is the on-disk format this build reads and writes. It is
// stored in the file (bucket "adkhost", key "format"); README.md describes
// format 3. Open upgrades a file of an older format, which lacks only
// buckets added since (layout), in place.
const FormatVersion = 3

// DefaultLockTimeout is how long Open waits for another process to release
// the file when Config.LockTimeout is zero.
const DefaultLockTimeout = 5 * time.Second

// gatherFor bounds how long a group commit waits for the writers it just
// acknowledged to come back, gatherMax how long it waits for writes
// announced and being encoded (see committer.gather).
const (
	gatherFor = 200 * time.Microsecond
	gatherMax = 2 * time.Millisecond
)

// DefaultMaxGroup is the largest number of writes committed in one
// transaction when Config.MaxGroup is zero.
const DefaultMaxGroup = 512

var (
	// ErrCorrupt is wrapped by errors for a file that is damaged: not a
	// bbolt file, torn meta pages, truncated, or a page that does not read
	// back as what it should be.
	ErrCorrupt = errors.New("store file is corrupt")
	// ErrClosed is returned by operations on a closed DB.
	ErrClosed = errors.New("store is closed")
	// ErrLocked is wrapped by Open's error when another process holds the
	// file.
	ErrLocked = errors.New("store file is locked by another process")
)

// FormatError is Open's error for a file whose format version this build
// does not know, or a bbolt file that is not an adkhost store.
type FormatError struct {
	Path string
	// Version is the version found in the file; 0 if the file has no
	// adkhost format marker at all.
	Version uint32
}

func (e *FormatError) Error() string {
	if e.Version == 0 {
		return fmt.Sprintf("bolt: %s is a bbolt file but not an adkhost store (no format marker); refusing to open it", e.Path)
	}
	return fmt.Sprintf("bolt: %s has on-disk format version %d, this build reads version %d only; open it with the adkhost release that wrote it", e.Path, e.Version, FormatVersion)
}

// Config configures Open. The zero value is ready to use.
type Config struct {
	// LockTimeout is how long Open waits for another process to release its
	// lock on the file. Zero means DefaultLockTimeout; a negative value
	// means fail at once.
	LockTimeout time.Duration
	// MaxGroup caps how many writes share one transaction under group
	// commit. Zero means DefaultMaxGroup.
	MaxGroup int
	// SessionCacheBytes bounds the cache of decoded session histories
	// that makes Get of a session read or written lately cheap, whatever
	// its length: the stored JSON of the cached events, plus a fixed
	// charge per event and per session (decoded events take somewhat
	// more memory than their JSON). Least recently used sessions go
	// first. Zero means DefaultSessionCacheBytes; a negative value turns
	// the cache off.
	SessionCacheBytes int64
	// NoSync skips fsync on commit (bbolt's NoSync): a crash of the
	// process or the machine loses recent writes and may leave the file
	// unusable. Only for stores that need not survive a restart, such as
	// `adkhost serve --store memory`.
	NoSync bool
}

// DB is one open store file. Its Sessions, Artifacts, Memory and Registry
// share the file and its group commit. It is safe for concurrent use.
type DB struct {
	path string
	bdb  *bbolt.DB

	// life is held for reading by every operation and for writing by
	// Close, so Close waits for operations under way.
	life   sync.RWMutex
	closed bool
	// queued counts writes queued (committer.queue) and not yet finished:
	// their writers hold no part of life, so Close waits for them.
	queued sync.WaitGroup
	// revs is the last session revision handed out (see nextRev).
	revs atomic.Uint64

	commit    committer
	sessions  *SessionService
	artifacts *ArtifactService
	registry  *Registry
	memory    *MemoryService
}

// Bucket names; README.md describes what each holds.
var (
	bucketMeta           = []byte("adkhost")
	bucketSessions       = []byte("sessions")
	bucketEvents         = []byte("events")
	bucketTail           = []byte("tail")
	bucketAppState       = []byte("app_state")
	bucketUserState      = []byte("user_state")
	bucketArtifacts      = []byte("artifacts")
	bucketRegistryApps   = []byte("registry_apps")
	bucketRegistryMods   = []byte("registry_modules")
	bucketRegistryInfos  = []byte("registry_module_info")
	bucketMemories       = []byte("memories")
	bucketMemorySessions = []byte("memory_sessions")
	bucketMemoryDeleted  = []byte("memory_deleted")

	keyFormat = []byte("format")
)

// layout lists the top-level buckets besides bucketMeta, each with the
// format version that introduced it: a file of an older format lacks
// those, and Open adds them.
var layout = []struct {
	name  []byte
	since uint32
}{
	{bucketSessions, 1}, {bucketEvents, 1}, {bucketAppState, 1}, {bucketUserState, 1},
	{bucketArtifacts, 1}, {bucketRegistryApps, 1}, {bucketRegistryMods, 1}, {bucketRegistryInfos, 1},
	{bucketTail, 2},
	{bucketMemories, 3}, {bucketMemorySessions, 3}, {bucketMemoryDeleted, 3},
}

// Open opens the store file at path, creating it if it does not exist. It
// refuses a damaged file (ErrCorrupt), one of another format version
// (*FormatError) and one another process holds (ErrLocked, after
// cfg.LockTimeout). Open reads the file's meta pages and freelist and, for
// a new file, commits its layout; its cost does not grow with the data.
func Open(path string, cfg Config) (*DB, error) {
	if err := preflight(path); err != nil {
		return nil, err
	}
	timeout := cfg.LockTimeout
	switch {
	case timeout == 0:
		timeout = DefaultLockTimeout
	case timeout < 0:
		// bbolt waits forever on 0; the shortest wait it knows is one retry.
		timeout = time.Nanosecond
	}
	var file *os.File
	opts := &bbolt.Options{
		Timeout: timeout,
		NoSync:  cfg.NoSync,
		OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, mode)
			file = f
			return f, err
		},
	}
	var bdb *bbolt.DB
	err := guard(path, func() error {
		var err error
		bdb, err = bbolt.Open(path, 0o600, opts)
		return err
	})
	if err != nil {
		// A panic inside bbolt.Open leaves its file open and mapped, and
		// the mapping keeps the lock. preflight checks what Open reads (the
		// meta pages and the freelist) so that it does not panic; closing
		// the file is a last resort.
		if bdb == nil && file != nil {
			file.Close()
		}
		switch {
		case errors.Is(err, bbolt.ErrTimeout):
			return nil, fmt.Errorf("bolt: open %s: %w (waited %v)", path, ErrLocked, timeout)
		case errors.Is(err, bbolt.ErrInvalid), errors.Is(err, bbolt.ErrChecksum), errors.Is(err, bbolt.ErrVersionMismatch):
			return nil, fmt.Errorf("bolt: open %s: %w: %v", path, ErrCorrupt, err)
		case errors.Is(err, ErrCorrupt):
			return nil, err
		}
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	maxGroup := cfg.MaxGroup
	if maxGroup <= 0 {
		maxGroup = DefaultMaxGroup
	}
	db := &DB{path: path, bdb: bdb}
	db.commit = committer{db: db, maxGroup: maxGroup, gatherFor: gatherFor, gatherMax: gatherMax, wake: make(chan struct{}, 1)}
	if err := db.initLayout(); err != nil {
		bdb.Close()
		return nil, err
	}
	if err := db.view(func(tx *bbolt.Tx) error {
		db.revs.Store(tx.Bucket(bucketMeta).Sequence())
		return nil
	}); err != nil {
		bdb.Close()
		return nil, err
	}
	cacheBytes := cfg.SessionCacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultSessionCacheBytes
	}
	db.sessions = &SessionService{db: db, cache: newSessionCache(cacheBytes)}
	db.artifacts = &ArtifactService{db: db}
	db.registry = &Registry{db: db}
	db.memory = &MemoryService{db: db}
	return db, nil
}

// nextRev hands out a session revision. Revisions come from this counter,
// not from a bbolt sequence inside the write's transaction, so that a
// write queued without waiting (committer.queue) knows its revision when it
// is queued: the session copy takes it at once, and the write queued next
// checks against it. One process at a time has the file open (Open locks
// it), so the counter is the file's; setRev persists its high mark with
// each write. A revision handed out to a write that failed is never used.
func (db *DB) nextRev() uint64 { return db.revs.Add(1) }

// setRev records, in the write transaction tx, that revision rev is used.
func setRev(tx *bbolt.Tx, rev uint64) error {
	meta := tx.Bucket(bucketMeta)
	if meta.Sequence() >= rev {
		return nil
	}
	return meta.SetSequence(rev)
}

// Path returns the file's path.
func (db *DB) Path() string { return db.path }

// Sessions returns the session store.
func (db *DB) Sessions() *SessionService { return db.sessions }

// Artifacts returns the artifact store.
func (db *DB) Artifacts() *ArtifactService { return db.artifacts }

// Registry returns the app and module registry.
func (db *DB) Registry() *Registry { return db.registry }

// Memory returns the memory store.
func (db *DB) Memory() *MemoryService { return db.memory }

// Close waits for operations under way, then closes the file. Every
// acknowledged write is already on disk; Close adds no fsync. Operations
// after Close return ErrClosed.
func (db *DB) Close() error {
	db.life.Lock()
	defer db.life.Unlock()
	if db.closed {
		return nil
	}
	db.queued.Wait()
	db.closed = true
	return db.bdb.Close()
}

// initLayout checks the format marker, or writes it and the buckets into a
// new file, or upgrades a file of an older format.
func (db *DB) initLayout() error {
	var missing bool
	var from uint32 // the version of a file to upgrade
	err := db.view(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			empty := true
			tx.ForEach(func([]byte, *bbolt.Bucket) error { empty = false; return nil })
			if !empty {
				return &FormatError{Path: db.path}
			}
			missing = true
			return nil
		}
		v := meta.Get(keyFormat)
		if len(v) != 4 {
			return db.corrupt("format marker is %d bytes, want 4", len(v))
		}
		ver := binary.BigEndian.Uint32(v)
		if ver == 0 || ver > FormatVersion {
			return &FormatError{Path: db.path, Version: ver}
		}
		if ver < FormatVersion {
			from = ver
		}
		for _, b := range layout {
			if b.since <= ver && tx.Bucket(b.name) == nil {
				return db.corrupt("bucket %q is missing", b.name)
			}
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case from != 0:
		// An older format lacks only the buckets added since: add them
		// and the new marker in one transaction.
		return db.update(func(tx *bbolt.Tx) error {
			for _, b := range layout {
				if b.since <= from {
					continue
				}
				if _, err := tx.CreateBucketIfNotExists(b.name); err != nil {
					return fmt.Errorf("bolt: %s: upgrade from format %d to %d: %w", db.path, from, FormatVersion, err)
				}
			}
			return tx.Bucket(bucketMeta).Put(keyFormat, binary.BigEndian.AppendUint32(nil, FormatVersion))
		})
	case !missing:
		return nil
	}
	return db.update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := meta.Put(keyFormat, binary.BigEndian.AppendUint32(nil, FormatVersion)); err != nil {
			return err
		}
		for _, b := range layout {
			if _, err := tx.CreateBucket(b.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// view runs fn in a read transaction, with page faults and panics from a
// damaged file turned into ErrCorrupt.
func (db *DB) view(fn func(tx *bbolt.Tx) error) error {
	db.life.RLock()
	defer db.life.RUnlock()
	if db.closed {
		return ErrClosed
	}
	return guard(db.path, func() error { return db.bdb.View(fn) })
}

// update runs fn in a write transaction of its own, outside group commit
// (used at Open, and by registry writes, which are rare).
func (db *DB) update(fn func(tx *bbolt.Tx) error) error {
	db.life.RLock()
	defer db.life.RUnlock()
	if db.closed {
		return ErrClosed
	}
	return guard(db.path, func() error { return db.bdb.Update(fn) })
}

func (db *DB) corrupt(format string, args ...any) error {
	return fmt.Errorf("bolt: %s: %w: %s", db.path, ErrCorrupt, fmt.Sprintf(format, args...))
}

// guard runs fn with memory faults (a page pointer past the end of a
// damaged file) turned into panics, and any panic turned into an error
// wrapping ErrCorrupt. bbolt rolls back the transaction a panic leaves.
func guard(path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("bolt: %s: %w: %v", path, ErrCorrupt, r)
		}
	}()
	return fn()
}

// Verify reads every bucket, key and value in the file and runs bbolt's
// page consistency check (every page reachable once, free pages not in
// use). It costs a read of the whole file; writes may go on meanwhile. A
// damaged file gives an error wrapping ErrCorrupt.
func (db *DB) Verify() error {
	return db.view(func(tx *bbolt.Tx) error {
		var sum byte
		if err := walk(tx.Cursor(), 0, &sum); err != nil {
			return db.corrupt("%v", err)
		}
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return db.corrupt("%v", errors.Join(errs...))
		}
		return nil
	})
}

// walk reads every key and value under c, descending into nested buckets.
func walk(c *bbolt.Cursor, depth int, sum *byte) error {
	if depth > 8 {
		return errors.New("buckets nested deeper than the layout allows")
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			b := c.Bucket().Bucket(k)
			if b == nil {
				return fmt.Errorf("key %q has no value and is not a bucket", k)
			}
			if err := walk(b.Cursor(), depth+1, sum); err != nil {
				return err
			}
			continue
		}
		// Touch the value's last byte so overflow pages are read too.
		if len(v) > 0 {
			*sum ^= v[len(v)-1]
		}
	}
	return nil
}

// preflight checks, before bbolt maps the file, that it is a bbolt file
// with a valid meta page and that it is as long as that meta page says.
// bbolt itself would fault on a truncated file when it reads a page past
// the end.
func preflight(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bolt: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("bolt: open %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		// bbolt would make it a new, empty store, silently. A store file
		// of zero bytes is far more often a truncated one (a full disk, a
		// redirect gone wrong) than a new one: refuse, and say what to do.
		return fmt.Errorf("bolt: open %s: %w: the file is empty (0 bytes). If the store was truncated, restore it from a backup; to start a new store, remove the file", path, ErrCorrupt)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("bolt: open %s: %w: %s", path, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	m0, err0 := readMeta(f, 0)
	pageSize := int64(os.Getpagesize())
	if err0 == nil {
		pageSize = int64(m0.pageSize)
	}
	m1, err1 := readMeta(f, pageSize)
	var m meta
	switch {
	case err0 != nil && err1 != nil:
		return bad("%d bytes, no valid bbolt meta page (first: %v; second: %v); not a store file, or its header is damaged", size, err0, err1)
	case err1 != nil || (err0 == nil && m0.txid >= m1.txid):
		m = m0
	default:
		m = m1
	}
	if need := int64(m.pgid) * int64(m.pageSize); m.pgid > 0 && need > size {
		return bad("file is truncated: %d bytes, its last committed transaction (%d) needs %d", size, m.txid, need)
	}
	if m.root < 2 || m.root >= m.pgid {
		return bad("root page %d is outside the %d pages in use", m.root, m.pgid)
	}
	// bbolt reads the freelist inside Open, where a panic would leave the
	// file locked and mapped: check it here.
	if err := checkFreelist(f, m); err != nil {
		return bad("freelist: %v", err)
	}
	return nil
}

// checkFreelist checks that the freelist page m names is a freelist page
// and that it lists only pages in use range, each once.
func checkFreelist(f *os.File, m meta) error {
	if m.freelist == noFreelist {
		return errors.New("not stored (a file written with NoFreelistSync, not by adkhost)")
	}
	if m.freelist < 2 || m.freelist >= m.pgid {
		return fmt.Errorf("page %d is outside the %d pages in use", m.freelist, m.pgid)
	}
	ps := int64(m.pageSize)
	var hdr [pageHeaderSize + 8]byte
	if _, err := f.ReadAt(hdr[:], int64(m.freelist)*ps); err != nil {
		return err
	}
	le := binary.NativeEndian
	id, flags, count, overflow := le.Uint64(hdr[0:]), le.Uint16(hdr[8:]), uint64(le.Uint16(hdr[10:])), uint64(le.Uint32(hdr[12:]))
	if id != m.freelist || flags != freelistPageFlag {
		return fmt.Errorf("page %d is not a freelist page (id %d, flags %#x)", m.freelist, id, flags)
	}
	if m.freelist+overflow >= m.pgid {
		return fmt.Errorf("its %d pages run past the %d in use", overflow+1, m.pgid)
	}
	start := int64(pageHeaderSize)
	if count == 0xFFFF { // the real count is the first element
		count = le.Uint64(hdr[pageHeaderSize:])
		start += 8
	}
	if uint64(start)+count*8 > (overflow+1)*uint64(ps) {
		return fmt.Errorf("%d ids do not fit in %d pages", count, overflow+1)
	}
	ids := make([]byte, count*8)
	if _, err := f.ReadAt(ids, int64(m.freelist)*ps+start); err != nil {
		return err
	}
	seen := make(map[uint64]bool, count)
	for i := range count {
		id := le.Uint64(ids[i*8:])
		if id < 2 || id >= m.pgid || seen[id] {
			return fmt.Errorf("lists page %d (in use: %d pages)", id, m.pgid)
		}
		seen[id] = true
	}
	return nil
}

// meta is the part of a bbolt meta page preflight reads (bbolt's
// internal/common.Meta, format version 2).
type meta struct {
	pageSize uint32
	root     uint64 // page of the root bucket
	freelist uint64 // page of the freelist
	pgid     uint64 // high water mark: pages in use
	txid     uint64
}

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaSize         = 64
	metaChecksumOff  = 56
	freelistPageFlag = 0x10
	noFreelist       = 1<<64 - 1
)

func readMeta(f *os.File, off int64) (meta, error) {
	var buf [pageHeaderSize + metaSize]byte
	if _, err := f.ReadAt(buf[:], off); err != nil {
		if errors.Is(err, io.EOF) {
			return meta{}, errors.New("file ends inside the meta page")
		}
		return meta{}, err
	}
	b := buf[pageHeaderSize:]
	le := binary.NativeEndian
	if le.Uint32(b[0:]) != boltMagic {
		return meta{}, errors.New("bad magic")
	}
	if v := le.Uint32(b[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("bbolt file version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(b[:metaChecksumOff])
	if h.Sum64() != le.Uint64(b[metaChecksumOff:]) {
		return meta{}, errors.New("checksum mismatch")
	}
	m := meta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), freelist: le.Uint64(b[32:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
	if m.pageSize < 512 || m.pageSize&(m.pageSize-1) != 0 {
		return meta{}, fmt.Errorf("page size %d", m.pageSize)
	}
	return m, nil
}
