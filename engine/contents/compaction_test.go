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
