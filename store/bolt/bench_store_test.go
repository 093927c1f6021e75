package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// TestStoreBench is `make bench-store`: it measures, in one run and on one
// disk, the raw commit rate of a bbolt Update of one small key (serial,
// default options), serial appends to one session and appends from 64
// goroutines to 64 sessions, in alternating half-second slices, then Get
// with NumRecentEvents=20 on a session of 100k events (median of 2000),
// and prints
//
//	append_serial_ratio=<serial appends/s / raw commits/s> append_concurrent_speedup=<64-way appends/s / serial appends/s> get_recent20_us=<µs>
//
// It runs only with ADKHOST_BENCH_STORE=1; ADKHOST_BENCH_DIR picks the
// directory (default: the test's temporary directory).
func TestStoreBench(t *testing.T) {
	if os.Getenv("ADKHOST_BENCH_STORE") != "1" {
		t.Skip("set ADKHOST_BENCH_STORE=1 (make bench-store)")
	}
	dir := os.Getenv("ADKHOST_BENCH_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench-store-"); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	ctx := context.Background()

	raw, err := bbolt.Open(filepath.Join(dir, "raw.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	db, err := Open(filepath.Join(dir, "store.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := db.Sessions()

	serialSess, err := svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "u", SessionID: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 64
	sessions := make([]*session.Session, writers)
	for i := range sessions {
		if sessions[i], err = svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: fmt.Sprintf("u%d", i%8), SessionID: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	// The three measures take turns in short slices, so that the disk's
	// speed, which drifts (other tenants, write-back), weighs on each alike.
	var rawN, serialN, concN int
	var rawD, serialD, concD time.Duration
	var commits uint64
	// Page writes (bbolt's count, the meta page included) per raw commit,
	// per serial append and per 64-way commit: what a commit costs on disk.
	var rawWrites, serialWrites, concWrites int64
	writes := func(b *bbolt.DB) int64 { st := b.Stats(); return st.TxStats.GetWrite() }
	const rounds, slice = 6, 500 * time.Millisecond
	seq := 0
	for range rounds {
		w := writes(raw)
		start := time.Now()
		for time.Since(start) < slice {
			rawN++
			if err := raw.Update(func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucketIfNotExists([]byte("k"))
				if err != nil {
					return err
				}
				return b.Put([]byte("key"), u64(uint64(rawN)))
			}); err != nil {
				t.Fatal(err)
			}
		}
		rawD += time.Since(start)
		rawWrites += writes(raw) - w

		w = writes(db.bdb)
		start = time.Now()
		for time.Since(start) < slice {
			seq++
			if err := svc.AppendEvent(ctx, serialSess, benchEvent(seq)); err != nil {
				t.Fatal(err)
			}
			serialN++
		}
		serialD += time.Since(start)
		serialWrites += writes(db.bdb) - w

		before, w := db.commit.commits.Load(), writes(db.bdb)
		var total atomic.Int64
		var wg sync.WaitGroup
		start = time.Now()
		for i := range writers {
			wg.Go(func() {
				for time.Since(start) < slice {
					seq := int(total.Add(1))
					if err := svc.AppendEvent(ctx, sessions[i], benchEvent(seq)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		concD += time.Since(start)
		concN += int(total.Load())
		commits += db.commit.commits.Load() - before
		concWrites += writes(db.bdb) - w
	}
	rawRate := float64(rawN) / rawD.Seconds()
	serialRate := float64(serialN) / serialD.Seconds()
	concRate := float64(concN) / concD.Seconds()
	t.Logf("raw commits: %.0f/s; serial appends: %.0f/s; 64-way appends: %.0f/s in %d commits (%.1f appends per commit)",
		rawRate, serialRate, concRate, commits, float64(concN)/float64(commits))
	t.Logf("page writes: %.1f per raw commit, %.1f per serial append, %.1f per 64-way commit",
		float64(rawWrites)/float64(rawN), float64(serialWrites)/float64(serialN), float64(concWrites)/float64(commits))

	// A session of 100k events, loaded in bulk, then Get of the last 20.
	const big = 100_000
	bigSess, err := svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "u", SessionID: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bulkAppend(db, bigSess, big, benchEvent); err != nil {
		t.Fatal(err)
	}
	req := &session.GetRequest{AppName: "bench", UserID: "u", SessionID: "big", NumRecentEvents: 20}
	for range 200 { // warm up
		if _, err := svc.Get(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	var times []time.Duration
	for range 2000 {
		s := time.Now()
		g, err := svc.Get(ctx, req)
		times = append(times, time.Since(s))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(g.Events()); n != 20 {
			t.Fatalf("Get returned %d events", n)
		}
	}
	slices.Sort(times)
	median := times[len(times)/2]
	t.Logf("get_recent20 on %d events: median %v, p99 %v", big, median, times[len(times)*99/100])

	fmt.Printf("append_serial_ratio=%.2f append_concurrent_speedup=%.1f get_recent20_us=%.0f\n",
		serialRate/rawRate, concRate/serialRate, float64(median.Nanoseconds())/1e3)
}

// benchEvent is a small model text event with a one-key state delta.
func benchEvent(n int) *session.Event {
	return &session.Event{
		Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{
			{Text: fmt.Sprintf("Answer number %d: it is 21 degrees and sunny in Paris today.", n)}}}},
		InvocationID: fmt.Sprintf("inv-%d", n/4),
		Author:       "weather_agent",
		Actions:      session.EventActions{StateDelta: map[string]any{"turns": n}},
	}
}

// bulkAppend stores n events made by mk in sess, many per transaction, the
// way AppendEvent stores them (the events' state deltas are not applied).
// It is for building large sessions in tests quickly.
func bulkAppend(db *DB, sess *session.Session, n int, mk func(int) *session.Event) error {
	key := sessionKey(sess.AppName, sess.UserID, sess.ID)
	const per = 5000
	t0 := time.Now().Add(-time.Duration(n) * time.Millisecond)
	for done := 0; done < n; {
		m := min(per, n-done)
		err := db.bdb.Update(func(tx *bbolt.Tx) error {
			if tx.Bucket(bucketTail).Get(key) != nil {
				return errors.New("bulkAppend: the session has staged events")
			}
			sessions, events := tx.Bucket(bucketSessions), tx.Bucket(bucketEvents)
			events.FillPercent = 1
			hk := tagKey(key, tagHeader)
			h, err := decodeHeader(sessions.Get(hk))
			if err != nil {
				return err
			}
			for i := range m {
				e := mk(done + i)
				e.ID = session.NewEventID()
				e.Timestamp = t0.Add(time.Duration(done+i) * time.Millisecond)
				e.Actions.StateDelta = nil
				data, err := json.Marshal(e)
				if err != nil {
					return err
				}
				seq, err := events.NextSequence()
				if err != nil {
					return err
				}
				ts := session.FloatToTime(session.TimeToFloat(e.Timestamp)).UnixMicro()
				if err := events.Put(u64(seq), eventRecord{prev: h.last, tsMicro: ts, session: key, json: data}.encode()); err != nil {
					return err
				}
				h.last, h.lastUpdate, h.count = seq, ts, h.count+1
			}
			if h.rev, err = tx.Bucket(bucketMeta).NextSequence(); err != nil {
				return err
			}
			return sessions.Put(hk, h.encode())
		})
		if err != nil {
			return err
		}
		done += m
	}
	return nil
}
