package conformance

import (
	"context"
	"sync"
	"time"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
)

// engineCompaction is the scenario's compaction mapping as the engine's
// configuration; the summarizer is left unset, so the root agent's
// scripted model summarizes, as google-adk does without one.
func engineCompaction(c *CompactionSpec) *engine.CompactionConfig {
	if c == nil {
		return nil
	}
	conv := func(v *int64) *int {
		if v == nil {
			return nil
		}
		i := int(*v)
		return &i
	}
	return &engine.CompactionConfig{
		CompactionInterval: conv(c.CompactionInterval),
		OverlapSize:        conv(c.OverlapSize),
		TokenThreshold:     conv(c.TokenThreshold),
		EventRetentionSize: conv(c.EventRetentionSize),
	}
}

// monotonicSessions gives appended events strictly increasing timestamps
// at the microsecond resolution compaction ranges are compared at. Go
// creates events faster than google-adk does, and two events in one
// microsecond would make a compaction range cover an event it should not.
type monotonicSessions struct {
	session.Service
	mu   sync.Mutex
	last int64 // µs of the latest timestamp handed out
}

// AppendEvent implements session.Service.
func (m *monotonicSessions) AppendEvent(ctx context.Context, s *session.Session, e *session.Event) error {
	if !e.Partial {
		m.mu.Lock()
		us := e.Timestamp.UnixMicro()
		if e.Timestamp.IsZero() {
			us = time.Now().UnixMicro()
		}
		us = max(us, m.last+1)
		m.last = us
		e.Timestamp = time.UnixMicro(us)
		m.mu.Unlock()
	}
	return m.Service.AppendEvent(ctx, s, e)
}

// referenceCompactionTimestamps replaces the start and end timestamps of a
// dumped compaction event (FORMAT.md §2.3) by "ts:<id>" of the first other
// event of the session with that timestamp, or "ts:none": timestamps are
// not deterministic, the events they delimit are.
func referenceCompactionTimestamps(d map[string]any, ev *session.Event, events []*session.Event) {
	c := ev.Actions.Compaction
	if c == nil {
		return
	}
	actions, _ := d["actions"].(map[string]any)
	dc, _ := actions["compaction"].(map[string]any)
	if dc == nil {
		return
	}
	ref := func(f float64) string {
		us := session.FloatToTime(f).UnixMicro()
		for _, e := range events {
			if e.Actions.Compaction == nil && e.Timestamp.UnixMicro() == us {
				return "ts:" + e.ID
			}
		}
		return "ts:none"
	}
	dc["start_timestamp"] = ref(c.StartTimestamp)
	dc["end_timestamp"] = ref(c.EndTimestamp)
}
