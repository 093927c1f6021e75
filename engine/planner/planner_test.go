package planner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

type fakeCtx struct {
	context.Context
	sess    *session.Session
	actions session.EventActions
	state   *session.State
}

func newFakeCtx() *fakeCtx {
	f := &fakeCtx{Context: context.Background(), sess: session.New("app", "u", "s", nil, nil, time0(), 0)}
	f.state = session.NewState(f.sess, &f.actions)
	return f
}

func (f *fakeCtx) InvocationID() string                          { return "inv-1" }
func (f *fakeCtx) AgentName() string                             { return "planner_agent" }
func (f *fakeCtx) Branch() string                                { return "root.planner_agent" }
func (f *fakeCtx) UserContent() *genai.Content                   { return nil }
func (f *fakeCtx) Session() *session.Session                     { return f.sess }
func (f *fakeCtx) AppName() string                               { return "app" }
func (f *fakeCtx) UserID() string                                { return "u" }
func (f *fakeCtx) State() *session.State                         { return f.state }
func (f *fakeCtx) Actions() *session.EventActions                { return &f.actions }
func (f *fakeCtx) LoadArtifact(string, int) (*genai.Part, error) { return nil, nil }
func (f *fakeCtx) SaveArtifact(string, *genai.Part) (int, error) { return 0, nil }
func (f *fakeCtx) ListArtifacts() ([]string, error)              { return nil, nil }
func (f *fakeCtx) AddSessionToMemory() error                     { return nil }
func (f *fakeCtx) AddEventsToMemory([]*session.Event, map[string]any) error {
	return nil
}
func (f *fakeCtx) AddMemory([]memory.Entry, map[string]any) error      { return nil }
func (f *fakeCtx) SearchMemory(string) (*memory.SearchResponse, error) { return nil, nil }
func (f *fakeCtx) DeleteMemory(string) error                           { return nil }

var _ callbacks.CallbackContext = (*fakeCtx)(nil)

func text(s string) *genai.Part    { return &genai.Part{Text: s} }
func thought(s string) *genai.Part { return &genai.Part{Text: s, Thought: true} }
func call(name string) *genai.Part { return &genai.Part{FunctionCall: &genai.FunctionCall{Name: name}} }

func TestPlanReActInstruction(t *testing.T) {
	// SHA-256 and length of google-adk 2.13's PlanReActPlanner instruction.
	sum := sha256.Sum256([]byte(PlanReActInstruction))
	if got := hex.EncodeToString(sum[:]); got != "eeaf6482ceb24705b84cfcd75eca75abbe841788ff1818da7eae062a51987c76" || len(PlanReActInstruction) != 3069 {
		t.Errorf("instruction differs from google-adk: sha256 %s, %d bytes", got, len(PlanReActInstruction))
	}
	if !strings.HasPrefix(PlanReActInstruction, "\nWhen answering the question, try to leverage") ||
		!strings.HasSuffix(PlanReActInstruction, "instead of repeated tool use.\n") {
		t.Errorf("unexpected instruction bounds")
	}
	// Cross-check with the recorded google-adk run, when present.
	data, err := os.ReadFile("../../conformance/golden/planner_plan_react.json")
	if err != nil {
		t.Skip("golden file not available:", err)
	}
	var golden struct {
		LLMRequests []struct {
			SystemInstruction string `json:"system_instruction"`
		} `json:"llm_requests"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	for _, r := range golden.LLMRequests {
		if !strings.HasSuffix(r.SystemInstruction, "\n\n"+PlanReActInstruction) {
			t.Errorf("golden system instruction does not end with the planning instruction")
		}
	}
}

func TestPlanReActProcess(t *testing.T) {
	sig := &genai.Part{Text: "/*PLANNING*/x", ThoughtSignature: []byte("sig")}
	img := &genai.Part{InlineData: &genai.Blob{Data: []byte("x"), MIMEType: "image/png"}}
	anon := &genai.Part{FunctionCall: &genai.FunctionCall{}}
	// Expected results from google-adk 2.13's PlanReActPlanner.
	cases := []struct {
		name string
		in   []*genai.Part
		want []*genai.Part
	}{
		{"empty", nil, nil},
		{"golden turn 1",
			[]*genai.Part{text("/*PLANNING*/\n1. Use the calculator.\n"), text("/*ACTION*/\n"), call("calculator")},
			[]*genai.Part{thought("\n1. Use the calculator.\n"), thought("\n"), call("calculator")}},
		{"golden turn 2",
			[]*genai.Part{text("/*REASONING*/\nThe calculator said 5.\n/*FINAL_ANSWER*/\nThe sum is 5.")},
			[]*genai.Part{thought("\nThe calculator said 5.\n"), text("\nThe sum is 5.")}},
		{"text after call dropped",
			[]*genai.Part{text("a"), call("f"), text("b"), call("g")},
			[]*genai.Part{text("a"), call("f")}},
		{"call group, trailing empty names kept",
			[]*genai.Part{call("f"), call("g"), call(""), text("t"), call("h")},
			[]*genai.Part{call("f"), call("g"), call("")}},
		{"trailing call without name", []*genai.Part{call("f"), anon}, []*genai.Part{call("f"), anon}},
		{"empty name before first call dropped",
			[]*genai.Part{call(""), text("/*REASONING*/x"), call("f")},
			[]*genai.Part{thought("x"), call("f")}},
		{"only empty names", []*genai.Part{call(""), call("")}, []*genai.Part{}},
		{"split at last final answer",
			[]*genai.Part{text("a/*FINAL_ANSWER*/b/*FINAL_ANSWER*/c")},
			[]*genai.Part{thought("a/*FINAL_ANSWER*/b"), text("c")}},
		{"lone final answer tag", []*genai.Part{text("/*FINAL_ANSWER*/")}, []*genai.Part{}},
		{"answer keeps tags",
			[]*genai.Part{text("/*FINAL_ANSWER*/answer /*PLANNING*/")},
			[]*genai.Part{text("answer /*PLANNING*/")}},
		{"reasoning only",
			[]*genai.Part{text("reason /*PLANNING*/ x /*FINAL_ANSWER*/")},
			[]*genai.Part{thought("reason  x ")}},
		{"tag inside plain text", []*genai.Part{text("plain /*PLANNING*/")}, []*genai.Part{text("plain /*PLANNING*/")}},
		{"tag only", []*genai.Part{text("/*ACTION*/")}, []*genai.Part{thought("")}},
		{"tags stripped in order",
			[]*genai.Part{text("/*ACTION*//*PLAN/*REASONING*/NING*/x")},
			[]*genai.Part{thought("/*PLANNING*/x")}},
		{"replanning", []*genai.Part{text("/*REPLANNING*/new plan /*ACTION*/ go")}, []*genai.Part{thought("new plan  go")}},
		{"leading space", []*genai.Part{text(" /*PLANNING*/x")}, []*genai.Part{text(" /*PLANNING*/x")}},
		{"signature kept on tagged part, lost on split",
			[]*genai.Part{sig, {Text: "r/*FINAL_ANSWER*/f", ThoughtSignature: []byte("sig2")}},
			[]*genai.Part{{Text: "x", Thought: true, ThoughtSignature: []byte("sig")}, thought("r"), text("f")}},
		{"non-text parts kept", []*genai.Part{img, text("")}, []*genai.Part{img, text("")}},
		{"thought kept", []*genai.Part{thought("t")}, []*genai.Part{thought("t")}},
		{"planning then answer",
			[]*genai.Part{text("/*PLANNING*/p/*FINAL_ANSWER*/a")},
			[]*genai.Part{thought("p"), text("a")}},
	}
	for _, c := range cases {
		before, _ := json.Marshal(c.in)
		got := PlanReAct{}.ProcessPlanningResponse(newFakeCtx(), c.in)
		if !reflect.DeepEqual(got, c.want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(c.want)
			t.Errorf("%s: got %s, want %s", c.name, g, w)
		}
		if after, _ := json.Marshal(c.in); string(after) != string(before) {
			t.Errorf("%s: input modified: %s -> %s", c.name, before, after)
		}
	}
}

func TestApplyToRequestPlanReAct(t *testing.T) {
	shared := thought("earlier plan")
	history := &genai.Content{Role: "model", Parts: []*genai.Part{shared, text("visible")}}
	user := &genai.Content{Role: "user", Parts: []*genai.Part{text("q")}}
	req := &model.Request{Contents: []*genai.Content{user, history}}
	req.AppendInstructions("Solve tasks.")
	ApplyToRequest(newFakeCtx(), PlanReAct{}, req)

	if got, want := req.SystemInstructionText(), "Solve tasks.\n\n"+PlanReActInstruction; got != want {
		t.Errorf("system instruction = %q", got)
	}
	if req.Contents[0] != user {
		t.Error("content without thoughts was copied")
	}
	want := []*genai.Part{text("earlier plan"), text("visible")}
	if !reflect.DeepEqual(req.Contents[1].Parts, want) || req.Contents[1].Role != "model" {
		t.Errorf("contents = %+v", req.Contents[1])
	}
	if !shared.Thought || history.Parts[0] != shared {
		t.Error("session content was modified")
	}
	if req.Config.ThinkingConfig != nil {
		t.Error("thinking config set")
	}
}

func TestApplyToRequestBuiltIn(t *testing.T) {
	budget := int32(128)
	p := &BuiltIn{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}}
	req := &model.Request{
		Contents: []*genai.Content{{Role: "model", Parts: []*genai.Part{thought("kept")}}},
		Config:   &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: false}},
	}
	ApplyToRequest(newFakeCtx(), p, req)
	if tc := req.Config.ThinkingConfig; tc == nil || !tc.IncludeThoughts || tc.ThinkingBudget == nil || *tc.ThinkingBudget != 128 {
		t.Errorf("thinking config = %+v", tc)
	}
	if req.Config.SystemInstruction != nil {
		t.Error("instruction added")
	}
	if !req.Contents[0].Parts[0].Thought {
		t.Error("BuiltIn removed thoughts")
	}

	req = &model.Request{}
	ApplyToRequest(newFakeCtx(), p, req)
	if req.Config == nil || req.Config.ThinkingConfig == nil {
		t.Error("config not created")
	}
	req = &model.Request{}
	ApplyToRequest(newFakeCtx(), &BuiltIn{}, req)
	if req.Config != nil {
		t.Error("nil thinking config touched the request")
	}
	ApplyToRequest(newFakeCtx(), nil, req)
	if req.Config != nil {
		t.Error("nil planner touched the request")
	}
}

type statePlanner struct{ PlanReAct }

func (statePlanner) ProcessPlanningResponse(ctx callbacks.CallbackContext, parts []*genai.Part) []*genai.Part {
	ctx.State().Set("planned", true)
	return nil
}

func TestApplyToResponse(t *testing.T) {
	orig := &genai.Content{Role: "model", Parts: []*genai.Part{text("/*PLANNING*/p"), call("f"), text("dropped")}}
	resp := &model.Response{Content: orig}
	if ev := ApplyToResponse(newFakeCtx(), PlanReAct{}, resp); ev != nil {
		t.Errorf("unexpected event %+v", ev)
	}
	want := []*genai.Part{thought("p"), call("f")}
	if !reflect.DeepEqual(resp.Content.Parts, want) || resp.Content.Role != "model" {
		t.Errorf("parts = %+v", resp.Content.Parts)
	}
	if len(orig.Parts) != 3 || orig.Parts[0].Thought {
		t.Error("original content modified")
	}

	// An empty result keeps the parts.
	lone := &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{text("/*FINAL_ANSWER*/")}}}
	ApplyToResponse(newFakeCtx(), PlanReAct{}, lone)
	if got := lone.Content.Parts; len(got) != 1 || got[0].Text != "/*FINAL_ANSWER*/" {
		t.Errorf("lone tag parts = %+v", got)
	}

	// BuiltIn and nil planners leave responses alone.
	for _, p := range []Planner{nil, &BuiltIn{ThinkingConfig: &genai.ThinkingConfig{}}} {
		r := &model.Response{Content: &genai.Content{Parts: []*genai.Part{text("/*PLANNING*/p")}}}
		ApplyToResponse(newFakeCtx(), p, r)
		if r.Content.Parts[0].Thought {
			t.Errorf("planner %T rewrote the response", p)
		}
	}
	if RewritesResponse(nil) || RewritesResponse(&BuiltIn{}) || !RewritesResponse(PlanReAct{}) {
		t.Error("RewritesResponse")
	}

	// No content: nothing happens.
	if ev := ApplyToResponse(newFakeCtx(), statePlanner{}, &model.Response{}); ev != nil {
		t.Error("event for empty response")
	}

	// State written by the planner comes back as an event.
	ctx := newFakeCtx()
	r := &model.Response{Content: &genai.Content{Parts: []*genai.Part{text("x")}}}
	ev := ApplyToResponse(ctx, statePlanner{}, r)
	if ev == nil || ev.Author != "planner_agent" || ev.InvocationID != "inv-1" || ev.Branch != "root.planner_agent" ||
		ev.Actions.StateDelta["planned"] != true {
		t.Errorf("state event = %+v", ev)
	}
	if r.Content.Parts[0].Text != "x" {
		t.Error("nil result replaced parts")
	}
}

func time0() time.Time { return time.Unix(0, 0) }
