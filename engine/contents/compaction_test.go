package contents

import (
	"testing"

	"github.com/adkhost/adkhost/engine/session"
)

func TestLatestCompaction(t *testing.T) {
	e1 := evt("user", "i1", u("a"), at(1))
	outer := evt("user", "c1", nil, at(5), compacted(1, 4, m("outer")))
	inner := evt("user", "c2", nil, at(6), compacted(2, 3, m("inner"))) // contained in outer
	later := evt("user", "c3", nil, at(7), compacted(3, 6, m("later"))) // overlaps outer
	for _, tc := range []struct {
		name   string
		events []*session.Event
		want   *session.Event
	}{
		{"none", []*session.Event{e1}, nil},
		{"one", []*session.Event{e1, outer}, outer},
		{"contained range is not the latest", []*session.Event{e1, outer, inner}, outer},
		{"overlapping range is", []*session.Event{e1, outer, inner, later}, later},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LatestCompaction(tc.events); got != tc.want {
				t.Errorf("LatestCompaction = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProcessCompactionEventsExported(t *testing.T) {
	e1 := evt("user", "i1", u("a"), at(1))
	e2 := evt("agent", "i1", m("b"), at(2))
	e3 := evt("user", "i2", u("c"), at(3))
	c := evt("user", "c1", nil, at(4), compacted(1, 2, m("sum")))
	got := ProcessCompactionEvents([]*session.Event{e1, e2, e3, c}, "")
	if len(got) != 2 || got[0].Author != "model" || got[0].Content.Parts[0].Text != "sum" || got[1] != e3 {
		t.Fatalf("ProcessCompactionEvents = %v, want [model summary, e3]", got)
	}
	if !got[0].Timestamp.Equal(session.FloatToTime(2)) {
		t.Errorf("summary at %v, want the range end", got[0].Timestamp)
	}
	rewound := ApplyRewinds([]*session.Event{e1, e3, evt("user", "r", nil, at(5), rewindTo("i2"))})
	if len(rewound) != 1 || rewound[0] != e1 {
		t.Errorf("ApplyRewinds kept %d events, want e1 only", len(rewound))
	}
}

// applyRewinds drops rewound invocations; without a rewind it returns the
// events themselves, clipped so that appending to the result cannot write
// into the caller's backing array.
func TestApplyRewinds(t *testing.T) {
	a1, a2 := evt("user", "a", u("a")), evt("model", "a", m("a"))
	b1 := evt("user", "b", u("b"))
	rw := evt("user", "c", nil, rewindTo("a"))
	c1 := evt("model", "c", m("c"))
	got := ApplyRewinds([]*session.Event{a1, a2, b1, rw, c1})
	if len(got) != 1 || got[0] != c1 {
		t.Errorf("rewind of a: got %d events, want only c's reply", len(got))
	}

	backing := make([]*session.Event, 3, 8)
	copy(backing, []*session.Event{a1, a2, b1})
	got = ApplyRewinds(backing)
	if len(got) != 3 || got[0] != a1 || got[1] != a2 || got[2] != b1 {
		t.Fatalf("no rewind: got %v, want the events unchanged", got)
	}
	_ = append(got, c1)
	if backing[:4][3] != nil {
		t.Error("appending to the result wrote into the argument's backing array")
	}
}
