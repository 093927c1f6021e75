package session_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
)

func TestStateGetSeesDeltaFirst(t *testing.T) {
	s := session.New("app", "u", "s", map[string]any{"a": "session", "b": "session"}, nil, time.Now(), 0)
	actions := &session.EventActions{StateDelta: map[string]any{"b": "delta", "c": "delta only"}}
	st := session.NewState(s, actions)
	for k, want := range map[string]any{"a": "session", "b": "delta", "c": "delta only"} {
		if v, ok := st.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %v, %v; want %v", k, v, ok, want)
		}
	}
	if v, ok := st.Get("missing"); ok || v != nil {
		t.Errorf("Get(missing) = %v, %v", v, ok)
	}
	want := map[string]any{"a": "session", "b": "delta", "c": "delta only"}
	if got := st.All(); !reflect.DeepEqual(got, want) {
		t.Errorf("All = %v, want %v", got, want)
	}
}

func TestStateSet(t *testing.T) {
	s := session.New("app", "u", "s", map[string]any{"a": 1}, nil, time.Now(), 0)
	actions := &session.EventActions{}
	st := session.NewState(s, actions)
	st.Set("a", 2)
	st.Set("user:b", "x")
	st.Set("temp:c", true)
	want := map[string]any{"a": 2, "user:b": "x", "temp:c": true}
	if !reflect.DeepEqual(actions.StateDelta, want) {
		t.Errorf("delta = %v, want %v", actions.StateDelta, want)
	}
	if !reflect.DeepEqual(st.Delta(), want) {
		t.Errorf("Delta() = %v, want %v", st.Delta(), want)
	}
	// Writes reach the session at once, so later readers in the invocation
	// see them before the event is appended.
	if !reflect.DeepEqual(s.State(), want) {
		t.Errorf("session state = %v, want %v", s.State(), want)
	}
	if v, ok := session.NewState(s, &session.EventActions{}).Get("a"); !ok || v != 2 {
		t.Errorf("another view reads a = %v, %v", v, ok)
	}

	// nil is stored as null: the key stays, in the delta and the session.
	st.Set("a", nil)
	if v, ok := st.Get("a"); !ok || v != nil {
		t.Errorf("Get after Set(nil) = %v, %v; want nil, true", v, ok)
	}
	if v, ok := s.StateValue("a"); !ok || v != nil {
		t.Errorf("session a after Set(nil) = %v, %v; want nil, true", v, ok)
	}
	b, err := json.Marshal(actions)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["stateDelta"]["a"]; !ok || v != nil {
		t.Errorf("delta JSON %s: a = %v, %v; want null", b, v, ok)
	}
}

func TestStateWithoutSession(t *testing.T) {
	actions := &session.EventActions{}
	st := session.NewState(nil, actions)
	if _, ok := st.Get("a"); ok {
		t.Errorf("Get on an empty view found a")
	}
	st.Set("a", 1)
	if v, ok := st.Get("a"); !ok || v != 1 {
		t.Errorf("Get = %v, %v", v, ok)
	}
	if got := st.All(); !reflect.DeepEqual(got, map[string]any{"a": 1}) {
		t.Errorf("All = %v", got)
	}
}

func TestIsScoped(t *testing.T) {
	for k, want := range map[string]bool{"app:a": true, "user:a": true, "temp:a": true, "a": false, "apple": false, "app": false, "x:app:a": false} {
		if got := session.IsScoped(k); got != want {
			t.Errorf("IsScoped(%q) = %v", k, got)
		}
	}
}

func TestTrimTempDelta(t *testing.T) {
	e := &session.Event{Actions: session.EventActions{StateDelta: map[string]any{"temp:a": 1, "temp:b": nil, "k": 2, "app:x": 3, "user:temp:y": 4}}}
	temp := session.TrimTempDelta(e)
	if want := map[string]any{"temp:a": 1, "temp:b": nil}; !reflect.DeepEqual(temp, want) {
		t.Errorf("trimmed = %v, want %v", temp, want)
	}
	if want := map[string]any{"k": 2, "app:x": 3, "user:temp:y": 4}; !reflect.DeepEqual(e.Actions.StateDelta, want) {
		t.Errorf("delta = %v, want %v", e.Actions.StateDelta, want)
	}

	// Nothing to trim.
	e = &session.Event{Actions: session.EventActions{StateDelta: map[string]any{"k": 1}}}
	if temp := session.TrimTempDelta(e); temp != nil {
		t.Errorf("trimmed %v from a delta without temp: keys", temp)
	}
	if temp := session.TrimTempDelta(&session.Event{}); temp != nil || (&session.Event{}).Actions.StateDelta != nil {
		t.Errorf("nil delta: trimmed %v", temp)
	}

	// Only temp: keys: the delta stays an empty map, as google-adk's {}.
	e = &session.Event{Actions: session.EventActions{StateDelta: map[string]any{"temp:a": 1}}}
	session.TrimTempDelta(e)
	if e.Actions.StateDelta == nil || len(e.Actions.StateDelta) != 0 {
		t.Errorf("delta of temp: keys only became %#v, want empty map", e.Actions.StateDelta)
	}
}

func TestSplitDelta(t *testing.T) {
	d := session.SplitDelta(map[string]any{
		"app:a": 1, "app:": 2, "user:b": 3, "user:app:c": 4, "temp:t": 5, "k": 6, "apple": 7, "user": 8, "n": nil,
	})
	want := session.ScopedDelta{
		App:     map[string]any{"a": 1, "": 2},
		User:    map[string]any{"b": 3, "app:c": 4},
		Session: map[string]any{"k": 6, "apple": 7, "user": 8, "n": nil},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("SplitDelta = %+v, want %+v", d, want)
	}
	if d := session.SplitDelta(nil); d.App != nil || d.User != nil || d.Session != nil {
		t.Errorf("SplitDelta(nil) = %+v", d)
	}
	if d := session.SplitDelta(map[string]any{"temp:x": 1}); d.App != nil || d.User != nil || d.Session != nil {
		t.Errorf("SplitDelta(temp only) = %+v", d)
	}
}

func TestMergeState(t *testing.T) {
	sessionState := map[string]any{"k": 1, "nested": map[string]any{"a": []any{1}}, "app:a": "shadowed"}
	appState := map[string]any{"a": "app", "cfg": map[string]any{"x": 1}}
	userState := map[string]any{"u": []string{"x"}}
	got := session.MergeState(sessionState, appState, userState)
	want := map[string]any{
		"k": 1, "nested": map[string]any{"a": []any{1}},
		"app:a": "app", "app:cfg": map[string]any{"x": 1},
		"user:u": []string{"x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeState = %v, want %v", got, want)
	}
	// The result shares nothing with the inputs.
	got["nested"].(map[string]any)["a"].([]any)[0] = "changed"
	got["app:cfg"].(map[string]any)["x"] = "changed"
	got["user:u"].([]string)[0] = "changed"
	if sessionState["nested"].(map[string]any)["a"].([]any)[0] != 1 || appState["cfg"].(map[string]any)["x"] != 1 || userState["u"].([]string)[0] != "x" {
		t.Errorf("MergeState result aliases its inputs")
	}
	if got := session.MergeState(nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("MergeState(nil, nil, nil) = %#v, want empty map", got)
	}
}

func TestDeepCopy(t *testing.T) {
	type point struct{ X int }
	p := &point{1}
	in := map[string]any{
		"m":      map[string]any{"l": []any{1, map[string]any{"x": 1}}},
		"typed":  map[string][]int{"a": {1, 2}},
		"strs":   []string{"a"},
		"arr":    [2][]int{{1}, {2}},
		"nilMap": map[string]any(nil),
		"nilSl":  []any(nil),
		"ptr":    p,
		"n":      nil,
	}
	out := session.DeepCopy(in).(map[string]any)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("copy differs: %v vs %v", out, in)
	}
	out["m"].(map[string]any)["l"].([]any)[1].(map[string]any)["x"] = 2
	out["typed"].(map[string][]int)["a"][0] = 9
	out["strs"].([]string)[0] = "changed"
	arr := out["arr"].([2][]int)
	arr[0][0] = 9
	if in["m"].(map[string]any)["l"].([]any)[1].(map[string]any)["x"] != 1 || in["typed"].(map[string][]int)["a"][0] != 1 ||
		in["strs"].([]string)[0] != "a" || in["arr"].([2][]int)[0][0] != 1 {
		t.Errorf("copy aliases the original: %v", in)
	}
	if out["nilMap"].(map[string]any) != nil || out["nilSl"].([]any) != nil {
		t.Errorf("nil containers became non-nil")
	}
	if out["ptr"] != p {
		t.Errorf("pointers are kept as they are")
	}
}

func TestFilterEvents(t *testing.T) {
	t0 := time.Unix(1735689600, 0)
	var events []*session.Event
	for i := range 5 {
		events = append(events, &session.Event{ID: string(rune('a' + i)), Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	ids := func(evs []*session.Event) string {
		var s string
		for _, e := range evs {
			s += e.ID
		}
		return s
	}
	for _, tc := range []struct {
		n     int
		after time.Time
		want  string
	}{
		{0, time.Time{}, "abcde"},
		{-1, time.Time{}, "abcde"},
		{2, time.Time{}, "de"},
		{9, time.Time{}, "abcde"},
		{0, sec(2), "cde"}, // inclusive
		{0, sec(2).Add(time.Microsecond), "de"},
		{0, sec(-1), "abcde"},
		{0, sec(5), ""},
		{3, sec(1), "cde"}, // the most recent n, then those not before after
		{3, sec(3), "de"},
	} {
		if got := ids(session.FilterEvents(events, tc.n, tc.after)); got != tc.want {
			t.Errorf("FilterEvents(n=%d, after=%v) = %q, want %q", tc.n, tc.after.Sub(t0), got, tc.want)
		}
	}
	// google-adk scans back from the newest event and stops at the first one
	// before after, so out-of-order timestamps keep the suffix.
	mixed := []*session.Event{{ID: "a", Timestamp: sec(3)}, {ID: "b", Timestamp: sec(1)}, {ID: "c", Timestamp: sec(4)}}
	if got := ids(session.FilterEvents(mixed, 0, sec(2))); got != "c" {
		t.Errorf("out of order: %q, want c", got)
	}
	if got := session.FilterEvents(nil, 3, sec(1)); len(got) != 0 {
		t.Errorf("FilterEvents(nil) = %v", got)
	}
}

func TestSessionCommitAndEvents(t *testing.T) {
	s := session.New("app", "u", "s", nil, nil, time.Unix(1, 0), 7)
	if s.State() == nil || s.Revision() != 7 || !s.LastUpdateTime().Equal(time.Unix(1, 0)) {
		t.Fatalf("New: state %v, revision %d, last update %v", s.State(), s.Revision(), s.LastUpdateTime())
	}
	before := s.Events()
	e := &session.Event{ID: "e1", Timestamp: time.Unix(5, 0), Actions: session.EventActions{StateDelta: map[string]any{"k": 1, "app:a": 2}}}
	s.Commit(e, map[string]any{"temp:t": 3}, 8)
	if len(before) != 0 {
		t.Errorf("an earlier Events() slice grew")
	}
	if got := s.Events(); len(got) != 1 || got[0] != e {
		t.Errorf("Events = %v", got)
	}
	if want := map[string]any{"k": 1, "app:a": 2, "temp:t": 3}; !reflect.DeepEqual(s.State(), want) {
		t.Errorf("state = %v, want %v", s.State(), want)
	}
	if s.Revision() != 8 || !s.LastUpdateTime().Equal(time.Unix(5, 0)) {
		t.Errorf("revision %d, last update %v", s.Revision(), s.LastUpdateTime())
	}
	// Appending to a returned slice never writes into the session's history.
	evs := s.Events()
	_ = append(evs, &session.Event{ID: "x"})
	s.Commit(&session.Event{ID: "e2", Timestamp: time.Unix(6, 0)}, nil, 9)
	var ids []string
	for _, e := range s.Events() {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"e1", "e2"}) {
		t.Errorf("events = %q", ids)
	}
}

// google-adk 2.13 records writes made in place into a dict or list read
// from the state (State._record_nested_writes); so does State.
func TestStateRecordsNestedWrites(t *testing.T) {
	s := session.New("app", "u", "s", map[string]any{
		"cart": map[string]any{"apples": int64(1)},
		"tags": []any{"a"},
		"same": map[string]any{"k": "v"},
	}, nil, time.Now(), 0)
	actions := &session.EventActions{}
	st := session.NewState(s, actions)

	cart, _ := st.Get("cart")
	cart.(map[string]any)["apples"] = int64(3)
	tags, _ := st.Get("tags")
	tags.([]any)[0] = "b"
	st.Get("same") // read, not changed: not recorded
	if len(actions.StateDelta) != 0 {
		t.Fatalf("delta before recording = %v, want empty", actions.StateDelta)
	}
	st.RecordNestedWrites()
	want := map[string]any{"cart": map[string]any{"apples": int64(3)}, "tags": []any{"b"}}
	if !reflect.DeepEqual(actions.StateDelta, want) {
		t.Errorf("delta = %v, want %v", actions.StateDelta, want)
	}

	// Recording again without a new write changes nothing; a later write is
	// compared with the value recorded last.
	delete(actions.StateDelta, "tags")
	st.RecordNestedWrites()
	if _, ok := actions.StateDelta["tags"]; ok {
		t.Errorf("an unchanged container was recorded again")
	}
	cart.(map[string]any)["pears"] = int64(2)
	st.RecordNestedWrites()
	if got := actions.StateDelta["cart"].(map[string]any)["pears"]; got != int64(2) {
		t.Errorf("second write not recorded: %v", actions.StateDelta["cart"])
	}

	// An assignment after the read wins over writes into the old container.
	other := session.NewState(s, &session.EventActions{})
	old, _ := other.Get("same")
	other.Set("same", map[string]any{"k": "assigned"})
	old.(map[string]any)["k"] = "in place"
	other.RecordNestedWrites()
	if got := other.Delta()["same"].(map[string]any)["k"]; got != "assigned" {
		t.Errorf("same = %v, want the assigned value", got)
	}
}
