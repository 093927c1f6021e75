// Package sessiontest is a conformance suite for session.Service
// implementations. It checks the Service contract as documented in package
// session and the semantics of google-adk's session services (in-memory and
// database): state scopes, event selection, listing order, optimistic
// concurrency and what an appended event carries back out.
//
// The suite uses only the public API, so any implementation can run it:
//
//	func TestConformance(t *testing.T) {
//		sessiontest.Run(t, func(t *testing.T) session.Service { return newMyService(t) })
//	}
package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Run runs the conformance suite as subtests of t. newService is called once
// per subtest and must return a new, empty service; it may register cleanup
// with t.Cleanup.
//
// Timestamps the suite sets are whole milliseconds and are compared to a
// microsecond, so a service may store them as google-adk's float seconds.
// Events are always appended with increasing timestamps, so a service may
// return them in append order or in timestamp order.
func Run(t *testing.T, newService func(t *testing.T) session.Service) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, svc session.Service)
	}{
		{"Create/GivenID", testCreateGivenID},
		{"Create/GeneratedID", testCreateGeneratedID},
		{"Create/DuplicateID", testCreateDuplicateID},
		{"Create/StateScopes", testCreateStateScopes},
		{"Get/NotFound", testGetNotFound},
		{"Get/NumRecentEvents", testGetNumRecentEvents},
		{"Get/After", testGetAfter},
		{"Get/NumRecentEventsAndAfter", testGetNumRecentAndAfter},
		{"Get/ReturnsCopies", testGetReturnsCopies},
		{"List/Sessions", testList},
		{"List/Order", testListOrder},
		{"List/OrderTies", testListOrderTies},
		{"Delete", testDelete},
		{"AppendEvent/Stored", testAppendStored},
		{"AppendEvent/StateScopes", testAppendStateScopes},
		{"AppendEvent/TempState", testAppendTempState},
		{"AppendEvent/NullValue", testAppendNullValue},
		{"AppendEvent/Partial", testAppendPartial},
		{"AppendEvent/LastUpdateTime", testAppendLastUpdateTime},
		{"AppendEvent/NotFound", testAppendNotFound},
		{"AppendEvent/Stale", testAppendStale},
		{"AppendEvent/StaleAfterRecreate", testAppendStaleAfterRecreate},
		{"AppendEvent/FreshCopies", testAppendFreshCopies},
		{"AppendEvent/EventRoundTrip", testEventRoundTrip},
		{"Concurrent/StaleCopies", testConcurrentStaleCopies},
		{"Concurrent/SameCopy", testConcurrentSameCopy},
		{"Concurrent/Sessions", testConcurrentSessions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newService(t)) })
	}
}

const (
	app  = "app"
	app2 = "other-app"
	u1   = "user-1"
	u2   = "user-2"
)

// base returns a start time for event timestamps: whole milliseconds, an
// hour after now, so sessions with events sort after those without.
func base() time.Time {
	return time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
}

// ms returns t plus n milliseconds.
func ms(t time.Time, n int) time.Time { return t.Add(time.Duration(n) * time.Millisecond) }

func sameTime(a, b time.Time) bool {
	d := a.Sub(b)
	return d <= time.Microsecond && d >= -time.Microsecond
}

func create(t *testing.T, svc session.Service, appName, userID, id string, state map[string]any) *session.Session {
	t.Helper()
	s, err := svc.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id, State: state})
	if err != nil {
		t.Fatalf("Create(%s/%s/%q): %v", appName, userID, id, err)
	}
	if s == nil {
		t.Fatalf("Create(%s/%s/%q) returned nil", appName, userID, id)
	}
	return s
}

func get(t *testing.T, svc session.Service, appName, userID, id string) *session.Session {
	t.Helper()
	return getReq(t, svc, &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
}

func getReq(t *testing.T, svc session.Service, req *session.GetRequest) *session.Session {
	t.Helper()
	s, err := svc.Get(t.Context(), req)
	if err != nil {
		t.Fatalf("Get(%s/%s/%s): %v", req.AppName, req.UserID, req.SessionID, err)
	}
	if s == nil {
		t.Fatalf("Get(%s/%s/%s) returned nil", req.AppName, req.UserID, req.SessionID)
	}
	return s
}

func list(t *testing.T, svc session.Service, appName, userID string) []*session.Session {
	t.Helper()
	out, err := svc.List(t.Context(), &session.ListRequest{AppName: appName, UserID: userID})
	if err != nil {
		t.Fatalf("List(%s/%s): %v", appName, userID, err)
	}
	return out
}

func appendOK(t *testing.T, svc session.Service, s *session.Session, e *session.Event) {
	t.Helper()
	if err := svc.AppendEvent(t.Context(), s, e); err != nil {
		t.Fatalf("AppendEvent(%s, %s): %v", s.ID, e.ID, err)
	}
}

// newEvent returns a model text event with the given id, time and delta.
func newEvent(id string, ts time.Time, delta map[string]any) *session.Event {
	return &session.Event{
		Response: model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "text of " + id}}}},
		ID:       id, InvocationID: "inv-" + id, Author: "agent", Timestamp: ts,
		Actions: session.EventActions{StateDelta: delta},
	}
}

// norm returns v as JSON decodes it, so values compare the same whether a
// service keeps them as given or stores them as JSON.
func norm(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

func wantState(t *testing.T, what string, s *session.Session, want map[string]any) {
	t.Helper()
	got := s.State()
	if want == nil {
		want = map[string]any{}
	}
	if g, w := norm(t, got), norm(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s: state of %s/%s/%s\n got %s\nwant %s", what, s.AppName, s.UserID, s.ID, js(t, g), js(t, w))
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func eventIDs(s *session.Session) []string {
	var ids []string
	for _, e := range s.Events() {
		ids = append(ids, e.ID)
	}
	return ids
}

func wantEventIDs(t *testing.T, what string, s *session.Session, want ...string) {
	t.Helper()
	if got := eventIDs(s); !slices.Equal(got, want) {
		t.Errorf("%s: events = %q, want %q", what, got, want)
	}
}

func sessionIDs(ss []*session.Session) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.UserID+"/"+s.ID)
	}
	return ids
}

// eventMap is e's JSON as a map, without the timestamp, which is compared
// separately to a microsecond.
func eventMap(t *testing.T, e *session.Event) map[string]any {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("marshal event %s: %v", e.ID, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal event %s: %v", e.ID, err)
	}
	delete(m, "timestamp")
	return m
}

func wantSameEvent(t *testing.T, got, want *session.Event) {
	t.Helper()
	if g, w := eventMap(t, got), eventMap(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("event %s does not round-trip\n got %s\nwant %s", want.ID, js(t, g), js(t, w))
	}
	if !sameTime(got.Timestamp, want.Timestamp) {
		t.Errorf("event %s timestamp = %v, want %v", want.ID, got.Timestamp, want.Timestamp)
	}
}

func testCreateGivenID(t *testing.T, svc session.Service) {
	before := time.Now()
	s := create(t, svc, app, u1, "s1", nil)
	after := time.Now()
	if s.ID != "s1" || s.AppName != app || s.UserID != u1 {
		t.Errorf("Create returned %s/%s/%s, want %s/%s/s1", s.AppName, s.UserID, s.ID, app, u1)
	}
	if n := len(s.Events()); n != 0 {
		t.Errorf("new session has %d events", n)
	}
	wantState(t, "created", s, nil)
	lu := s.LastUpdateTime()
	if lu.Before(before.Add(-time.Millisecond)) || lu.After(after.Add(time.Millisecond)) {
		t.Errorf("LastUpdateTime = %v, want the creation time (between %v and %v)", lu, before, after)
	}

	g := get(t, svc, app, u1, "s1")
	if g.ID != "s1" || g.AppName != app || g.UserID != u1 {
		t.Errorf("Get returned %s/%s/%s", g.AppName, g.UserID, g.ID)
	}
	if n := len(g.Events()); n != 0 {
		t.Errorf("Get: new session has %d events", n)
	}
	wantState(t, "Get", g, nil)
	if !sameTime(g.LastUpdateTime(), lu) {
		t.Errorf("Get LastUpdateTime = %v, Create said %v", g.LastUpdateTime(), lu)
	}
}

func testCreateGeneratedID(t *testing.T, svc session.Service) {
	a := create(t, svc, app, u1, "", map[string]any{"k": "a"})
	b := create(t, svc, app, u1, "", map[string]any{"k": "b"})
	if a.ID == "" || b.ID == "" {
		t.Fatalf("generated ids %q, %q: want non-empty", a.ID, b.ID)
	}
	if a.ID == b.ID {
		t.Fatalf("generated ids are equal: %q", a.ID)
	}
	wantState(t, "Get a", get(t, svc, app, u1, a.ID), map[string]any{"k": "a"})
	wantState(t, "Get b", get(t, svc, app, u1, b.ID), map[string]any{"k": "b"})
}

func testCreateDuplicateID(t *testing.T, svc session.Service) {
	create(t, svc, app, u1, "s1", map[string]any{"app:a": 1, "user:b": 1, "k": 1})
	_, err := svc.Create(t.Context(), &session.CreateRequest{AppName: app, UserID: u1, SessionID: "s1",
		State: map[string]any{"app:a": 2, "user:b": 2, "k": 2}})
	if !errors.Is(err, session.ErrAlreadyExists) {
		t.Fatalf("Create duplicate: err = %v, want ErrAlreadyExists", err)
	}
	// The refused create changes nothing, not even app: or user: state.
	wantState(t, "after refused create", get(t, svc, app, u1, "s1"), map[string]any{"app:a": 1, "user:b": 1, "k": 1})

	// Ids are scoped by app and user.
	create(t, svc, app, u2, "s1", nil)
	create(t, svc, app2, u1, "s1", nil)
	wantState(t, "same id, other user", get(t, svc, app, u2, "s1"), map[string]any{"app:a": 1})
	wantState(t, "same id, other app", get(t, svc, app2, u1, "s1"), nil)
}

func testCreateStateScopes(t *testing.T, svc session.Service) {
	nested := map[string]any{"list": []any{1, 2}}
	s1 := create(t, svc, app, u1, "s1", map[string]any{
		"app:a": "app", "user:b": "user", "k": "session", "temp:t": "temp", "nested": nested,
	})
	want1 := map[string]any{"app:a": "app", "user:b": "user", "k": "session", "nested": map[string]any{"list": []any{1, 2}}}
	wantState(t, "Create result", s1, want1)
	// The service keeps its own copy of the initial state.
	nested["list"] = []any{"changed"}
	nested["added"] = true
	wantState(t, "Get s1", get(t, svc, app, u1, "s1"), want1)

	// app: state is shared by the app, user: state by the user's sessions.
	s2 := create(t, svc, app, u1, "s2", nil)
	wantState(t, "Create s2, same user", s2, map[string]any{"app:a": "app", "user:b": "user"})
	wantState(t, "Get s2", get(t, svc, app, u1, "s2"), map[string]any{"app:a": "app", "user:b": "user"})
	s3 := create(t, svc, app, u2, "s3", nil)
	wantState(t, "Create s3, other user", s3, map[string]any{"app:a": "app"})
	wantState(t, "Get s3", get(t, svc, app, u2, "s3"), map[string]any{"app:a": "app"})
	s4 := create(t, svc, app2, u1, "s4", nil)
	wantState(t, "Create s4, other app", s4, nil)

	// A later create updates the shared scopes for every session.
	create(t, svc, app, u2, "s5", map[string]any{"app:a": "app2", "user:b": "u2"})
	wantState(t, "Get s1 after s5", get(t, svc, app, u1, "s1"),
		map[string]any{"app:a": "app2", "user:b": "user", "k": "session", "nested": map[string]any{"list": []any{1, 2}}})
	wantState(t, "Get s3 after s5", get(t, svc, app, u2, "s3"), map[string]any{"app:a": "app2", "user:b": "u2"})
}

func testGetNotFound(t *testing.T, svc session.Service) {
	create(t, svc, app, u1, "s1", nil)
	for _, req := range []*session.GetRequest{
		{AppName: app, UserID: u1, SessionID: "nope"},
		{AppName: app, UserID: u2, SessionID: "s1"},
		{AppName: app2, UserID: u1, SessionID: "s1"},
		{AppName: "", UserID: "", SessionID: ""},
	} {
		s, err := svc.Get(t.Context(), req)
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Get(%s/%s/%s): err = %v, want ErrNotFound", req.AppName, req.UserID, req.SessionID, err)
		}
		if s != nil {
			t.Errorf("Get(%s/%s/%s) returned a session with its error", req.AppName, req.UserID, req.SessionID)
		}
	}
}

// withEvents creates app/u1/s1 with events e1..e5 one second apart from t0.
func withEvents(t *testing.T, svc session.Service, t0 time.Time) {
	t.Helper()
	s := create(t, svc, app, u1, "s1", nil)
	for i := 1; i <= 5; i++ {
		appendOK(t, svc, s, newEvent(fmt.Sprintf("e%d", i), t0.Add(time.Duration(i)*time.Second), nil))
	}
}

func testGetNumRecentEvents(t *testing.T, svc session.Service) {
	withEvents(t, svc, base())
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{0, []string{"e1", "e2", "e3", "e4", "e5"}},
		{1, []string{"e5"}},
		{2, []string{"e4", "e5"}},
		{5, []string{"e1", "e2", "e3", "e4", "e5"}},
		{10, []string{"e1", "e2", "e3", "e4", "e5"}},
	} {
		s := getReq(t, svc, &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1", NumRecentEvents: tc.n})
		wantEventIDs(t, fmt.Sprintf("NumRecentEvents %d", tc.n), s, tc.want...)
	}
}

func testGetAfter(t *testing.T, svc session.Service) {
	t0 := base()
	withEvents(t, svc, t0)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	for _, tc := range []struct {
		name  string
		after time.Time
		want  []string
	}{
		{"zero", time.Time{}, []string{"e1", "e2", "e3", "e4", "e5"}},
		{"before all", sec(0), []string{"e1", "e2", "e3", "e4", "e5"}},
		{"at first", sec(1), []string{"e1", "e2", "e3", "e4", "e5"}},
		{"at e3 (inclusive)", sec(3), []string{"e3", "e4", "e5"}},
		{"just after e3", ms(sec(3), 1), []string{"e4", "e5"}},
		{"just before e3", ms(sec(3), -1), []string{"e3", "e4", "e5"}},
		{"at last", sec(5), []string{"e5"}},
		{"after all", sec(6), nil},
	} {
		s := getReq(t, svc, &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1", After: tc.after})
		wantEventIDs(t, "After "+tc.name, s, tc.want...)
	}
}

func testGetNumRecentAndAfter(t *testing.T, svc session.Service) {
	t0 := base()
	withEvents(t, svc, t0)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	for _, tc := range []struct {
		n     int
		after time.Time
		want  []string
	}{
		{3, sec(1), []string{"e3", "e4", "e5"}},
		{3, sec(4), []string{"e4", "e5"}},
		{2, sec(2), []string{"e4", "e5"}},
		{1, sec(6), nil},
	} {
		s := getReq(t, svc, &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1", NumRecentEvents: tc.n, After: tc.after})
		wantEventIDs(t, fmt.Sprintf("NumRecentEvents %d, After %v", tc.n, tc.after.Sub(t0)), s, tc.want...)
	}
}

func testGetReturnsCopies(t *testing.T, svc session.Service) {
	tags := []string{"a", "b"}
	counts := map[string]int{"a": 1}
	create(t, svc, app, u1, "s1", map[string]any{
		"nested": map[string]any{"list": []any{1}}, "app:cfg": map[string]any{"k": "v"}, "user:prefs": []any{"a"}, "k": "v",
		"tags": tags, "counts": counts,
	})
	// Typed slices and maps given to Create are copied too.
	tags[0] = "changed"
	counts["a"] = 2
	want := map[string]any{"nested": map[string]any{"list": []any{1}}, "app:cfg": map[string]any{"k": "v"}, "user:prefs": []any{"a"}, "k": "v",
		"tags": []any{"a", "b"}, "counts": map[string]any{"a": 1}}
	wantState(t, "Get after mutating Create's input", get(t, svc, app, u1, "s1"), want)

	s := get(t, svc, app, u1, "s1")
	// Writing the copy's state, at the top level or inside a value, does not
	// reach storage.
	session.NewState(s, &session.EventActions{}).Set("k", "changed")
	session.NewState(s, &session.EventActions{}).Set("new", "x")
	if v, ok := s.StateValue("nested"); ok {
		if m, ok := v.(map[string]any); ok {
			m["list"] = []any{"changed"}
			m["added"] = 1
		}
	}
	if v, ok := s.StateValue("app:cfg"); ok {
		if m, ok := v.(map[string]any); ok {
			m["k"] = "changed"
		}
	}
	if v, ok := s.StateValue("user:prefs"); ok {
		if l, ok := v.([]any); ok && len(l) > 0 {
			l[0] = "changed"
		}
	}
	if v, ok := s.StateValue("tags"); ok {
		if l, ok := v.([]string); ok {
			l[1] = "changed"
		}
	}
	if v, ok := s.StateValue("counts"); ok {
		if m, ok := v.(map[string]int); ok {
			m["a"] = 3
		}
	}
	m := s.State()
	m["k"] = "changed again"
	delete(m, "nested")
	wantState(t, "Get after mutating a copy", get(t, svc, app, u1, "s1"), want)

	// Neither does changing an appended event's delta values afterwards.
	obj := map[string]any{"x": 1}
	s = get(t, svc, app, u1, "s1")
	appendOK(t, svc, s, newEvent("e1", base(), map[string]any{"obj": obj, "app:obj": obj}))
	obj["x"] = 2
	want["obj"] = map[string]any{"x": 1}
	want["app:obj"] = map[string]any{"x": 1}
	wantState(t, "Get after mutating an appended delta", get(t, svc, app, u1, "s1"), want)

	// Nor a value from a listed session.
	for _, ls := range list(t, svc, app, u1) {
		if v, ok := ls.StateValue("nested"); ok {
			if m, ok := v.(map[string]any); ok {
				m["list"] = nil
			}
		}
	}
	wantState(t, "Get after mutating a listed copy", get(t, svc, app, u1, "s1"), want)
}

func testList(t *testing.T, svc session.Service) {
	t0 := base()
	s1 := create(t, svc, app, u1, "s1", map[string]any{"app:a": 1, "user:b": 1, "k": "s1"})
	create(t, svc, app, u1, "s2", nil)
	s3 := create(t, svc, app, u2, "s3", map[string]any{"user:b": 2})
	create(t, svc, app2, u1, "s4", map[string]any{"app:a": "other"})
	appendOK(t, svc, s1, newEvent("e1", ms(t0, 1), map[string]any{"k2": true}))
	appendOK(t, svc, s1, newEvent("e2", ms(t0, 2), nil))
	appendOK(t, svc, s3, newEvent("e3", ms(t0, 3), nil))

	byID := func(ss []*session.Session) map[string]*session.Session {
		m := map[string]*session.Session{}
		for _, s := range ss {
			m[s.UserID+"/"+s.ID] = s
		}
		return m
	}
	check := func(what string, got []*session.Session, want map[string]map[string]any) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: sessions %q, want %d", what, sessionIDs(got), len(want))
		}
		m := byID(got)
		for key, state := range want {
			s, ok := m[key]
			if !ok {
				t.Errorf("%s: %s missing from %q", what, key, sessionIDs(got))
				continue
			}
			if s.AppName == "" {
				t.Errorf("%s: %s has no app name", what, key)
			}
			if n := len(s.Events()); n != 0 {
				t.Errorf("%s: %s lists %d events, want none", what, key, n)
			}
			wantState(t, what+" "+key, s, state)
		}
	}
	check("List user-1", list(t, svc, app, u1), map[string]map[string]any{
		u1 + "/s1": {"app:a": 1, "user:b": 1, "k": "s1", "k2": true},
		u1 + "/s2": {"app:a": 1, "user:b": 1},
	})
	check("List user-2", list(t, svc, app, u2), map[string]map[string]any{
		u2 + "/s3": {"app:a": 1, "user:b": 2},
	})
	check("List app", list(t, svc, app, ""), map[string]map[string]any{
		u1 + "/s1": {"app:a": 1, "user:b": 1, "k": "s1", "k2": true},
		u1 + "/s2": {"app:a": 1, "user:b": 1},
		u2 + "/s3": {"app:a": 1, "user:b": 2},
	})
	check("List other app", list(t, svc, app2, ""), map[string]map[string]any{
		u1 + "/s4": {"app:a": "other"},
	})
	for _, l := range list(t, svc, app, "") {
		if l.AppName != app {
			t.Errorf("List app: %s/%s has app %q", l.UserID, l.ID, l.AppName)
		}
	}
	if got := list(t, svc, "no-such-app", ""); len(got) != 0 {
		t.Errorf("List unknown app = %q, want none", sessionIDs(got))
	}
	if got := list(t, svc, app, "no-such-user"); len(got) != 0 {
		t.Errorf("List unknown user = %q, want none", sessionIDs(got))
	}
}

func testListOrder(t *testing.T, svc session.Service) {
	t0 := base()
	a := create(t, svc, app, u1, "a", nil)
	b := create(t, svc, app, u1, "b", nil)
	c := create(t, svc, app, u2, "c", nil)
	appendOK(t, svc, a, newEvent("ea", ms(t0, 300), nil))
	appendOK(t, svc, b, newEvent("eb", ms(t0, 100), nil))
	appendOK(t, svc, c, newEvent("ec", ms(t0, 200), nil))

	got := list(t, svc, app, "")
	if ids := sessionIDs(got); !slices.Equal(ids, []string{u1 + "/b", u2 + "/c", u1 + "/a"}) {
		t.Errorf("List app order = %q, want oldest update first: b, c, a", ids)
	}
	want := map[string]time.Time{"a": ms(t0, 300), "b": ms(t0, 100), "c": ms(t0, 200)}
	for _, s := range got {
		if !sameTime(s.LastUpdateTime(), want[s.ID]) {
			t.Errorf("listed %s LastUpdateTime = %v, want %v", s.ID, s.LastUpdateTime(), want[s.ID])
		}
	}
	if ids := sessionIDs(list(t, svc, app, u1)); !slices.Equal(ids, []string{u1 + "/b", u1 + "/a"}) {
		t.Errorf("List user order = %q, want b, a", ids)
	}

	// A new event moves a session to the end.
	appendOK(t, svc, b, newEvent("eb2", ms(t0, 400), nil))
	if ids := sessionIDs(list(t, svc, app, "")); !slices.Equal(ids, []string{u2 + "/c", u1 + "/a", u1 + "/b"}) {
		t.Errorf("List app order after append = %q, want c, a, b", ids)
	}
}

func testListOrderTies(t *testing.T, svc session.Service) {
	ts := base()
	for _, k := range [][2]string{{u2, "a"}, {u1, "b"}, {u1, "a"}} {
		s := create(t, svc, app, k[0], k[1], nil)
		appendOK(t, svc, s, newEvent("e-"+k[0]+"-"+k[1], ts, nil))
	}
	// google-adk breaks ties on user id, then session id.
	if ids := sessionIDs(list(t, svc, app, "")); !slices.Equal(ids, []string{u1 + "/a", u1 + "/b", u2 + "/a"}) {
		t.Errorf("List order with equal update times = %q, want user-1/a, user-1/b, user-2/a", ids)
	}
}

func testDelete(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", map[string]any{"app:a": 1, "user:b": 1, "k": 1})
	appendOK(t, svc, s, newEvent("e1", base(), map[string]any{"k2": 2}))
	other := create(t, svc, app, u2, "s1", nil)
	appendOK(t, svc, other, newEvent("e2", base(), nil))

	del := func(appName, userID, id string) {
		t.Helper()
		if err := svc.Delete(t.Context(), &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: id}); err != nil {
			t.Errorf("Delete(%s/%s/%s): %v", appName, userID, id, err)
		}
	}
	del(app, u1, "s1")
	if _, err := svc.Get(t.Context(), &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get deleted session: err = %v, want ErrNotFound", err)
	}
	if ids := sessionIDs(list(t, svc, app, "")); !slices.Equal(ids, []string{u2 + "/s1"}) {
		t.Errorf("List after delete = %q, want only user-2/s1", ids)
	}
	// Deleting is idempotent and does not need the session to exist.
	del(app, u1, "s1")
	del(app, u1, "never")
	del("no-such-app", "nobody", "never")

	// The same id under another user is untouched.
	o := get(t, svc, app, u2, "s1")
	wantEventIDs(t, "other user's session", o, "e2")

	// A session created again under the id starts with no events and no
	// session state; app: and user: state outlive the session, as in
	// google-adk.
	s = create(t, svc, app, u1, "s1", nil)
	wantEventIDs(t, "re-created session (Create)", s)
	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "re-created session (Get)", g)
	wantState(t, "re-created session", g, map[string]any{"app:a": 1, "user:b": 1})
}

func testAppendStored(t *testing.T, svc session.Service) {
	t0 := base()
	s := create(t, svc, app, u1, "s1", nil)
	e1 := newEvent("e1", ms(t0, 1), nil)
	e1.Author = "user"
	e1.Content = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "hi"}}}
	appendOK(t, svc, s, e1)
	wantEventIDs(t, "caller's copy after one append", s, "e1")
	e2 := newEvent("e2", ms(t0, 2), nil)
	appendOK(t, svc, s, e2)
	wantEventIDs(t, "caller's copy after two appends", s, "e1", "e2")

	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "Get", g, "e1", "e2")
	if evs := g.Events(); len(evs) == 2 {
		wantSameEvent(t, evs[0], e1)
		wantSameEvent(t, evs[1], e2)
	}
}

func testAppendStateScopes(t *testing.T, svc session.Service) {
	a := create(t, svc, app, u1, "a", map[string]any{"k": "a0"})
	b := create(t, svc, app, u1, "b", map[string]any{"k": "b0"})
	create(t, svc, app, u2, "c", nil)
	create(t, svc, app2, u1, "d", nil)

	e := newEvent("e1", base(), map[string]any{"app:x": 1, "user:y": 2, "k": "a1", "z": 3, "temp:w": 4})
	appendOK(t, svc, a, e)

	// The caller's copy sees every key, temp: included.
	wantState(t, "caller's copy", a, map[string]any{"app:x": 1, "user:y": 2, "k": "a1", "z": 3, "temp:w": 4})
	wantState(t, "Get a", get(t, svc, app, u1, "a"), map[string]any{"app:x": 1, "user:y": 2, "k": "a1", "z": 3})
	wantState(t, "Get b (same user)", get(t, svc, app, u1, "b"), map[string]any{"app:x": 1, "user:y": 2, "k": "b0"})
	wantState(t, "Get c (other user)", get(t, svc, app, u2, "c"), map[string]any{"app:x": 1})
	wantState(t, "Get d (other app)", get(t, svc, app2, u1, "d"), nil)
	wantState(t, "List c", list(t, svc, app, u2)[0], map[string]any{"app:x": 1})
	// b's copy was read before the append and does not change.
	wantState(t, "b's old copy", b, map[string]any{"k": "b0"})

	// Later deltas overwrite per scope.
	appendOK(t, svc, b, newEvent("e2", ms(base(), 1), map[string]any{"app:x": "bx", "user:y": "by", "k": "b1"}))
	wantState(t, "Get a after b's append", get(t, svc, app, u1, "a"), map[string]any{"app:x": "bx", "user:y": "by", "k": "a1", "z": 3})
	wantState(t, "Get b after b's append", get(t, svc, app, u1, "b"), map[string]any{"app:x": "bx", "user:y": "by", "k": "b1"})
	wantState(t, "Get c after b's append", get(t, svc, app, u2, "c"), map[string]any{"app:x": "bx"})
}

func testAppendTempState(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", map[string]any{"temp:init": 1})
	wantState(t, "created with a temp: key", s, nil)

	e := newEvent("e1", base(), map[string]any{"temp:a": 1, "k": 2})
	appendOK(t, svc, s, e)
	if _, ok := e.Actions.StateDelta["temp:a"]; ok {
		t.Errorf("appended event's StateDelta still holds temp:a: %v", e.Actions.StateDelta)
	}
	if v, ok := s.StateValue("temp:a"); !ok || v != 1 {
		t.Errorf("caller's copy temp:a = %v, %v; want 1 for the rest of the invocation", v, ok)
	}
	g := get(t, svc, app, u1, "s1")
	wantState(t, "Get", g, map[string]any{"k": 2})
	if evs := g.Events(); len(evs) != 1 {
		t.Fatalf("Get: %d events, want 1", len(evs))
	} else if _, ok := evs[0].Actions.StateDelta["temp:a"]; ok {
		t.Errorf("stored event's StateDelta holds temp:a: %v", evs[0].Actions.StateDelta)
	}

	// An event with only temp: keys stores no state and leaves the caller's
	// temp: keys in place.
	e2 := newEvent("e2", ms(base(), 1), map[string]any{"temp:b": "x"})
	appendOK(t, svc, s, e2)
	if len(e2.Actions.StateDelta) != 0 {
		t.Errorf("event of temp: keys only kept %v", e2.Actions.StateDelta)
	}
	wantState(t, "caller's copy after second append", s, map[string]any{"k": 2, "temp:a": 1, "temp:b": "x"})
	g = get(t, svc, app, u1, "s1")
	wantState(t, "Get after second append", g, map[string]any{"k": 2})
	for _, l := range list(t, svc, app, u1) {
		wantState(t, "List", l, map[string]any{"k": 2})
	}
}

func testAppendNullValue(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", map[string]any{"k": "v", "app:a": "v", "user:u": "v"})
	appendOK(t, svc, s, newEvent("e1", base(), map[string]any{"k": nil, "app:a": nil, "user:u": nil, "n": nil}))
	// A null value is stored as null; the key stays (google-adk does not
	// delete keys).
	g := get(t, svc, app, u1, "s1")
	for _, k := range []string{"k", "app:a", "user:u", "n"} {
		if v, ok := g.StateValue(k); !ok || v != nil {
			t.Errorf("Get: state[%q] = %v, %v; want nil, true", k, v, ok)
		}
	}
	wantState(t, "Get", g, map[string]any{"k": nil, "app:a": nil, "user:u": nil, "n": nil})

	// A nil map or slice is null too, not {} or [].
	appendOK(t, svc, s, newEvent("e2", ms(base(), 1), map[string]any{"m": map[string]any(nil), "l": []any(nil), "app:m": map[string]any(nil)}))
	wantState(t, "Get after nil containers", get(t, svc, app, u1, "s1"),
		map[string]any{"k": nil, "app:a": nil, "user:u": nil, "n": nil, "m": nil, "l": nil, "app:m": nil})
}

func testAppendPartial(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", nil)
	lu := s.LastUpdateTime()
	p := newEvent("p1", base(), map[string]any{"k": 1, "app:a": 1, "user:u": 1, "temp:t": 1})
	p.Partial = true
	appendOK(t, svc, s, p)

	wantEventIDs(t, "caller's copy after a partial event", s)
	wantState(t, "caller's copy after a partial event", s, nil)
	if len(p.Actions.StateDelta) != 4 {
		t.Errorf("partial event's delta was changed: %v", p.Actions.StateDelta)
	}
	if !sameTime(s.LastUpdateTime(), lu) {
		t.Errorf("partial event moved the caller's LastUpdateTime to %v", s.LastUpdateTime())
	}
	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "Get after a partial event", g)
	wantState(t, "Get after a partial event", g, nil)
	if !sameTime(g.LastUpdateTime(), lu) {
		t.Errorf("partial event moved the stored LastUpdateTime to %v", g.LastUpdateTime())
	}
	// The copy is still current.
	appendOK(t, svc, s, newEvent("e1", ms(base(), 1), nil))
	wantEventIDs(t, "Get after the final event", get(t, svc, app, u1, "s1"), "e1")
}

func testAppendLastUpdateTime(t *testing.T, svc session.Service) {
	t0 := base()
	s := create(t, svc, app, u1, "s1", nil)
	for i, ts := range []time.Time{ms(t0, 5), ms(t0, 1500), t0.Add(time.Minute)} {
		appendOK(t, svc, s, newEvent(fmt.Sprintf("e%d", i), ts, nil))
		if !sameTime(s.LastUpdateTime(), ts) {
			t.Errorf("after event %d: caller's LastUpdateTime = %v, want the event's %v", i, s.LastUpdateTime(), ts)
		}
		if g := get(t, svc, app, u1, "s1"); !sameTime(g.LastUpdateTime(), ts) {
			t.Errorf("after event %d: Get LastUpdateTime = %v, want the event's %v", i, g.LastUpdateTime(), ts)
		}
		if l := list(t, svc, app, u1); len(l) != 1 || !sameTime(l[0].LastUpdateTime(), ts) {
			t.Errorf("after event %d: List LastUpdateTime wrong: %d sessions", i, len(l))
		}
	}
}

func testAppendNotFound(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", nil)
	if err := svc.Delete(t.Context(), &session.DeleteRequest{AppName: app, UserID: u1, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AppendEvent(t.Context(), s, newEvent("e1", base(), map[string]any{"app:a": 1})); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("append to a deleted session: err = %v, want ErrNotFound", err)
	}
	ghost := session.New(app, u1, "ghost", nil, nil, time.Now(), 0)
	if err := svc.AppendEvent(t.Context(), ghost, newEvent("e2", base(), nil)); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("append to a never created session: err = %v, want ErrNotFound", err)
	}
	if _, err := svc.Get(t.Context(), &session.GetRequest{AppName: app, UserID: u1, SessionID: "ghost"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("append created a session: Get err = %v", err)
	}
	wantState(t, "new session after refused appends", create(t, svc, app, u1, "s2", nil), nil)
}

func testAppendStale(t *testing.T, svc session.Service) {
	t0 := base()
	created := create(t, svc, app, u1, "s1", nil)
	fresh := get(t, svc, app, u1, "s1")
	appendOK(t, svc, fresh, newEvent("e1", ms(t0, 1), map[string]any{"k": 1}))

	stale := newEvent("e-stale", ms(t0, 2), map[string]any{"k": "stale", "app:a": "stale", "user:u": "stale", "temp:t": "stale"})
	err := svc.AppendEvent(t.Context(), created, stale)
	if !errors.Is(err, session.ErrStale) {
		t.Fatalf("append via a stale copy: err = %v, want ErrStale", err)
	}
	// Nothing is stored, and the stale copy does not take the event.
	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "Get after a stale append", g, "e1")
	wantState(t, "Get after a stale append", g, map[string]any{"k": 1})
	wantState(t, "other session after a stale append", create(t, svc, app, u1, "s2", nil), nil)
	wantEventIDs(t, "stale copy", created)
	if _, ok := created.StateValue("k"); ok {
		t.Errorf("stale copy took the refused event's state")
	}
	if !sameTime(g.LastUpdateTime(), ms(t0, 1)) {
		t.Errorf("stale append moved LastUpdateTime to %v", g.LastUpdateTime())
	}

	// The copy that appended stays current; a re-read copy is current.
	appendOK(t, svc, fresh, newEvent("e2", ms(t0, 3), nil))
	if err := svc.AppendEvent(t.Context(), g, newEvent("e-stale2", ms(t0, 4), nil)); !errors.Is(err, session.ErrStale) {
		t.Errorf("append via a copy read before e2: err = %v, want ErrStale", err)
	}
	g = get(t, svc, app, u1, "s1")
	appendOK(t, svc, g, newEvent("e3", ms(t0, 5), nil))
	wantEventIDs(t, "Get at the end", get(t, svc, app, u1, "s1"), "e1", "e2", "e3")
}

func testAppendStaleAfterRecreate(t *testing.T, svc session.Service) {
	old := create(t, svc, app, u1, "s1", nil)
	if err := svc.Delete(t.Context(), &session.DeleteRequest{AppName: app, UserID: u1, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	create(t, svc, app, u1, "s1", nil)
	err := svc.AppendEvent(t.Context(), old, newEvent("e1", base(), map[string]any{"k": 1}))
	if !errors.Is(err, session.ErrStale) {
		t.Errorf("append via a copy of a deleted and re-created session: err = %v, want ErrStale", err)
	}
	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "re-created session", g)
	wantState(t, "re-created session", g, nil)
}

func testAppendFreshCopies(t *testing.T, svc session.Service) {
	t0 := base()
	s := create(t, svc, app, u1, "s1", nil)
	appendOK(t, svc, s, newEvent("e1", ms(t0, 1), nil))
	appendOK(t, svc, s, newEvent("e2", ms(t0, 2), nil))

	// A copy with only some events, or from List, is current.
	part := getReq(t, svc, &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1", NumRecentEvents: 1})
	appendOK(t, svc, part, newEvent("e3", ms(t0, 3), nil))
	after := getReq(t, svc, &session.GetRequest{AppName: app, UserID: u1, SessionID: "s1", After: ms(t0, 100)})
	appendOK(t, svc, after, newEvent("e4", ms(t0, 4), nil))
	listed := list(t, svc, app, u1)
	if len(listed) != 1 {
		t.Fatalf("List: %d sessions", len(listed))
	}
	appendOK(t, svc, listed[0], newEvent("e5", ms(t0, 5), nil))

	// Changes to app: and user: state through other sessions do not make
	// this one stale.
	s = get(t, svc, app, u1, "s1")
	other := create(t, svc, app, u1, "s2", map[string]any{"app:a": 1, "user:u": 1})
	appendOK(t, svc, other, newEvent("o1", ms(t0, 6), map[string]any{"app:a": 2, "user:u": 2}))
	appendOK(t, svc, s, newEvent("e6", ms(t0, 7), nil))
	wantEventIDs(t, "Get", get(t, svc, app, u1, "s1"), "e1", "e2", "e3", "e4", "e5", "e6")
}

// RunKeyOrder checks that a service keeps the order of the dict keys of
// function call args and responses (Response.KeyOrder), which Go maps lose
// and google-adk prints them in. It is apart from Run because a store
// that keeps events in PostgreSQL's jsonb, as google-adk's
// DatabaseSessionService does, cannot keep it: jsonb reorders keys.
func RunKeyOrder(t *testing.T, newService func(t *testing.T) session.Service) {
	t.Run("AppendEvent/KeyOrder", func(t *testing.T) { testEventKeyOrder(t, newService(t)) })
	t.Run("State/KeyOrder", func(t *testing.T) { testStateKeyOrder(t, newService(t)) })
}

// testStateKeyOrder: the key-order hints of state values (the order their
// dicts were written in), in every scope, come back from Create, Get and
// List; a value written again without one loses it.
func testStateKeyOrder(t *testing.T, svc session.Service) {
	profile := json.RawMessage(`{"name":0,"address":{"zip":0,"city":0}}`)
	prefs := json.RawMessage(`{"theme":0,"alerts":[{"kind":0,"at":0}]}`)
	flags := json.RawMessage(`{"b":0,"a":0}`)
	s, err := svc.Create(t.Context(), &session.CreateRequest{AppName: app, UserID: u1, SessionID: "s1",
		State: map[string]any{
			"profile":    map[string]any{"name": "Ada", "address": map[string]any{"zip": "0150", "city": "Oslo"}},
			"user:prefs": map[string]any{"theme": "dark", "alerts": []any{map[string]any{"kind": "sms", "at": 9}}},
			"app:flags":  map[string]any{"b": true, "a": false},
			"plain":      map[string]any{"a": 1, "b": 2},
		},
		StateKeyOrder: map[string]json.RawMessage{"profile": profile, "user:prefs": prefs, "app:flags": flags},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"profile": string(profile), "user:prefs": string(prefs), "app:flags": string(flags), "plain": ""}
	check := func(what string, s *session.Session) {
		t.Helper()
		for k, w := range want {
			if h := s.StateKeyOrder(k); string(h) != w {
				t.Errorf("%s: StateKeyOrder(%q) = %s, want %s", what, k, h, w)
			}
		}
	}
	check("Create", s)
	check("Get", get(t, svc, app, u1, "s1"))
	cart := json.RawMessage(`{"zucchini":0,"apple":0}`)
	e := newEvent("e1", ms(base(), 1), map[string]any{
		"cart":    map[string]any{"zucchini": 2, "apple": 3},
		"profile": map[string]any{"name": "Bo"},
	})
	e.Actions.StateKeyOrder = map[string]json.RawMessage{"cart": cart}
	appendOK(t, svc, s, e)
	want["cart"], want["profile"] = string(cart), ""
	check("the appending session", s)
	check("Get after AppendEvent", get(t, svc, app, u1, "s1"))
	for _, l := range list(t, svc, app, u1) {
		check("List", l)
	}
}

func testEventKeyOrder(t *testing.T, svc session.Service) {
	s := create(t, svc, app, u1, "s1", nil)
	e := &session.Event{
		Response: model.Response{
			Content: &genai.Content{Role: "model", Parts: []*genai.Part{
				{Text: "Booking."},
				{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "book", Args: map[string]any{
					"trip": map[string]any{"to": "Oslo", "from": "Bergen", "when": map[string]any{"month": 5, "day": 2}}, "note": "x"}}},
				{FunctionResponse: &genai.FunctionResponse{ID: "c0", Name: "quote", Response: map[string]any{
					"status": "ok", "legs": []any{map[string]any{"to": "Oslo", "from": "Bergen"}}, "alpha": 1}}},
				{FunctionCall: &genai.FunctionCall{ID: "c2", Name: "sorted", Args: map[string]any{"a": 1, "b": 2}}},
			}},
			KeyOrder: []json.RawMessage{
				nil,
				json.RawMessage(`{"trip":{"to":0,"from":0,"when":{"month":0,"day":0}},"note":0}`),
				json.RawMessage(`{"status":0,"legs":[{"to":0,"from":0}],"alpha":0}`),
			},
		},
		ID: "e1", InvocationID: "inv-1", Author: "agent", Timestamp: ms(base(), 1),
	}
	appendOK(t, svc, s, e)
	got := get(t, svc, app, u1, "s1").Events()
	if len(got) != 1 {
		t.Fatalf("Get: %d events, want 1", len(got))
	}
	for i, want := range []string{"", string(e.KeyOrder[1]), string(e.KeyOrder[2]), ""} {
		if h := got[0].PartKeyOrder(i); string(h) != want {
			t.Errorf("part %d: key order %s, want %s", i, h, want)
		}
	}
	wantSameEvent(t, got[0], e)
}

func testEventRoundTrip(t *testing.T, svc session.Service) {
	t0 := base()
	s := create(t, svc, app, u1, "s1", nil)
	full := &session.Event{
		Response: model.Response{
			Content: &genai.Content{Role: "model", Parts: []*genai.Part{
				{Text: "thinking", Thought: true},
				{Text: "Let me look."},
				{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "get_weather", Args: map[string]any{"city": "Paris", "days": 3, "opts": []any{"a", true}}}},
				{FunctionCall: &genai.FunctionCall{ID: "call-2", Name: "book"}},
				{FunctionResponse: &genai.FunctionResponse{ID: "call-0", Name: "lookup", Response: map[string]any{"result": map[string]any{"n": 1.5}}}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 0xff}}},
			}},
			TurnComplete:   true,
			FinishReason:   genai.FinishReasonStop,
			Interrupted:    true,
			CustomMetadata: map[string]any{"trace": map[string]any{"span": "s-1"}, "tags": []any{"x"}, "n": 2},
			UsageMetadata:  &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 3, CandidatesTokenCount: 2, TotalTokenCount: 5},
			ModelVersion:   "model-1",
		},
		ID: "e-full", InvocationID: "inv-1", Author: "agent", Branch: "root.agent",
		Actions: session.EventActions{
			SkipSummarization: true,
			StateDelta:        map[string]any{"k": "v", "nested": map[string]any{"a": []any{1, 2}}, "null": nil, "app:a": 1, "user:u": "x", "temp:t": 1},
			ArtifactDelta:     map[string]int{"report.txt": 2, "zero.bin": 0},
			TransferToAgent:   "billing",
			TransferReason:    "asked about invoices",
			Escalate:          true,
			RequestedAuthConfigs: map[string]any{
				"call-2": map[string]any{"authScheme": map[string]any{"type": "apiKey", "in": "header", "name": "X-Key"}},
			},
			RequestedToolConfirmations: map[string]session.ToolConfirmation{
				"call-1": {Hint: "Book it?", Payload: map[string]any{"price": 120}},
				"call-3": {Confirmed: true},
			},
			Compaction: &session.EventCompaction{StartTimestamp: 1.5, EndTimestamp: 2.25,
				CompactedContent: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "summary"}}}},
			EndOfAgent:               true,
			AgentState:               map[string]any{"step": 4},
			RewindBeforeInvocationID: "inv-0",
		},
		LongRunningToolIDs: []string{"call-1", "call-2"},
		Timestamp:          ms(t0, 1),
	}
	// Empty maps are kept apart from absent ones.
	empty := &session.Event{
		Response: model.Response{ErrorCode: "SAFETY", ErrorMessage: "blocked", CustomMetadata: map[string]any{}},
		ID:       "e-empty", InvocationID: "inv-1", Author: "agent",
		Actions: session.EventActions{
			StateDelta: map[string]any{}, ArtifactDelta: map[string]int{}, AgentState: map[string]any{},
			RequestedAuthConfigs: map[string]any{}, RequestedToolConfirmations: map[string]session.ToolConfirmation{},
		},
		Timestamp: ms(t0, 2),
	}
	bare := &session.Event{ID: "e-bare", InvocationID: "inv-2", Author: "user", Timestamp: ms(t0, 3)}
	for _, e := range []*session.Event{full, empty, bare} {
		appendOK(t, svc, s, e)
	}
	if _, ok := full.Actions.StateDelta["temp:t"]; ok {
		t.Errorf("temp:t not trimmed from the appended event")
	}
	g := get(t, svc, app, u1, "s1")
	evs := g.Events()
	if len(evs) != 3 {
		t.Fatalf("Get: %d events, want 3", len(evs))
	}
	for i, want := range []*session.Event{full, empty, bare} {
		wantSameEvent(t, evs[i], want)
	}
	// Spot checks on the decoded values, beyond the JSON comparison.
	got := evs[0]
	if !slices.Equal(got.LongRunningToolIDs, []string{"call-1", "call-2"}) {
		t.Errorf("LongRunningToolIDs = %q", got.LongRunningToolIDs)
	}
	if got.Branch != "root.agent" || got.Author != "agent" || got.InvocationID != "inv-1" {
		t.Errorf("identity fields = %q %q %q", got.Branch, got.Author, got.InvocationID)
	}
	if fc := got.FunctionCalls(); len(fc) != 2 || fc[0].Name != "get_weather" || fc[0].ID != "call-1" {
		t.Errorf("FunctionCalls = %+v", fc)
	}
	if fr := got.FunctionResponses(); len(fr) != 1 || fr[0].Name != "lookup" {
		t.Errorf("FunctionResponses = %+v", fr)
	}
	if p := got.Content.Parts[5]; p.InlineData == nil || string(p.InlineData.Data) != string([]byte{0x89, 'P', 'N', 'G', 0, 0xff}) {
		t.Errorf("inline data did not round-trip: %+v", p.InlineData)
	}
	if got.Actions.ArtifactDelta["report.txt"] != 2 {
		t.Errorf("ArtifactDelta = %v", got.Actions.ArtifactDelta)
	}
	if e := evs[1]; e.Actions.StateDelta == nil || e.Actions.AgentState == nil || e.CustomMetadata == nil {
		t.Errorf("empty maps came back nil: stateDelta %v, agentState %v, customMetadata %v",
			e.Actions.StateDelta, e.Actions.AgentState, e.CustomMetadata)
	}
	if e := evs[2]; e.Actions.StateDelta != nil || e.Actions.AgentState != nil || e.CustomMetadata != nil {
		t.Errorf("absent maps came back non-nil: stateDelta %v, agentState %v, customMetadata %v",
			e.Actions.StateDelta, e.Actions.AgentState, e.CustomMetadata)
	}
	// The stored state follows the event.
	wantState(t, "Get", g, map[string]any{"k": "v", "nested": map[string]any{"a": []any{1, 2}}, "null": nil, "app:a": 1, "user:u": "x"})
}

func testConcurrentStaleCopies(t *testing.T, svc session.Service) {
	const rounds = 20
	t0 := base()
	create(t, svc, app, u1, "s1", nil)
	var want []string
	wantKeys := map[string]any{}
	for r := range rounds {
		copies := []*session.Session{get(t, svc, app, u1, "s1"), get(t, svc, app, u1, "s1")}
		events := make([]*session.Event, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 2 {
			key := fmt.Sprintf("r%d_g%d", r, i)
			events[i] = newEvent(key, ms(t0, 10*r+i), map[string]any{key: true, "last": key, "user:last": key})
			wg.Go(func() {
				<-start
				errs[i] = svc.AppendEvent(t.Context(), copies[i], events[i])
			})
		}
		close(start)
		wg.Wait()
		var winner, loser int
		switch {
		case errs[0] == nil && errs[1] != nil:
			winner, loser = 0, 1
		case errs[1] == nil && errs[0] != nil:
			winner, loser = 1, 0
		default:
			t.Fatalf("round %d: errors %v and %v; want exactly one append to succeed", r, errs[0], errs[1])
		}
		if !errors.Is(errs[loser], session.ErrStale) {
			t.Fatalf("round %d: loser's error = %v, want ErrStale", r, errs[loser])
		}
		lk := fmt.Sprintf("r%d_g%d", r, loser)
		if _, ok := copies[loser].StateValue(lk); ok || len(copies[loser].Events()) != r*2 {
			t.Errorf("round %d: the loser's copy took its refused event", r)
		}
		// The loser reloads and retries.
		retry := newEvent(lk+"_retry", ms(t0, 10*r+5), map[string]any{lk: true, "last": lk, "user:last": lk})
		appendOK(t, svc, get(t, svc, app, u1, "s1"), retry)
		want = append(want, events[winner].ID, retry.ID)
		wantKeys[fmt.Sprintf("r%d_g%d", r, winner)] = true
		wantKeys[lk] = true
		wantKeys["last"] = lk
		wantKeys["user:last"] = lk
	}
	g := get(t, svc, app, u1, "s1")
	wantEventIDs(t, "after concurrent rounds", g, want...)
	wantState(t, "after concurrent rounds", g, wantKeys)
}

func testConcurrentSameCopy(t *testing.T, svc session.Service) {
	const goroutines, each = 8, 5
	t0 := base()
	s := create(t, svc, app, u1, "s1", nil)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("g%d_%d", g, i)
				if err := svc.AppendEvent(t.Context(), s, newEvent(key, ms(t0, g*each+i), map[string]any{key: i, "user:" + key: i})); err != nil {
					errs <- fmt.Errorf("%s: %w", key, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append through a shared copy: %v", err)
	}
	want := map[string]any{}
	var ids []string
	for g := range goroutines {
		for i := range each {
			key := fmt.Sprintf("g%d_%d", g, i)
			want[key], want["user:"+key] = i, i
			ids = append(ids, key)
		}
	}
	got := get(t, svc, app, u1, "s1")
	wantState(t, "Get", got, want)
	wantState(t, "shared copy", s, want)
	gotIDs := eventIDs(got)
	slices.Sort(gotIDs)
	slices.Sort(ids)
	if !slices.Equal(gotIDs, ids) {
		t.Errorf("stored events = %q, want %q", gotIDs, ids)
	}
	if n := len(s.Events()); n != goroutines*each {
		t.Errorf("shared copy has %d events, want %d", n, goroutines*each)
	}
}

func testConcurrentSessions(t *testing.T, svc session.Service) {
	const sessions, each = 8, 5
	t0 := base()
	copies := make([]*session.Session, sessions)
	for i := range sessions {
		copies[i] = create(t, svc, app, u1, fmt.Sprintf("s%d", i), nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*each)
	for i := range sessions {
		wg.Go(func() {
			for j := range each {
				key := fmt.Sprintf("s%d_%d", i, j)
				delta := map[string]any{"own": j, "user:" + key: true, "app:" + key: true}
				if err := svc.AppendEvent(t.Context(), copies[i], newEvent(key, ms(t0, j), delta)); err != nil {
					errs <- fmt.Errorf("%s: %w", key, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("append to separate sessions: %v", err)
	}
	shared := map[string]any{}
	for i := range sessions {
		for j := range each {
			key := fmt.Sprintf("s%d_%d", i, j)
			shared["user:"+key], shared["app:"+key] = true, true
		}
	}
	for i := range sessions {
		g := get(t, svc, app, u1, fmt.Sprintf("s%d", i))
		want := map[string]any{"own": each - 1}
		for k, v := range shared {
			want[k] = v
		}
		wantState(t, "Get", g, want)
		if n := len(g.Events()); n != each {
			t.Errorf("session s%d has %d events, want %d", i, n, each)
		}
	}
}
