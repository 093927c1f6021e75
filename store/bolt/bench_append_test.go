package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adkhost/adkhost/engine/session"
)

// BenchmarkAppend64 is the 64-way leg of TestStoreBench on its own, for
// profiling the CPU an append costs on the concurrent path: 64 goroutines
// append benchEvent to 64 sessions (cached, as after Create) until b.N
// appends are done.
func BenchmarkAppend64(b *testing.B) {
	ctx := context.Background()
	db, err := Open(filepath.Join(b.TempDir(), "store.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc := db.Sessions()
	const writers = 64
	sessions := make([]*session.Session, writers)
	for i := range sessions {
		if sessions[i], err = svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: fmt.Sprintf("u%d", i%8), SessionID: fmt.Sprintf("c%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	before := db.commit.commits.Load()
	var total atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range writers {
		wg.Go(func() {
			for {
				n := int(total.Add(1))
				if n > b.N {
					return
				}
				if err := svc.AppendEvent(ctx, sessions[i], benchEvent(n)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if c := db.commit.commits.Load() - before; c > 0 {
		b.ReportMetric(float64(b.N)/float64(c), "appends/commit")
	}
}
