// Package bolt stores sessions, artifacts, memories and the app and module
// registry in one bbolt file (go.etcd.io/bbolt), durably and with group
// commit.
//
// One DB, opened with Open, serves four stores: Sessions (a
// session.Service), Artifacts (an artifact.Service), Memory (a
// memory.Service) and Registry. README.md beside this file documents the
// on-disk layout.
//
// # Durability
//
// Every write (create, append, delete, save, ingestion into memory) is
// acknowledged only after the bbolt transaction that holds it has
// committed, and bbolt commits with two fdatasync calls, one for the data
// pages and one for the meta page. The file is never opened with NoSync.
// A write that returned nil survives a crash or power loss; a write that
// returned an error, or did not return before the crash, is either wholly
// in the file or wholly absent, never in part. A reopened file needs no
// repair: bbolt keeps two meta pages and falls back to the older one if the
// newer was torn.
//
// The one exception is asked for: an AppendEvent whose context carries a
// session.Pending (the run API's /run, which acknowledges a turn only with
// its answer) returns once its write is queued, in order behind the
// session's earlier writes, and the session copy has the event; the
// Pending's Wait returns once all such writes are on disk, and only then
// are they acknowledged. A turn's four appends thus wait for one commit
// instead of four in a row. Reads see a queued write once it is committed,
// never before, and Get waits for the queued writes that change what it
// reads (the session, its user: and app: state), so a Get after an
// AppendEvent sees the event either way. Close waits for queued writes.
//
// # Group commit
//
// Writes from concurrent goroutines share transactions, so one pair of
// fsyncs acknowledges many of them. A write that finds no transaction being
// committed commits at once, alone, on its own goroutine: a single writer
// pays nothing for grouping. Writes that arrive while a commit is under way
// wait for it and are committed together, in arrival order, in the next
// transaction, which starts as soon as the previous one finishes. It waits
// only for writes known to be on their way: appends announced and still
// encoding their event, and, when fewer writes are pending than the
// previous group held, the writers just acknowledged (for as long as the
// previous commit took, within 200 µs to 2 ms), so that concurrent writers
// do not settle into two halves taking turns. bbolt's DB.Batch instead
// waits MaxBatchDelay (10 ms by default) before each batch. As with
// DB.Batch, the function that applies a write may run more than once: if
// any write of a group fails for a reason other than its own precondition
// (a stale session, an existing id), the group's transaction is rolled
// back and each write is retried in a transaction of its own. Those
// functions are therefore idempotent: they read what they need from the
// transaction and keep nothing from one run to the next.
//
// An append committed alone is staged in a small bucket (README.md,
// "Why this shape"), which it rewrites instead of the right edge of the
// event log and the session's header: a lone writer's transaction writes
// nearly as few pages as an update of one small key.
//
// # Concurrency and cost
//
// A DB and its stores are safe for concurrent use by many goroutines. One
// process at a time may open a file: Open takes an exclusive file lock.
// Reads run in bbolt read transactions and never wait for writes. Session.Get
// with NumRecentEvents or After reads only the events it returns, whatever
// the length of the session.
//
// A bounded, least-recently-used cache (Config.SessionCacheBytes) keeps the
// decoded history of sessions this process read in full or wrote lately;
// appends extend it once committed, with the JSON they stored, which the
// next Get decodes. Get serves a cached history only if it
// is the one the session's header names in Get's own read transaction
// (revision, last update time, event count), so a change by any other
// writer, a delete, or a delete and create again is read from the file,
// never served stale. Such a Get costs a read of the session's header and
// state, whatever its length. The sessions Get returns share the decoded
// events (read-only, as session.Session hands them out), not their slices
// or state.
//
// # Damaged files
//
// Open checks the file before bbolt maps it: a file that is not bbolt, whose
// meta pages are both damaged, or that is shorter than its last committed
// transaction says is refused with an error wrapping ErrCorrupt. A file of a
// format version this build does not know is refused with a *FormatError.
// Damage deeper in the file shows when a page is read: the operation returns
// an error wrapping ErrCorrupt instead of crashing the process. DB.Verify
// reads every page to find such damage up front.
package bolt
