package conformance

import "testing"

func TestAlignParallelBranches(t *testing.T) {
	goldenText := `{"sessions": [{"events": [{"author": "p", "id": "evt-1"}, {"author": "l", "branch": "p.l", "id": "evt-2"}, {"author": "r", "branch": "p.r", "id": "evt-3", "x": "evt-2"}]}], "turns": [{"events": [{"author": "l", "branch": "p.l", "id": "evt-2"}, {"author": "r", "branch": "p.r", "id": "evt-3", "x": "evt-2"}]}]}`
	cases := []struct {
		name  string
		got   string
		match bool
	}{
		// Branches interleaved the other way: ids were numbered in that order.
		{"other interleaving", `{"sessions": [{"events": [{"author": "p", "id": "evt-1"}, {"author": "r", "branch": "p.r", "id": "evt-2", "x": "evt-3"}, {"author": "l", "branch": "p.l", "id": "evt-3"}]}], "turns": [{"events": [{"author": "r", "branch": "p.r", "id": "evt-2", "x": "evt-3"}, {"author": "l", "branch": "p.l", "id": "evt-3"}]}]}`, true},
		// A branch's own event differs: no reordering hides it.
		{"different event", `{"sessions": [{"events": [{"author": "p", "id": "evt-1"}, {"author": "r", "branch": "p.r", "id": "evt-2", "x": "other"}, {"author": "l", "branch": "p.l", "id": "evt-3"}]}], "turns": []}`, false},
		// Events moved across the non-branch event: the unbranched queue differs.
		{"missing event", `{"sessions": [{"events": [{"author": "r", "branch": "p.r", "id": "evt-1", "x": "evt-2"}, {"author": "l", "branch": "p.l", "id": "evt-2"}]}], "turns": []}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			golden, _ := pyJSON(mustDecode(t, goldenText))
			golden = append(golden, '\n')
			got, _ := pyJSON(mustDecode(t, c.got))
			d := Compare(golden, append(got, '\n'), CompareOptions{})
			if (d == nil) != c.match {
				t.Fatalf("Compare match = %v, want %v; diff: %v", d == nil, c.match, d)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := decodeJSON([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
