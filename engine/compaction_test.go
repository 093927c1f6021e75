package engine

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// base is the first test timestamp; events are one second apart so
// compaction ranges are unambiguous.
var base = time.Unix(1_700_000_000, 0)

// ev builds an event of invocation inv at second sec with the given parts.
func ev(inv, author string, sec int, parts ...*genai.Part) *session.Event {
	e := &session.Event{ID: inv + "/" + author + "/" + string(rune('a'+sec)), InvocationID: inv, Author: author, Timestamp: base.Add(time.Duration(sec) * time.Second)}
	if len(parts) > 0 {
		role := "model"
		if author == "user" {
			role = "user"
		}
		e.Content = &genai.Content{Role: role, Parts: parts}
	}
	return e
}

func text(s string) *genai.Part { return &genai.Part{Text: s} }

func call(id, name string, args map[string]any) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}
}

func resp(id, name string, r map[string]any) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: r}}
}

func ts(sec int) float64 { return session.TimeToFloat(base.Add(time.Duration(sec) * time.Second)) }

func compactionEvent(start, end, at int, summary string) *session.Event {
	e := ev("c", "user", at)
	e.Actions.Compaction = &session.EventCompaction{StartTimestamp: ts(start), EndTimestamp: ts(end), CompactedContent: &genai.Content{Role: "model", Parts: []*genai.Part{text(summary)}}}
	return e
}

func ids(events []*session.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return strings.Join(out, " ")
}

func TestCompactionConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  CompactionConfig
		want string // "" = valid
	}{
		{"sliding window", CompactionConfig{CompactionInterval: new(2), OverlapSize: new(0)}, ""},
		{"token threshold", CompactionConfig{TokenThreshold: new(1), EventRetentionSize: new(0)}, ""},
		{"both", CompactionConfig{CompactionInterval: new(1), OverlapSize: new(1), TokenThreshold: new(5), EventRetentionSize: new(2)}, ""},
		{"none", CompactionConfig{}, "compaction: at least one trigger must be configured: TokenThreshold with EventRetentionSize, or CompactionInterval with OverlapSize"},
		{"interval alone", CompactionConfig{CompactionInterval: new(2)}, "compaction: CompactionInterval and OverlapSize must be set together"},
		{"overlap alone", CompactionConfig{OverlapSize: new(2)}, "compaction: CompactionInterval and OverlapSize must be set together"},
		{"threshold alone", CompactionConfig{TokenThreshold: new(2)}, "compaction: TokenThreshold and EventRetentionSize must be set together"},
		{"zero interval", CompactionConfig{CompactionInterval: new(0), OverlapSize: new(0)}, "compaction: CompactionInterval must be at least 1, got 0"},
		{"negative overlap", CompactionConfig{CompactionInterval: new(1), OverlapSize: new(-1)}, "compaction: OverlapSize must be at least 0, got -1"},
		{"zero threshold", CompactionConfig{TokenThreshold: new(0), EventRetentionSize: new(1)}, "compaction: TokenThreshold must be at least 1, got 0"},
		{"negative retention", CompactionConfig{TokenThreshold: new(3), EventRetentionSize: new(-2)}, "compaction: EventRetentionSize must be at least 0, got -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLongestSelfContainedPrefix(t *testing.T) {
	u1 := ev("i1", "user", 1, text("hi"))
	c1 := ev("i1", "a", 2, call("x", "f", nil))
	r1 := ev("i1", "a", 3, resp("x", "f", nil))
	a1 := ev("i1", "a", 4, text("done"))
	u2 := ev("i2", "user", 5, text("next"))
	c2 := ev("i2", "a", 6, call("y", "g", nil)) // never answered
	a2 := ev("i2", "a", 7, text("gave up"))
	u3 := ev("i3", "user", 8, text("again"))
	lr := ev("i2", "a", 6, call("z", "h", nil))
	lr.LongRunningToolIDs = []string{"z"}
	conf := ev("i1", "a", 3, text("confirm?"))
	conf.Actions.RequestedToolConfirmations = map[string]session.ToolConfirmation{"k": {}}
	for _, tc := range []struct {
		name      string
		events    []*session.Event
		all       []*session.Event
		wantCount int
	}{
		{"balanced", []*session.Event{u1, c1, r1, a1}, nil, 4},
		{"open call at end", []*session.Event{u1, c1}, nil, 1},
		{"pending confirmation", []*session.Event{u1, conf, a1}, nil, 1},
		// The cut is between invocations: no dead-call analysis.
		{"cut between invocations", []*session.Event{u1, c1, r1, a1, c2, a2}, []*session.Event{u1, c1, r1, a1, c2, a2, u3}, 4},
		// Within i2, a call of an older invocation nobody answered is dead.
		{"dead call skipped", []*session.Event{u2, c2, a2}, []*session.Event{u2, c2, a2, u3}, 3},
		// The same call in the newest invocation may still be answered.
		{"newest invocation not dead", []*session.Event{u2, c2, a2}, []*session.Event{u2, c2, a2}, 1},
		// A long-running call stays open.
		{"long-running protected", []*session.Event{u2, lr, a2}, []*session.Event{u2, lr, a2, u3}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := longestSelfContainedPrefix(tc.events, tc.all)
			if want := ids(tc.events[:tc.wantCount]); ids(got) != want {
				t.Errorf("prefix = [%s], want [%s]", ids(got), want)
			}
		})
	}
}

func TestSafeTokenCompactionSplit(t *testing.T) {
	u := ev("i", "user", 1, text("q"))
	c := ev("i", "a", 2, call("x", "f", nil))
	r := ev("i", "a", 3, resp("x", "f", nil))
	a := ev("i", "a", 4, text("ok"))
	for _, tc := range []struct {
		name      string
		events    []*session.Event
		retention int
		want      int
	}{
		{"plain", []*session.Event{u, c, r, a}, 1, 3},
		{"keeps the call with its kept response", []*session.Event{u, c, r, a}, 2, 1},
		{"retention covers all", []*session.Event{u, c, r, a}, 4, 0},
		{"call first", []*session.Event{c, r, a}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := safeTokenCompactionSplit(tc.events, tc.retention); got != tc.want {
				t.Errorf("split = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSlidingWindowRange(t *testing.T) {
	long := strings.Repeat("x", 200)
	var events []*session.Event
	for i, inv := range []string{"i0", "i1", "i2", "i3"} {
		events = append(events, ev(inv, "user", 2*i, text(long)), ev(inv, "a", 2*i+1, text(long)))
	}
	first := compactionEvent(0, 3, 4, "s") // after i0 and i1
	withFirst := append(append(append([]*session.Event{}, events[:4]...), first), events[4:]...)
	for _, tc := range []struct {
		name              string
		events            []*session.Event
		interval, overlap int
		want              string
	}{
		{"too few", events[:2], 2, 1, ""},
		{"first window", events[:4], 2, 1, ids(events[:4])},
		{"overlap one", withFirst, 2, 1, ids(events[2:8])},
		{"overlap zero", withFirst, 2, 0, ids(events[4:8])},
		{"not enough new", withFirst[:7], 2, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(slidingWindowRange(tc.events, tc.interval, tc.overlap)); got != tc.want {
				t.Errorf("range = [%s], want [%s]", got, tc.want)
			}
		})
	}
}

func TestTokenThresholdRangeSeedsPreviousSummary(t *testing.T) {
	events := []*session.Event{
		ev("i0", "user", 0, text("a")), ev("i0", "m", 1, text("b")),
		compactionEvent(0, 1, 2, "old summary"),
		ev("i1", "user", 3, text("c")), ev("i1", "m", 4, text("d")), ev("i1", "m", 5, text("e")),
	}
	got := tokenThresholdRange(events, 1)
	if len(got) != 3 {
		t.Fatalf("got %d events, want seed + 2", len(got))
	}
	seed := got[0]
	if seed.Author != "model" || seed.Content.Parts[0].Text != "old summary" || !seed.Timestamp.Equal(base) {
		t.Errorf("seed = %s %v at %v, want model 'old summary' at %v", seed.Author, seed.Content.Parts[0].Text, seed.Timestamp, base)
	}
	if want := ids(events[3:5]); ids(got[1:]) != want {
		t.Errorf("range = [%s], want [%s]", ids(got[1:]), want)
	}
	if got := tokenThresholdRange(events, 3); got != nil {
		t.Errorf("retention covering the candidates: got [%s], want none", ids(got))
	}
}

func TestLatestPromptTokenCount(t *testing.T) {
	withUsage := func(e *session.Event, n int32) *session.Event {
		e.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}
		return e
	}
	u := ev("i", "user", 0, text(strings.Repeat("y", 400)))
	scoped := func(e *session.Event, scope string) *session.Event {
		e.IsolationScope = scope
		return e
	}
	for _, tc := range []struct {
		name   string
		events []*session.Event
		agent  string
		scope  string
		want   int
		ok     bool
	}{
		{"reported", []*session.Event{u, withUsage(ev("i", "a", 1, text("z")), 77)}, "", "", 77, true},
		// b's count (on a content-less event, so the estimate is u alone) is
		// not a's.
		{"other agent's count is not ours", []*session.Event{u, withUsage(ev("i", "b", 1), 77)}, "a", "", 100, true},
		{"estimate", []*session.Event{u}, "", "", 100, true},
		{"count before a compaction is stale", []*session.Event{withUsage(ev("i", "a", 1, text("z")), 77), compactionEvent(1, 1, 2, "abcd")}, "", "", 1, true},
		{"nothing", nil, "", "", 0, false},
		// A task's count is not the session's, nor the session's the task's;
		// the estimate, too, reads only the scope's contents.
		{"task count is not the session's", []*session.Event{u, scoped(withUsage(ev("i", "a", 1, text("z")), 77), "call_1")}, "", "", 100, true},
		{"task reads its own count", []*session.Event{withUsage(ev("i", "a", 1, text("z")), 55), scoped(withUsage(ev("i", "a", 2, text("z")), 77), "call_1")}, "", "call_1", 77, true},
		{"task estimate skips unscoped events", []*session.Event{u, scoped(ev("i", "user", 1, text(strings.Repeat("x", 40))), "call_1")}, "", "call_1", 10, true},
		{"a compaction of another scope does not cut", []*session.Event{withUsage(ev("i", "a", 1, text("z")), 77), scoped(compactionEvent(1, 1, 2, "abcd"), "call_1")}, "", "", 77, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := latestPromptTokenCount(tc.events, "", tc.agent, tc.scope)
			if got != tc.want || ok != tc.ok {
				t.Errorf("count = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCountContentChars(t *testing.T) {
	c := &genai.Content{Parts: []*genai.Part{
		text("héllo"),                           // 5 characters
		call("", "f", map[string]any{"k": "é"}), // 1 + len('{"k": "\\u00e9"}') = 1 + 15
		resp("", "g", map[string]any{}),         // 1; empty response not counted
	}}
	if got, want := countContentChars(c), 5+16+1; got != want {
		t.Errorf("countContentChars = %d, want %d", got, want)
	}
}

func TestFormatEventsForPrompt(t *testing.T) {
	thought := &genai.Part{Text: "pondering", Thought: true}
	summary := compactionEvent(0, 1, 2, "x")
	summary.Content = &genai.Content{Parts: []*genai.Part{{Text: "old thought", Thought: true}, text("old")}}
	events := []*session.Event{
		ev("i", "user", 0, text("hi")),
		ev("i", "a", 1, thought, call("1", "lookup", map[string]any{"q": "x", "n": 2.0})),
		ev("i", "a", 2, resp("1", "lookup", map[string]any{"hits": []any{"a", nil, true}})),
		ev("i", "a", 3, call("2", "adk_request_credential", nil)),
		ev("i", "a", 4),
		summary,
		ev("i", "a", 5, call("3", "big", map[string]any{"s": strings.Repeat("é", 2100)})),
	}
	want := "user: hi\n" +
		"a (thought): pondering\n" +
		"a called tool: lookup({'n': 2, 'q': 'x'})\n" +
		"Tool response from lookup: {'hits': ['a', None, True]}\n" +
		"user: old\n" +
		"a called tool: big({'s': '" + strings.Repeat("é", 1993) + "... [truncated 109 chars])"
	if got := formatEventsForPrompt(events); got != want {
		t.Errorf("formatEventsForPrompt =\n%q\nwant\n%q", got, want)
	}
}

func TestFormatSummaryPrompt(t *testing.T) {
	for _, tc := range []struct {
		template, want, err string
	}{
		{"S {conversation_history} E", "S H E", ""},
		{"{{literal}} {conversation_history}}}", "{literal} H}", ""},
		{"{other}", "", "summary prompt template: unknown field {other}; only {conversation_history} is available"},
		{"a } b", "", "summary prompt template: single '}' at byte 2"},
		{"a { b", "", "summary prompt template: single '{' at byte 2"},
	} {
		got, err := formatSummaryPrompt(tc.template, "H")
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("formatSummaryPrompt(%q) = %q, %q; want %q, %q", tc.template, got, gotErr, tc.want, tc.err)
		}
	}
}

// fakeModel answers with texts in order and records requests.
type fakeModel struct {
	mu       sync.Mutex
	answers  []*model.Response
	requests []*model.Request
	fail     error
}

func (m *fakeModel) Name() string { return "fake" }

func (m *fakeModel) GenerateContent(_ context.Context, req *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		if m.fail != nil || len(m.answers) == 0 {
			m.mu.Unlock()
			yield(nil, errors.Join(m.fail, errors.New("fake model: no answer left")))
			return
		}
		r := m.answers[0]
		m.answers = m.answers[1:]
		m.mu.Unlock()
		yield(r, nil)
	}
}

func answer(s string) *model.Response {
	return &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{text(s)}}}
}

func TestLLMSummarizer(t *testing.T) {
	m := &fakeModel{answers: []*model.Response{{Content: &genai.Content{Role: "assistant", Parts: []*genai.Part{text("sum")}}, UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 9}}}}
	events := []*session.Event{ev("i", "user", 0, text("q")), ev("i", "a", 3, text("r"))}
	got, err := NewLLMSummarizer(m, "H:{conversation_history}").Summarize(context.Background(), events)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.requests) != 1 || m.requests[0].Model != "fake" || len(m.requests[0].Contents) != 1 || m.requests[0].Contents[0].Parts[0].Text != "H:user: q\na: r" {
		t.Fatalf("request = %+v", m.requests)
	}
	c := got.Actions.Compaction
	if got.Author != "user" || got.InvocationID == "" || c == nil || c.StartTimestamp != ts(0) || c.EndTimestamp != ts(3) ||
		c.CompactedContent.Role != "model" || c.CompactedContent.Parts[0].Text != "sum" || got.UsageMetadata.PromptTokenCount != 9 {
		t.Errorf("summary event = %+v, compaction %+v", got, c)
	}
	if none, err := NewLLMSummarizer(m, "").Summarize(context.Background(), nil); none != nil || err != nil {
		t.Errorf("no events: %v, %v; want nil, nil", none, err)
	}
}

// monotonic gives appended events strictly increasing timestamps, so
// compaction ranges never cover an event created in the same microsecond.
type monotonic struct {
	session.Service
	mu   sync.Mutex
	last time.Time
}

func (m *monotonic) AppendEvent(ctx context.Context, s *session.Session, e *session.Event) error {
	m.mu.Lock()
	if !e.Timestamp.After(m.last) {
		e.Timestamp = m.last.Add(time.Millisecond)
	}
	m.last = e.Timestamp
	m.mu.Unlock()
	return m.Service.AppendEvent(ctx, s, e)
}

func TestRunnerSlidingWindowCompaction(t *testing.T) {
	m := &fakeModel{answers: []*model.Response{answer("a0"), answer("a1"), answer("summary of 0-1"), answer("a2")}}
	agent, err := NewLlmAgent(LlmAgentConfig{Name: "root", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	svc := &monotonic{Service: session.NewInMemoryService()}
	r, err := NewRunner(RunnerConfig{AppName: "app", Agent: agent, Sessions: svc, AutoCreateSession: true,
		Compaction: &CompactionConfig{CompactionInterval: new(2), OverlapSize: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"question zero, a long one", "question one, a long one", "question two"} {
		for _, err := range r.Run(context.Background(), "u", "s", &genai.Content{Role: "user", Parts: []*genai.Part{text(q)}}, RunConfig{}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(m.requests) != 4 {
		t.Fatalf("%d model requests, want 4", len(m.requests))
	}
	if got, want := m.requests[2].Contents[0].Parts[0].Text, "user: question zero, a long one\nroot: a0\nuser: question one, a long one\nroot: a1"; !strings.HasSuffix(got, "\n\n"+want) {
		t.Errorf("summary prompt ends %q, want it to end with the history %q", got[max(0, len(got)-120):], want)
	}
	var got []string
	for _, c := range m.requests[3].Contents {
		got = append(got, c.Role+":"+c.Parts[0].Text)
	}
	if want := "model:summary of 0-1 user:question two"; strings.Join(got, " ") != want {
		t.Errorf("request after compaction = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestRunnerCompactionFailureDoesNotFailTheTurn(t *testing.T) {
	m := &fakeModel{answers: []*model.Response{answer("a0")}}
	agent, err := NewLlmAgent(LlmAgentConfig{Name: "root", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	r, err := NewRunner(RunnerConfig{AppName: "app", Agent: agent, Sessions: session.NewInMemoryService(), AutoCreateSession: true,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		Compaction: &CompactionConfig{CompactionInterval: new(1), OverlapSize: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range r.Run(context.Background(), "u", "s", &genai.Content{Role: "user", Parts: []*genai.Part{text("hello there")}}, RunConfig{}) {
		if err != nil {
			t.Fatalf("turn failed: %v", err)
		}
		n++
	}
	if n != 1 || len(m.requests) != 2 {
		t.Errorf("%d events and %d model requests, want 1 and 2 (answer, failed summary)", n, len(m.requests))
	}
	if !strings.Contains(logs.String(), "event compaction failed") {
		t.Errorf("no warning logged: %s", logs.String())
	}
}

func TestNewRunnerCompactionErrors(t *testing.T) {
	agent, err := NewLlmAgent(LlmAgentConfig{Name: "root"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  CompactionConfig
		want string
	}{
		{CompactionConfig{CompactionInterval: new(1)}, "engine.NewRunner: compaction: CompactionInterval and OverlapSize must be set together"},
	} {
		_, err := NewRunner(RunnerConfig{AppName: "app", Agent: agent, Sessions: session.NewInMemoryService(), Compaction: &tc.cfg})
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewRunner error = %v, want %q", err, tc.want)
		}
	}
}

// Without a configured Summarizer, the first agent that needs one lends its
// model, as in google-adk: under a SequentialAgent root, compaction after
// the first invocation has no model to use, which ends that turn, after
// its events, with google-adk's ValueError (NoSummarizerModelError); the
// sub-agent's compaction before its next request summarizes with the
// sub-agent's model, which is the summarizer from then on.
func TestCompactionSummarizerIsTheFirstNeedingAgentsModel(t *testing.T) {
	used := func(s string, tokens int32) *model.Response {
		r := answer(s)
		r.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: tokens}
		return r
	}
	m := &fakeModel{answers: []*model.Response{used("a0", 500), answer("summary"), used("a1", 10), used("a2", 10)}}
	writer, err := NewLlmAgent(LlmAgentConfig{Name: "writer", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	root, err := NewSequentialAgent(AgentInfo{Name: "seq", SubAgents: []Agent{writer}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerConfig{AppName: "app", Agent: root, Sessions: &monotonic{Service: session.NewInMemoryService()}, AutoCreateSession: true,
		Compaction: &CompactionConfig{TokenThreshold: new(100), EventRetentionSize: new(0)}})
	if err != nil {
		t.Fatalf("NewRunner: %v", err)
	}
	for i, q := range []string{"question zero", "question one", "question two"} {
		var events int
		var turnErr error
		for _, err := range r.Run(context.Background(), "u", "s", &genai.Content{Role: "user", Parts: []*genai.Part{text(q)}}, RunConfig{}) {
			if err != nil {
				turnErr = err
				continue
			}
			events++
		}
		var noModel *NoSummarizerModelError
		switch {
		case events != 1:
			t.Errorf("turn %q: %d events, want the writer's answer", q, events)
		case i == 0 && (!errors.As(turnErr, &noModel) || noModel.Agent != "seq" || noModel.ErrorCode() != "ValueError" ||
			turnErr.Error() != "No LlmAgent model available for event compaction summarizer."):
			t.Errorf("turn %q ended with %v, want google-adk's ValueError for the root without a model", q, turnErr)
		case i > 0 && turnErr != nil:
			t.Errorf("turn %q: %v", q, turnErr)
		}
	}
	if len(m.requests) != 4 {
		t.Fatalf("%d model requests, want 4 (a0, the summary, a1, a2)", len(m.requests))
	}
	if p := m.requests[1].Contents[0].Parts[0].Text; !strings.Contains(p, "question zero") || !strings.Contains(p, "writer: a0") {
		t.Errorf("request 1 is not the summary of turn one: %.200q", p)
	}
	if got := m.requests[2].Contents[0].Parts[0].Text; got != "summary" {
		t.Errorf("writer's request after compaction starts with %q, want the summary", got)
	}
}

func TestSerializedSizeKeepsEmptyParts(t *testing.T) {
	// pydantic writes {"parts":[],"role":"model"} (27 characters) for a
	// weightless summary; genai's JSON would drop the empty list.
	weightless := &session.Event{}
	weightless.Actions.Compaction = &session.EventCompaction{CompactedContent: &genai.Content{Role: "model", Parts: []*genai.Part{}}}
	if got := serializedSize([]*session.Event{weightless}); got != 27 {
		t.Errorf("weightless summary size = %d, want 27", got)
	}
	thanks := ev("i", "user", 0, text("Thanks."))
	if got := serializedSize([]*session.Event{thanks}); got != 44 {
		t.Errorf(`size of {"parts":[{"text":"Thanks."}],"role":"user"} = %d, want 44`, got)
	}
}
