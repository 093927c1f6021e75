// Package artifacttest is a conformance suite for artifact.Service
// implementations: versions, the session and user: scopes, listing,
// deletion, copies in and out, and concurrent saves (google-adk's artifact
// services).
//
// The suite uses only the public API, so any implementation can run it:
//
//	func TestConformance(t *testing.T) {
//		artifacttest.Run(t, func(t *testing.T) artifact.Service { return newMyService(t) })
//	}
package artifacttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/artifact"
)

// Run runs the conformance suite as subtests of t. newService is called once
// per subtest and must return a new, empty service; it may register cleanup
// with t.Cleanup.
func Run(t *testing.T, newService func(t *testing.T) artifact.Service) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, svc artifact.Service)
	}{
		{"Save/Versions", testSaveVersions},
		{"Save/NilPart", testSaveNil},
		{"Load/NotFound", testLoadNotFound},
		{"Load/RoundTrip", testRoundTrip},
		{"Load/Tombstone", testTombstone},
		{"Scope/Session", testSessionScope},
		{"Scope/User", testUserScope},
		{"List", testList},
		{"Delete", testDelete},
		{"Copies", testCopies},
		{"Concurrent/Saves", testConcurrentSaves},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newService(t)) })
	}
}

func key(session, name string) artifact.Key {
	return artifact.Key{AppName: "app", UserID: "user-1", SessionID: session, Name: name}
}

func save(t *testing.T, svc artifact.Service, k artifact.Key, p *genai.Part) int {
	t.Helper()
	v, err := svc.Save(t.Context(), k, p)
	if err != nil {
		t.Fatalf("Save(%+v): %v", k, err)
	}
	return v
}

func load(t *testing.T, svc artifact.Service, k artifact.Key, version int) *genai.Part {
	t.Helper()
	p, err := svc.Load(t.Context(), k, version)
	if err != nil {
		t.Fatalf("Load(%+v, %d): %v", k, version, err)
	}
	if p == nil {
		t.Fatalf("Load(%+v, %d) returned nil", k, version)
	}
	return p
}

func text(t *testing.T, svc artifact.Service, k artifact.Key, version int) string {
	t.Helper()
	return load(t, svc, k, version).Text
}

func versions(t *testing.T, svc artifact.Service, k artifact.Key) []int {
	t.Helper()
	vs, err := svc.Versions(t.Context(), k)
	if err != nil {
		t.Fatalf("Versions(%+v): %v", k, err)
	}
	return vs
}

func list(t *testing.T, svc artifact.Service, app, user, session string) []string {
	t.Helper()
	names, err := svc.List(t.Context(), app, user, session)
	if err != nil {
		t.Fatalf("List(%s, %s, %s): %v", app, user, session, err)
	}
	return names
}

func wantNotFound(t *testing.T, svc artifact.Service, k artifact.Key, version int) {
	t.Helper()
	p, err := svc.Load(t.Context(), k, version)
	if !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Load(%+v, %d): err = %v, want ErrNotFound", k, version, err)
	}
	if p != nil {
		t.Errorf("Load(%+v, %d) returned a part with its error", k, version)
	}
}

func testSaveVersions(t *testing.T, svc artifact.Service) {
	k := key("s1", "report.txt")
	for i := range 3 {
		if v := save(t, svc, k, genai.NewPartFromText(fmt.Sprintf("v%d", i))); v != i {
			t.Errorf("save %d returned version %d", i, v)
		}
	}
	if got := text(t, svc, k, artifact.Latest); got != "v2" {
		t.Errorf("Load Latest = %q, want v2", got)
	}
	for i := range 3 {
		if got := text(t, svc, k, i); got != fmt.Sprintf("v%d", i) {
			t.Errorf("Load %d = %q", i, got)
		}
	}
	if vs := versions(t, svc, k); !slices.Equal(vs, []int{0, 1, 2}) {
		t.Errorf("Versions = %v, want [0 1 2]", vs)
	}
	// Another name counts its own versions.
	if v := save(t, svc, key("s1", "other.txt"), genai.NewPartFromText("x")); v != 0 {
		t.Errorf("first save of another name returned version %d", v)
	}
}

func testSaveNil(t *testing.T, svc artifact.Service) {
	if _, err := svc.Save(t.Context(), key("s1", "a"), nil); err == nil {
		t.Errorf("Save(nil part) succeeded")
	}
	if vs := versions(t, svc, key("s1", "a")); len(vs) != 0 {
		t.Errorf("refused save left versions %v", vs)
	}
}

func testLoadNotFound(t *testing.T, svc artifact.Service) {
	k := key("s1", "a")
	wantNotFound(t, svc, k, artifact.Latest)
	wantNotFound(t, svc, k, 0)
	if vs := versions(t, svc, k); len(vs) != 0 {
		t.Errorf("Versions of a missing artifact = %v, want none", vs)
	}
	save(t, svc, k, genai.NewPartFromText("v0"))
	wantNotFound(t, svc, k, 1)
	wantNotFound(t, svc, k, -2)
	wantNotFound(t, svc, key("s2", "a"), artifact.Latest)
	wantNotFound(t, svc, artifact.Key{AppName: "app", UserID: "user-2", SessionID: "s1", Name: "a"}, artifact.Latest)
	wantNotFound(t, svc, artifact.Key{AppName: "other", UserID: "user-1", SessionID: "s1", Name: "a"}, artifact.Latest)
}

// js is p's JSON as a generic value, for comparison.
func js(t *testing.T, p *genai.Part) any {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("marshal part: %v", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("unmarshal part: %v", err)
	}
	return v
}

func testRoundTrip(t *testing.T, svc artifact.Service) {
	parts := map[string]*genai.Part{
		"text":   {Text: "hello, wörld"},
		"binary": {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe}}},
		"file":   {FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://bucket/doc.pdf"}},
		"call": {FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f",
			Args: map[string]any{"n": 1.5, "list": []any{"a", true}, "nested": map[string]any{"k": "v"}}}},
		"thought": {Text: "hmm", Thought: true, ThoughtSignature: []byte{1, 2, 3}},
		// Empty data round-trips; only the rewind tombstone (empty octet-stream) loads as absent.
		"empty": {InlineData: &genai.Blob{MIMEType: "text/plain", Data: []byte{}}},
	}
	for name, p := range parts {
		k := key("s1", name)
		save(t, svc, k, p)
		got := load(t, svc, k, artifact.Latest)
		if g, w := js(t, got), js(t, p); !reflect.DeepEqual(g, w) {
			t.Errorf("%s does not round-trip:\n got %v\nwant %v", name, g, w)
		}
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	k := key("s1", "big.bin")
	save(t, svc, k, &genai.Part{InlineData: &genai.Blob{MIMEType: "application/octet-stream", Data: big}})
	if got := load(t, svc, k, 0); got.InlineData == nil || !slices.Equal(got.InlineData.Data, big) {
		t.Errorf("a 3 MiB part does not round-trip")
	}
}

func testSessionScope(t *testing.T, svc artifact.Service) {
	save(t, svc, key("s1", "a"), genai.NewPartFromText("s1"))
	save(t, svc, key("s2", "a"), genai.NewPartFromText("s2"))
	if got := text(t, svc, key("s1", "a"), artifact.Latest); got != "s1" {
		t.Errorf("s1's a = %q", got)
	}
	if got := text(t, svc, key("s2", "a"), artifact.Latest); got != "s2" {
		t.Errorf("s2's a = %q", got)
	}
	// Each session counts its own versions.
	if vs := versions(t, svc, key("s2", "a")); !slices.Equal(vs, []int{0}) {
		t.Errorf("s2's versions = %v", vs)
	}
	// The same names under another user or app are apart.
	other := artifact.Key{AppName: "app", UserID: "user-2", SessionID: "s1", Name: "a"}
	if v := save(t, svc, other, genai.NewPartFromText("u2")); v != 0 {
		t.Errorf("other user's first version = %d", v)
	}
	if got := text(t, svc, key("s1", "a"), artifact.Latest); got != "s1" {
		t.Errorf("s1's a after another user's save = %q", got)
	}
}

func testUserScope(t *testing.T, svc artifact.Service) {
	// A user: name is the user's, whatever session saves or reads it.
	if v := save(t, svc, key("s1", "user:profile"), genai.NewPartFromText("p0")); v != 0 {
		t.Errorf("first version = %d", v)
	}
	if v := save(t, svc, key("s2", "user:profile"), genai.NewPartFromText("p1")); v != 1 {
		t.Errorf("save from another session = version %d, want 1", v)
	}
	for _, s := range []string{"s1", "s2", "s3", ""} {
		if got := text(t, svc, key(s, "user:profile"), artifact.Latest); got != "p1" {
			t.Errorf("Load from session %q = %q, want p1", s, got)
		}
		if got := text(t, svc, key(s, "user:profile"), 0); got != "p0" {
			t.Errorf("Load v0 from session %q = %q, want p0", s, got)
		}
		if vs := versions(t, svc, key(s, "user:profile")); !slices.Equal(vs, []int{0, 1}) {
			t.Errorf("Versions from session %q = %v", s, vs)
		}
	}
	// Not another user's.
	wantNotFound(t, svc, artifact.Key{AppName: "app", UserID: "user-2", SessionID: "s1", Name: "user:profile"}, artifact.Latest)
	wantNotFound(t, svc, artifact.Key{AppName: "other", UserID: "user-1", SessionID: "s1", Name: "user:profile"}, artifact.Latest)
}

func testList(t *testing.T, svc artifact.Service) {
	if got := list(t, svc, "app", "user-1", "s1"); len(got) != 0 {
		t.Errorf("List of an empty service = %q", got)
	}
	save(t, svc, key("s1", "b.txt"), genai.NewPartFromText("x"))
	save(t, svc, key("s1", "b.txt"), genai.NewPartFromText("y"))
	save(t, svc, key("s1", "a.txt"), genai.NewPartFromText("x"))
	save(t, svc, key("s2", "c.txt"), genai.NewPartFromText("x"))
	save(t, svc, key("s2", "user:z"), genai.NewPartFromText("x"))
	save(t, svc, artifact.Key{AppName: "app", UserID: "user-2", SessionID: "s1", Name: "d.txt"}, genai.NewPartFromText("x"))
	save(t, svc, artifact.Key{AppName: "app", UserID: "user-2", SessionID: "s1", Name: "user:w"}, genai.NewPartFromText("x"))
	save(t, svc, artifact.Key{AppName: "other", UserID: "user-1", SessionID: "s1", Name: "e.txt"}, genai.NewPartFromText("x"))
	for _, tc := range []struct {
		app, user, session string
		want               []string
	}{
		{"app", "user-1", "s1", []string{"a.txt", "b.txt", "user:z"}},
		{"app", "user-1", "s2", []string{"c.txt", "user:z"}},
		{"app", "user-1", "s3", []string{"user:z"}},
		{"app", "user-2", "s1", []string{"d.txt", "user:w"}},
		{"other", "user-1", "s1", []string{"e.txt"}},
		{"none", "user-1", "s1", nil},
	} {
		if got := list(t, svc, tc.app, tc.user, tc.session); !slices.Equal(got, tc.want) {
			t.Errorf("List(%s, %s, %s) = %q, want %q", tc.app, tc.user, tc.session, got, tc.want)
		}
	}
}

func testDelete(t *testing.T, svc artifact.Service) {
	k := key("s1", "a")
	save(t, svc, k, genai.NewPartFromText("v0"))
	save(t, svc, k, genai.NewPartFromText("v1"))
	save(t, svc, key("s1", "b"), genai.NewPartFromText("b"))
	save(t, svc, key("s2", "a"), genai.NewPartFromText("s2"))
	if err := svc.Delete(t.Context(), k); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantNotFound(t, svc, k, artifact.Latest)
	wantNotFound(t, svc, k, 0)
	if vs := versions(t, svc, k); len(vs) != 0 {
		t.Errorf("Versions after Delete = %v", vs)
	}
	if got := list(t, svc, "app", "user-1", "s1"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("List after Delete = %q, want [b]", got)
	}
	if got := text(t, svc, key("s2", "a"), artifact.Latest); got != "s2" {
		t.Errorf("another session's a after Delete = %q", got)
	}
	// Versions start again from 0.
	if v := save(t, svc, k, genai.NewPartFromText("again")); v != 0 {
		t.Errorf("save after Delete returned version %d, want 0", v)
	}
	// Deleting a missing artifact is not an error.
	if err := svc.Delete(t.Context(), key("s1", "never")); err != nil {
		t.Errorf("Delete of a missing artifact: %v", err)
	}
	// A user: name is deleted from any session.
	save(t, svc, key("s1", "user:u"), genai.NewPartFromText("u"))
	if err := svc.Delete(t.Context(), key("s9", "user:u")); err != nil {
		t.Fatalf("Delete user: name: %v", err)
	}
	wantNotFound(t, svc, key("s1", "user:u"), artifact.Latest)
}

func testCopies(t *testing.T, svc artifact.Service) {
	k := key("s1", "blob")
	data := []byte("original")
	p := &genai.Part{InlineData: &genai.Blob{MIMEType: "text/plain", Data: data}}
	save(t, svc, k, p)
	// Changing the saved part afterwards does not reach storage.
	data[0] = 'X'
	p.InlineData.MIMEType = "changed"
	got := load(t, svc, k, 0)
	if string(got.InlineData.Data) != "original" || got.InlineData.MIMEType != "text/plain" {
		t.Fatalf("stored part changed with the caller's: %q %q", got.InlineData.Data, got.InlineData.MIMEType)
	}
	// Nor does changing a loaded one.
	got.InlineData.Data[0] = 'Y'
	got.InlineData = nil
	again := load(t, svc, k, artifact.Latest)
	if again.InlineData == nil || string(again.InlineData.Data) != "original" {
		t.Errorf("stored part changed with a loaded copy")
	}
}

func testConcurrentSaves(t *testing.T, svc artifact.Service) {
	const goroutines, each = 8, 10
	k := key("s1", "log")
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]string{}
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				s := fmt.Sprintf("g%d-%d", g, i)
				// A user: name too, from different sessions.
				if _, err := svc.Save(t.Context(), key(fmt.Sprintf("s%d", g), "user:shared"), genai.NewPartFromText(s)); err != nil {
					errs <- err
				}
				v, err := svc.Save(t.Context(), k, genai.NewPartFromText(s))
				if err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				if prev, ok := got[v]; ok {
					errs <- fmt.Errorf("version %d returned to %s and %s", v, prev, s)
				}
				got[v] = s
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := make([]int, goroutines*each)
	for i := range want {
		want[i] = i
	}
	if vs := versions(t, svc, k); !slices.Equal(vs, want) {
		t.Errorf("Versions = %v, want 0..%d", vs, len(want)-1)
	}
	if vs := versions(t, svc, key("s1", "user:shared")); len(vs) != goroutines*each {
		t.Errorf("user: name has %d versions, want %d", len(vs), goroutines*each)
	}
	for v, s := range got {
		if txt := text(t, svc, k, v); txt != s {
			t.Errorf("version %d = %q, its saver wrote %q", v, txt, s)
		}
	}
}

// testTombstone: a version holding the rewind tombstone (or an empty part)
// loads as absent, while older versions still load.
func testTombstone(t *testing.T, svc artifact.Service) {
	k := key("s1", "report.txt")
	save(t, svc, k, &genai.Part{Text: "v0"})
	if v := save(t, svc, k, artifact.RewindTombstone()); v != 1 {
		t.Fatalf("tombstone saved as version %d, want 1", v)
	}
	for _, version := range []int{artifact.Latest, 1} {
		if _, err := svc.Load(t.Context(), k, version); !errors.Is(err, artifact.ErrNotFound) {
			t.Fatalf("Load(version %d) of a tombstone: err = %v, want ErrNotFound", version, err)
		}
	}
	p, err := svc.Load(t.Context(), k, 0)
	if err != nil || p.Text != "v0" {
		t.Fatalf("Load(0) = %+v, %v; want the version before the tombstone", p, err)
	}
	save(t, svc, k, &genai.Part{})
	if _, err := svc.Load(t.Context(), k, artifact.Latest); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("Load of an empty part: err = %v, want ErrNotFound", err)
	}
}
