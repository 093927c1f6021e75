package contents

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// ---- helpers building events and contents ----

type evOpt func(*session.Event)

func evt(author, inv string, c *genai.Content, opts ...evOpt) *session.Event {
	e := &session.Event{Author: author, InvocationID: inv}
	e.Content = c
	for _, o := range opts {
		o(e)
	}
	return e
}

func at(sec float64) evOpt    { return func(e *session.Event) { e.Timestamp = session.FloatToTime(sec) } }
func onBranch(b string) evOpt { return func(e *session.Event) { e.Branch = b } }
func rewindTo(inv string) evOpt {
	return func(e *session.Event) { e.Actions.RewindBeforeInvocationID = inv }
}
func longRunning(ids ...string) evOpt {
	return func(e *session.Event) { e.LongRunningToolIDs = ids }
}
func transferTo(a string) evOpt { return func(e *session.Event) { e.Actions.TransferToAgent = a } }
func inTr(s string) evOpt {
	return func(e *session.Event) { e.InputTranscription = &genai.Transcription{Text: s} }
}
func outTr(s string) evOpt {
	return func(e *session.Event) { e.OutputTranscription = &genai.Transcription{Text: s} }
}
func compacted(start, end float64, c *genai.Content) evOpt {
	return func(e *session.Event) {
		e.Actions.Compaction = &session.EventCompaction{StartTimestamp: start, EndTimestamp: end, CompactedContent: c}
	}
}

func ct(role string, ps ...*genai.Part) *genai.Content { return &genai.Content{Role: role, Parts: ps} }
func u(s string) *genai.Content                        { return ct("user", txt(s)) }
func m(s string) *genai.Content                        { return ct("model", txt(s)) }
func txt(s string) *genai.Part                         { return &genai.Part{Text: s} }
func thought(s string) *genai.Part                     { return &genai.Part{Text: s, Thought: true} }
func call(id, name string, args map[string]any) *genai.Part {
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}
}
func resp(id, name string, r map[string]any) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: r}}
}

// q is a fenced quote of relayed text.
func q(s string) string { return QuotedContentBegin + "\n" + s + "\n" + QuotedContentEnd }

// relayed is a "For context:" user content with the given relayed parts.
func relayed(ps ...*genai.Part) *genai.Content {
	return ct("user", append([]*genai.Part{txt(OtherAgentContextPreamble)}, ps...)...)
}

type testCase struct {
	name   string
	opt    Options
	events []*session.Event
	want   []*genai.Content
}

// cases is the table shared by TestBuild and the parity dump.
func cases() []testCase {
	me := Options{AgentName: "agent"}
	return []testCase{
		{
			name: "plain conversation",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("hi")),
				evt("agent", "i1", m("hello")),
				evt("user", "i2", u("bye")),
			},
			want: []*genai.Content{u("hi"), m("hello"), u("bye")},
		},
		{
			name: "empty and invisible events are skipped, visible events keep all parts",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", nil),                                 // state-only event
				evt("agent", "i1", ct("", txt("no role"))),              // no role
				evt("agent", "i1", ct("model")),                         // no parts
				evt("agent", "i1", ct("model", txt(""))),                // empty text
				evt("agent", "i1", ct("model", thought("hmm"))),         // thought only
				evt("agent", "i1", ct("model", thought("t"), txt("a"))), // thought kept alongside text
				evt("agent", "i1", ct("model", &genai.Part{ThoughtSignature: []byte("sig")})),
				evt("agent", "i1", ct("model", &genai.Part{ToolCall: &genai.ToolCall{ID: "s1", ToolType: "GOOGLE_SEARCH_WEB"}})),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", thought("t"), txt("a")),
				ct("model", &genai.Part{ThoughtSignature: []byte("sig")}),
				ct("model", &genai.Part{ToolCall: &genai.ToolCall{ID: "s1", ToolType: "GOOGLE_SEARCH_WEB"}}),
			},
		},
		{
			name: "rewind drops the rewound invocations and the rewind event",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a")),
				evt("agent", "i1", m("A")),
				evt("user", "i2", u("b")),
				evt("agent", "i2", m("B")),
				evt("user", "i3", u("c")),
				evt("user", "i4", nil, rewindTo("i2")),
				evt("user", "i5", u("d")),
				evt("agent", "i5", m("D"), rewindTo("missing")), // unknown target: only itself goes
				evt("agent", "i6", m("E"), rewindTo("i6")),      // its own invocation: only itself goes
			},
			want: []*genai.Content{u("a"), m("A"), u("d")},
		},
		{
			name: "branch filtering keeps own branch, ancestors and unbranched events",
			opt:  Options{AgentName: "agent", Branch: "root.agent"},
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", m("root"), onBranch("root")),
				evt("agent", "i1", m("own"), onBranch("root.agent")),
				evt("agent", "i1", m("child"), onBranch("root.agent.child")),
				evt("agent", "i1", m("sibling"), onBranch("root.other")),
				evt("agent", "i1", m("prefix"), onBranch("root.agentx")),
				evt("agent", "i1", m("other root"), onBranch("rootx")),
			},
			want: []*genai.Content{u("q"), m("root"), m("own")},
		},
		{
			name: "framework, credential and confirmation events are excluded; request input is kept",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("c1", "adk_request_credential", map[string]any{"x": 1.0}))),
				evt("user", "i2", ct("user", resp("c1", "adk_request_credential", map[string]any{"token": "t"}))),
				evt("agent", "i1", ct("model", txt("confirm?"), call("c2", "adk_request_confirmation", nil))),
				evt("agent", "i1", ct("user", resp("c3", "adk_framework", nil))),
				evt("agent", "i1", ct("model", call("c4", "adk_request_input", map[string]any{"message": "name?"})), longRunning("c4")),
				evt("user", "i2", ct("user", resp("c4", "adk_request_input", map[string]any{"result": "Bob"}))),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", call("c4", "adk_request_input", map[string]any{"message": "name?"})),
				ct("user", resp("c4", "adk_request_input", map[string]any{"result": "Bob"})),
			},
		},
		{
			name: "other agent's text, call and response are relayed as fenced user context",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("hi")),
				evt("helper", "i1", ct("model",
					txt("I will look"),
					call("x1", "lookup", map[string]any{
						"b": 2.0,
						"a": map[string]any{"z": 1.5, "y": "it's"},
						"c": []any{true, nil, `q"t`, 1e21, 0.1, "tab\there", -3.0},
					}))),
				evt("helper", "i1", ct("user", resp("x1", "lookup", map[string]any{"result": "ok", "n": 3.0}))),
				evt("agent", "i1", m("done")),
			},
			want: []*genai.Content{
				u("hi"),
				relayed(
					txt("[helper] said:\n"+q("I will look")),
					txt("[helper] called tool `lookup` with parameters:\n"+
						q(`{'a': {'y': "it's", 'z': 1.5}, 'b': 2, 'c': [True, None, 'q"t', 1e+21, 0.1, 'tab\there', -3]}`)),
				),
				relayed(txt("[helper] `lookup` tool returned result:\n" + q("{'n': 3, 'result': 'ok'}"))),
				m("done"),
			},
		},
		{
			name: "other agent's message with nothing relayable is skipped",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model", thought("t"), txt(" \n\t"))),
				evt("helper", "i1", ct("model", &genai.Part{ToolCall: &genai.ToolCall{ID: "s"}})),
				evt("helper", "i1", ct("model", &genai.Part{ThoughtSignature: []byte("x")})),
				evt("helper", "i1", ct("model", thought("only a thought"))),
			},
			want: []*genai.Content{u("q")},
		},
		{
			name: "other agent's thoughts are relayed when asked, own thoughts still hidden",
			opt:  Options{AgentName: "agent", IncludeThoughtsFromOtherAgents: true},
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model", thought("secret plan"))),
				evt("helper", "i1", ct("model", thought("   "), txt("answer"))),
				evt("agent", "i1", ct("model", thought("my own thought"))),
			},
			want: []*genai.Content{
				u("q"),
				relayed(txt("[helper] thought:\n" + q("secret plan"))),
				relayed(txt("[helper] said:\n" + q("answer"))),
			},
		},
		{
			name: "other agent's data and code parts are relayed as they are",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model",
					&genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}},
					&genai.Part{FileData: &genai.FileData{FileURI: "gs://b/f", MIMEType: "text/plain"}},
					&genai.Part{ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython}},
					&genai.Part{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1"}},
				)),
			},
			want: []*genai.Content{
				u("q"),
				relayed(
					&genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}},
					&genai.Part{FileData: &genai.FileData{FileURI: "gs://b/f", MIMEType: "text/plain"}},
					&genai.Part{ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython}},
					&genai.Part{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1"}},
				),
			},
		},
		{
			name: "quote markers in relayed content are elided; absent args and response read None",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model",
					txt("a <<<END_QUOTED_AGENT_CONTENT>>> b <<<BEGIN_QUOTED_AGENT_CONTENT>>>"),
					call("", "to<<<BEGIN_QUOTED_AGENT_CONTENT>>>ol", nil),
					resp("", "r", nil),
				)),
			},
			want: []*genai.Content{
				u("q"),
				relayed(
					txt("[helper] said:\n"+q("a <<<ELIDED_MARKER>>> b <<<ELIDED_MARKER>>>")),
					txt("[helper] called tool `to<<<ELIDED_MARKER>>>ol` with parameters:\n"+q("None")),
					txt("[helper] `r` tool returned result:\n"+q("None")),
				),
			},
		},
		{
			name: "a response to another agent's call is relayed under the responder's name",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model", call("h1", "search", map[string]any{"q": "x"}))),
				evt("agent", "i1", ct("user", resp("h1", "search", map[string]any{"hits": 0.0}))),
			},
			want: []*genai.Content{
				u("q"),
				relayed(txt("[helper] called tool `search` with parameters:\n" + q("{'q': 'x'}"))),
				relayed(txt("[agent] `search` tool returned result:\n" + q("{'hits': 0}"))),
			},
		},
		{
			name: "without an agent name nothing is relayed",
			opt:  Options{},
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", m("hello")),
			},
			want: []*genai.Content{u("q"), m("hello")},
		},
		{
			name: "consecutive transcriptions are aggregated",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", nil, inTr("hel")),
				evt("user", "i1", nil, inTr("lo")),
				evt("agent", "i1", nil, outTr("hi ")),
				evt("agent", "i1", nil, outTr("there")),
				evt("user", "i2", u("typed")),
				evt("agent", "i2", nil, outTr("bye")),
			},
			want: []*genai.Content{u("hello"), m("hi there"), u("typed"), m("bye")},
		},
		{
			name: "compaction replaces its range with the summary, attributed to the agent",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a"), at(1)),
				evt("agent", "i1", m("A"), at(2)),
				evt("user", "i2", u("b"), at(3)),
				evt("user", "", nil, at(4), compacted(1, 2, m("summary of a and A"))),
				evt("agent", "i2", m("B"), at(5)),
				evt("user", "", nil, at(6), compacted(5, 9, nil)), // no summary: ignored
			},
			want: []*genai.Content{m("summary of a and A"), u("b"), m("B")},
		},
		{
			name: "a containing compaction supersedes the one it contains",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a"), at(1)),
				evt("agent", "i1", m("A"), at(2)),
				evt("user", "", nil, at(2.5), compacted(1, 2, m("s1"))),
				evt("user", "i2", u("b"), at(3)),
				evt("user", "", nil, at(3.5), compacted(1, 3, m("s2"))),
				evt("agent", "i2", m("B"), at(5)),
			},
			want: []*genai.Content{m("s2"), m("B")},
		},
		{
			name: "partially overlapping compactions both survive, ordered by end",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a"), at(1)),
				evt("agent", "i1", m("A"), at(2)),
				evt("user", "i2", u("b"), at(3)),
				evt("user", "", nil, at(3.5), compacted(2, 4, ct("user", txt("s2")))),
				evt("agent", "i2", m("B"), at(4)),
				evt("user", "", nil, at(4.5), compacted(1, 3, m("s1"))),
				evt("user", "i3", u("c"), at(6)),
			},
			want: []*genai.Content{m("s1"), ct("user", txt("s2")), u("c")},
		},
		{
			name: "a call compacted away is restored before its surviving response",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("go"), at(1)),
				evt("agent", "i1", ct("model", call("c1", "long", nil)), at(2), longRunning("c1")),
				evt("agent", "i1", ct("user", resp("c1", "long", map[string]any{"status": "pending"})), at(3)),
				evt("user", "", nil, at(4), compacted(1, 3, m("sum"))),
				evt("user", "i2", ct("user", resp("c1", "long", map[string]any{"status": "done"})), at(5)),
			},
			want: []*genai.Content{
				m("sum"),
				ct("model", call("c1", "long", nil)),
				ct("user", resp("c1", "long", map[string]any{"status": "done"})),
			},
		},
		{
			name: "the latest response is moved next to its call, merging intermediate responses",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("start")),
				evt("agent", "i1", ct("model", call("c1", "long_op", map[string]any{"x": 1.0})), longRunning("c1")),
				evt("agent", "i1", ct("user", resp("c1", "long_op", map[string]any{"status": "pending"}))),
				evt("agent", "i1", m("waiting")),
				evt("user", "i2", u("how is it going")),
				evt("agent", "i2", m("still waiting")),
				evt("user", "i3", ct("user", resp("c1", "long_op", map[string]any{"status": "done"}), txt("note"))),
			},
			want: []*genai.Content{
				u("start"),
				ct("model", call("c1", "long_op", map[string]any{"x": 1.0})),
				ct("user", resp("c1", "long_op", map[string]any{"status": "done"}), txt("note")),
			},
		},
		{
			name: "a latest response answering two call events is split between them",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("start")),
				evt("agent", "i1", ct("model", call("a", "f", nil)), longRunning("a")),
				evt("agent", "i1", ct("model", call("b", "g", nil)), longRunning("b")),
				evt("user", "i2", u("meanwhile")),
				evt("user", "i3", ct("user", resp("b", "g", map[string]any{"r": 2.0}), resp("a", "f", map[string]any{"r": 1.0}))),
			},
			want: []*genai.Content{
				u("start"),
				ct("model", call("a", "f", nil)),
				ct("user", resp("a", "f", map[string]any{"r": 1.0})),
				ct("model", call("b", "g", nil)),
				ct("user", resp("b", "g", map[string]any{"r": 2.0})),
			},
		},
		{
			name: "async responses in history are moved after their call and merged",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q1")),
				evt("agent", "i1", ct("model", call("a1", "f", nil), call("a2", "g", nil)), longRunning("a2")),
				evt("agent", "i1", ct("user", resp("a1", "f", map[string]any{"r": 1.0}))),
				evt("user", "i2", u("meanwhile")),
				evt("agent", "i2", ct("user", resp("a2", "g", map[string]any{"r": 2.0}))),
				evt("user", "i3", u("next")),
			},
			want: []*genai.Content{
				u("q1"),
				ct("model", call("a1", "f", nil), call("a2", "g", nil)),
				ct("user", resp("a1", "f", map[string]any{"r": 1.0}), resp("a2", "g", map[string]any{"r": 2.0})),
				u("meanwhile"),
				u("next"),
			},
		},
		{
			name: "interim replies between updates of one call are dropped; the last update wins",
			opt:  me,
			events: []*session.Event{
				evt("user", "i5", u("run it")),
				evt("agent", "i5", ct("model", call("s1", "slow", nil)), longRunning("s1")),
				evt("agent", "i5", ct("user", resp("s1", "slow", map[string]any{"p": 10.0}))),
				evt("agent", "i5", m("progress 10")),
				evt("agent", "i5", ct("user", resp("s1", "slow", map[string]any{"p": 50.0}))),
				evt("agent", "i5", m("progress 50")),
				evt("user", "i6", u("ok")),
			},
			want: []*genai.Content{
				u("run it"),
				ct("model", call("s1", "slow", nil)),
				ct("user", resp("s1", "slow", map[string]any{"p": 50.0})),
				m("progress 50"),
				u("ok"),
			},
		},
		{
			name: "orphaned responses and unanswered calls are dropped, pending long-running and id-less calls kept",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", ct("user", resp("zz", "f", nil))),
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", txt("let me"), call("o1", "f", nil))),
				evt("agent", "i1", ct("model", call("o3", "f", nil))),
				evt("agent", "i1", ct("model", call("o2", "g", nil)), longRunning("o2")),
				evt("agent", "i1", ct("model", call("", "h", nil))),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", txt("let me")),
				ct("model", call("o2", "g", nil)),
				ct("model", call("", "h", nil)),
			},
		},
		{
			name: "client-generated adk- ids are cleared",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("adk-1", "f", map[string]any{"a": 1.0}), call("call_2", "g", nil))),
				evt("agent", "i1", ct("user", resp("adk-1", "f", map[string]any{"r": "x"}), resp("call_2", "g", nil))),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", call("", "f", map[string]any{"a": 1.0}), call("call_2", "g", nil)),
				ct("user", resp("", "f", map[string]any{"r": "x"}), resp("call_2", "g", nil)),
			},
		},
		{
			name: "client-generated adk- ids are kept on request",
			opt:  Options{AgentName: "agent", PreserveFunctionCallIDs: true},
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("adk-1", "f", nil))),
				evt("agent", "i1", ct("user", resp("adk-1", "f", nil))),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", call("adk-1", "f", nil)),
				ct("user", resp("adk-1", "f", nil)),
			},
		},
		{
			name: "tool sub-branch events are excluded",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("fc1", "my_tool", nil))),
				evt("agent", "i1", ct("user", resp("fc1", "my_tool", map[string]any{"r": 1.0}))),
				evt("agent", "i1", m("progress"), onBranch("my_tool@fc1")),
				evt("agent", "i1", m("nested progress"), onBranch("my_tool@fc1.inner@r1")),
				evt("agent", "i1", m("own branch"), onBranch("agent@fc1")),
				evt("agent", "i1", m("run branch"), onBranch("node@unknown")),
				evt("user", "i2", u("next")),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", call("fc1", "my_tool", nil)),
				ct("user", resp("fc1", "my_tool", map[string]any{"r": 1.0})),
				m("own branch"),
				m("run branch"),
				u("next"),
			},
		},
		{
			name: "a rewind can itself be rewound",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("a")),
				evt("user", "i2", u("b")),
				evt("user", "i3", nil, rewindTo("i2")),
				evt("user", "i4", u("c")),
				evt("user", "i5", nil, rewindTo("i4")),
				evt("user", "i6", u("d")),
			},
			want: []*genai.Content{u("a"), u("d")},
		},
		{
			name: "intermediate responses to parallel calls merge with the latest, which replaces by id",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("go")),
				evt("agent", "i1", ct("model", call("p1", "f", nil), call("p2", "g", nil)), longRunning("p1", "p2")),
				evt("agent", "i1", ct("user",
					resp("p1", "f", map[string]any{"s": "pending"}),
					resp("p2", "g", map[string]any{"s": "pending"}))),
				evt("agent", "i1", m("working")),
				evt("user", "i2", u("?")),
				evt("user", "i3", ct("user", resp("p2", "g", map[string]any{"s": "done"}))),
			},
			want: []*genai.Content{
				u("go"),
				ct("model", call("p1", "f", nil), call("p2", "g", nil)),
				ct("user",
					resp("p1", "f", map[string]any{"s": "pending"}),
					resp("p2", "g", map[string]any{"s": "done"})),
			},
		},
		{
			name: "id-less calls and responses pair by name",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", call("", "f", nil))),
				evt("agent", "i1", ct("user", resp("", "f", map[string]any{"r": 1.0}))),
				evt("agent", "i1", ct("user", resp("", "g", map[string]any{"r": 2.0}))),
				evt("agent", "i1", m("done")),
			},
			want: []*genai.Content{
				u("q"),
				ct("model", call("", "f", nil)),
				ct("user", resp("", "f", map[string]any{"r": 1.0})),
				m("done"),
			},
		},
		{
			name: "a reused call id pairs each response with the call before it",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q1")),
				evt("agent", "i1", ct("model", call("x", "f", nil))),
				evt("agent", "i1", ct("user", resp("x", "f", map[string]any{"n": 1.0}))),
				evt("user", "i2", u("q2")),
				evt("agent", "i2", ct("model", call("x", "f", nil))),
				evt("agent", "i2", ct("user", resp("x", "f", map[string]any{"n": 2.0}))),
				evt("agent", "i2", m("ok")),
			},
			want: []*genai.Content{
				u("q1"),
				ct("model", call("x", "f", nil)),
				ct("user", resp("x", "f", map[string]any{"n": 1.0})),
				u("q2"),
				ct("model", call("x", "f", nil)),
				ct("user", resp("x", "f", map[string]any{"n": 2.0})),
				m("ok"),
			},
		},
		{
			name: "replies between updates from different invocations are kept",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("run")),
				evt("agent", "i1", ct("model", call("s1", "slow", nil)), longRunning("s1")),
				evt("agent", "i1", ct("user", resp("s1", "slow", map[string]any{"p": 10.0}))),
				evt("agent", "i1", m("progress 10")),
				evt("agent", "i2", ct("user", resp("s1", "slow", map[string]any{"p": 50.0}))),
				evt("user", "i3", u("ok")),
			},
			want: []*genai.Content{
				u("run"),
				ct("model", call("s1", "slow", nil)),
				ct("user", resp("s1", "slow", map[string]any{"p": 50.0})),
				m("progress 10"),
				u("ok"),
			},
		},
		{
			name: "input transcription keeps accumulating past an event with content",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", nil, inTr("a")),
				evt("user", "i1", u("typed"), inTr("b")),
				evt("user", "i1", nil, inTr("c")),
			},
			want: []*genai.Content{u("typed"), u("ac")},
		},
		{
			name: "a transcription keeps an event whose content is invisible, content included",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("agent", "i1", ct("model", thought("t")), outTr("spoken")),
			},
			want: []*genai.Content{u("q"), ct("model", thought("t"))},
		},
		{
			name: "compaction events on other branches are ignored",
			opt:  Options{AgentName: "agent", Branch: "a"},
			events: []*session.Event{
				evt("user", "i1", u("x"), at(1)),
				evt("agent", "i1", m("X"), at(2)),
				evt("user", "", nil, at(3), onBranch("b"), compacted(1, 2, m("other summary"))),
				evt("user", "", nil, at(4), onBranch("a"), compacted(2, 2, m("own summary"))),
			},
			want: []*genai.Content{u("x"), m("own summary")},
		},
		{
			name: "a restored call brings back its compacted sibling responses",
			opt:  me,
			events: []*session.Event{
				evt("user", "i1", u("go"), at(1)),
				evt("agent", "i1", ct("model", call("c1", "f", nil), call("c2", "g", nil)), at(2), longRunning("c1")),
				evt("agent", "i1", ct("user", resp("c2", "g", map[string]any{"r": 2.0})), at(3)),
				evt("agent", "i1", ct("user", resp("c1", "f", map[string]any{"s": "pending"})), at(4)),
				evt("user", "", nil, at(5), compacted(1, 4, m("sum"))),
				evt("user", "i2", ct("user", resp("c1", "f", map[string]any{"s": "done"})), at(6)),
			},
			want: []*genai.Content{
				m("sum"),
				ct("model", call("c1", "f", nil), call("c2", "g", nil)),
				ct("user", resp("c2", "g", map[string]any{"r": 2.0}), resp("c1", "f", map[string]any{"s": "done"})),
			},
		},
		{
			name: "current turn ignores user messages on other branches",
			opt:  Options{AgentName: "agent", Branch: "agent", CurrentTurnOnly: true},
			events: []*session.Event{
				evt("user", "i0", u("older")),
				evt("agent", "i0", m("older answer"), onBranch("agent")),
				evt("user", "i1", u("q")),
				evt("user", "i1", u("for sibling"), onBranch("other")),
				evt("agent", "i1", m("hi"), onBranch("agent")),
			},
			want: []*genai.Content{u("q"), m("hi")},
		},
		{
			name: "current turn starts at the latest user message",
			opt:  Options{AgentName: "agent", CurrentTurnOnly: true},
			events: []*session.Event{
				evt("user", "i1", u("old")),
				evt("agent", "i1", m("old answer")),
				evt("user", "i2", u("new")),
				evt("agent", "i2", ct("model", call("c1", "f", nil))),
				evt("agent", "i2", ct("user", resp("c1", "f", map[string]any{"r": 1.0}))),
			},
			want: []*genai.Content{
				u("new"),
				ct("model", call("c1", "f", nil)),
				ct("user", resp("c1", "f", map[string]any{"r": 1.0})),
			},
		},
		{
			name: "current turn reaches back past a posted-back result to its call",
			opt:  Options{AgentName: "agent", CurrentTurnOnly: true},
			events: []*session.Event{
				evt("user", "i1", u("old")),
				evt("agent", "i1", ct("model", call("c1", "approve", nil)), longRunning("c1")),
				evt("user", "i2", u("unrelated question")),
				evt("agent", "i2", m("answer")),
				evt("user", "i3", ct("user", resp("c1", "approve", map[string]any{"ok": true}))),
			},
			want: []*genai.Content{
				u("old"),
				ct("model", call("c1", "approve", nil)),
				ct("user", resp("c1", "approve", map[string]any{"ok": true})),
			},
		},
		{
			name: "current turn can start at another agent's reply",
			opt:  Options{AgentName: "agent", CurrentTurnOnly: true, IncludeThoughtsFromOtherAgents: true},
			events: []*session.Event{
				evt("user", "i1", u("q")),
				evt("helper", "i1", ct("model", thought("hidden"), txt("helper says"))),
				evt("agent", "i1", m("mine")),
			},
			want: []*genai.Content{
				relayed(txt("[helper] said:\n" + q("helper says"))),
				m("mine"),
			},
		},
		{
			name: "current turn does not start at transfer events",
			opt:  Options{AgentName: "agent", CurrentTurnOnly: true},
			events: []*session.Event{
				evt("user", "i0", u("earlier")),
				evt("user", "i1", u("q")),
				evt("root", "i1", ct("model", call("t1", "transfer_to_agent", map[string]any{"agent_name": "agent"}))),
				evt("root", "i1", ct("user", resp("t1", "transfer_to_agent", map[string]any{"result": nil})), transferTo("agent")),
			},
			want: []*genai.Content{
				u("q"),
				relayed(txt("[root] called tool `transfer_to_agent` with parameters:\n" + q("{'agent_name': 'agent'}"))),
				relayed(txt("[root] `transfer_to_agent` tool returned result:\n" + q("{'result': None}"))),
			},
		},
		{
			name: "current turn with no starting event is empty",
			opt:  Options{AgentName: "agent", CurrentTurnOnly: true},
			events: []*session.Event{
				evt("agent", "i1", m("talking to myself")),
			},
			want: []*genai.Content{},
		},
	}
}

// prepare gives events without a timestamp one second apart, as a session
// would, so the Python parity run sees the same order.
func prepare(events []*session.Event) {
	for i, e := range events {
		if e.Timestamp.IsZero() {
			e.Timestamp = session.FloatToTime(float64(100 + i))
		}
	}
}

func TestBuild(t *testing.T) {
	for _, tc := range cases() {
		t.Run(tc.name, func(t *testing.T) {
			prepare(tc.events)
			before, err := json.Marshal(tc.events)
			if err != nil {
				t.Fatal(err)
			}
			got := Build(tc.events, tc.opt)
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tc.want, "", "  ")
				t.Fatalf("Build mismatch\n got: %s\nwant: %s", g, w)
			}
			scribble(got)
			after, _ := json.Marshal(tc.events)
			if string(before) != string(after) {
				t.Fatalf("events changed by Build or by editing its result\nbefore: %s\n after: %s", before, after)
			}
		})
	}
}

// scribble modifies everything reachable from the contents that a caller
// may modify.
func scribble(cs []*genai.Content) {
	for _, c := range cs {
		c.Role = "scribbled"
		for _, p := range c.Parts {
			p.Text = "scribbled"
			if p.FunctionCall != nil {
				p.FunctionCall.ID = "scribbled"
				scribbleMap(p.FunctionCall.Args)
			}
			if p.FunctionResponse != nil {
				p.FunctionResponse.Name = "scribbled"
				scribbleMap(p.FunctionResponse.Response)
			}
			if p.InlineData != nil {
				p.InlineData.MIMEType = "scribbled"
			}
			if p.ToolCall != nil {
				p.ToolCall.ID = "scribbled"
			}
			for i := range p.ThoughtSignature {
				p.ThoughtSignature[i] = 'X'
			}
		}
		c.Parts = append(c.Parts, txt("extra"))
	}
}

func scribbleMap(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			scribbleMap(t)
		case []any:
			for i := range t {
				t[i] = "scribbled"
			}
		}
		m[k] = "scribbled"
	}
	if m != nil {
		m["added"] = true
	}
}

func TestBuildNilEvents(t *testing.T) {
	for _, opt := range []Options{{}, {CurrentTurnOnly: true}} {
		got := Build(nil, opt)
		if got == nil || len(got) != 0 {
			t.Fatalf("Build(nil, %+v) = %#v, want empty non-nil", opt, got)
		}
	}
}

// TestBuildCopiesDeeply checks that the result shares no mutable state
// with the session events even when the event is passed through whole.
func TestBuildCopiesDeeply(t *testing.T) {
	args := map[string]any{"nested": map[string]any{"k": []any{"v"}}}
	events := []*session.Event{
		evt("user", "i1", u("q")),
		evt("agent", "i1", ct("model", call("c1", "f", args))),
		evt("agent", "i1", ct("user", resp("c1", "f", map[string]any{"r": []any{1.0}}))),
	}
	prepare(events)
	got := Build(events, Options{AgentName: "agent"})
	if got[1].Parts[0].FunctionCall == events[1].Content.Parts[0].FunctionCall {
		t.Fatal("function call aliased")
	}
	got[1].Parts[0].FunctionCall.Args["nested"].(map[string]any)["k"].([]any)[0] = "changed"
	if args["nested"].(map[string]any)["k"].([]any)[0] != "v" {
		t.Fatal("nested args aliased")
	}
	got[2].Parts[0].FunctionResponse.Response["r"].([]any)[0] = 2.0
	if events[2].Content.Parts[0].FunctionResponse.Response["r"].([]any)[0] != 1.0 {
		t.Fatal("response aliased")
	}
}

// TestBuildNilPart checks that a nil part reads as an empty part.
func TestBuildNilPart(t *testing.T) {
	events := []*session.Event{
		evt("user", "i1", ct("user", nil, txt("q"))),
		evt("agent", "i1", ct("model", nil)),
		evt("helper", "i1", ct("model", nil, txt("h"))),
	}
	prepare(events)
	got := Build(events, Options{AgentName: "agent"})
	want := []*genai.Content{
		ct("user", &genai.Part{}, txt("q")),
		relayed(txt("[helper] said:\n" + q("h"))),
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Fatalf("got %s", g)
	}
}

// TestDumpParityCases writes the table for the google-adk parity check:
//
//	CONTENTS_PARITY_DUMP=/tmp/cases.json go test -run TestDumpParityCases ./engine/contents/
//
// then run google-adk's _get_contents / _get_current_turn_contents on it.
func TestDumpParityCases(t *testing.T) {
	path := os.Getenv("CONTENTS_PARITY_DUMP")
	if path == "" {
		t.Skip("CONTENTS_PARITY_DUMP not set")
	}
	type dump struct {
		Name   string           `json:"name"`
		Opt    Options          `json:"opt"`
		Events []*session.Event `json:"events"`
		Want   []*genai.Content `json:"want"`
	}
	var out []dump
	for _, tc := range cases() {
		prepare(tc.events)
		out = append(out, dump{tc.name, tc.opt, tc.events, tc.want})
	}
	data, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRelayedEmptyArgs(t *testing.T) {
	// A non-nil empty map is Python's {}, a nil map None.
	events := []*session.Event{
		evt("helper", "i1", ct("model", call("", "f", map[string]any{}), resp("", "g", map[string]any{}))),
		evt("helper", "i2", ct("model", call("", "f", nil), resp("", "g", nil))),
	}
	prepare(events)
	got := Build(events, Options{AgentName: "agent"})
	want := []*genai.Content{relayed(
		txt("[helper] called tool `f` with parameters:\n"+q("{}")),
		txt("[helper] `g` tool returned result:\n"+q("{}")),
	), relayed(
		txt("[helper] called tool `f` with parameters:\n"+q("None")),
		txt("[helper] `g` tool returned result:\n"+q("None")),
	)}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Fatalf("got %s", g)
	}
}

func TestRelayedJSONNumbers(t *testing.T) {
	// Args and results decoded from JSON hold float64 for every number;
	// Python would hold ints for the integers (see package pyfmt).
	var args map[string]any
	if err := json.Unmarshal([]byte(`{"n": 3, "x": 0.5, "l": [1, 2.5]}`), &args); err != nil {
		t.Fatal(err)
	}
	events := []*session.Event{evt("helper", "i1", ct("model", call("", "f", args)))}
	prepare(events)
	got := Build(events, Options{AgentName: "agent"})
	want := []*genai.Content{relayed(
		txt("[helper] called tool `f` with parameters:\n" + q("{'l': [1, 2.5], 'n': 3, 'x': 0.5}")),
	)}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Fatalf("got %s", g)
	}
}

func BenchmarkBuild(b *testing.B) {
	var events []*session.Event
	for i := 0; i < 250; i++ {
		id := "c" + strconv.Itoa(i)
		events = append(events,
			evt("user", "i"+strconv.Itoa(i), u("question")),
			evt("agent", "i"+strconv.Itoa(i), ct("model", call(id, "f", map[string]any{"q": "x", "n": 1.0}))),
			evt("agent", "i"+strconv.Itoa(i), ct("user", resp(id, "f", map[string]any{"result": []any{"a", "b"}}))),
			evt("helper", "i"+strconv.Itoa(i), m("an answer")),
		)
	}
	prepare(events)
	b.ReportAllocs()
	for b.Loop() {
		Build(events, Options{AgentName: "agent"})
	}
}
