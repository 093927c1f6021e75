package host_test

import (
	"context"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

// fakeCtx is a callbacks.ToolContext outside any runner, for calling a
// module's tools and hooks directly and looking at the actions they leave.
type fakeCtx struct {
	context.Context
	sess    *session.Session
	actions *session.EventActions
	state   *session.State
	arts    artifact.Service
	user    *genai.Content
	confirm *session.ToolConfirmation
}

var _ callbacks.ToolContext = (*fakeCtx)(nil)

func newFakeCtx(state map[string]any) *fakeCtx {
	s := session.New("app", "u", "s1", state, nil, time.Now(), 0)
	a := &session.EventActions{}
	return &fakeCtx{
		Context: context.Background(),
		sess:    s, actions: a, state: session.NewState(s, a),
		arts: artifact.NewInMemoryService(),
		user: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "hi"}}},
	}
}

func (c *fakeCtx) InvocationID() string                        { return "e-1" }
func (c *fakeCtx) AgentName() string                           { return "root" }
func (c *fakeCtx) Branch() string                              { return "root" }
func (c *fakeCtx) UserContent() *genai.Content                 { return c.user }
func (c *fakeCtx) Session() *session.Session                   { return c.sess }
func (c *fakeCtx) AppName() string                             { return "app" }
func (c *fakeCtx) UserID() string                              { return "u" }
func (c *fakeCtx) State() *session.State                       { return c.state }
func (c *fakeCtx) Actions() *session.EventActions              { return c.actions }
func (c *fakeCtx) FunctionCallID() string                      { return "call-1" }
func (c *fakeCtx) ToolConfirmation() *session.ToolConfirmation { return c.confirm }

func (c *fakeCtx) key(name string) artifact.Key {
	return artifact.Key{AppName: "app", UserID: "u", SessionID: "s1", Name: name}
}

func (c *fakeCtx) LoadArtifact(name string, version int) (*genai.Part, error) {
	return c.arts.Load(c, c.key(name), version)
}

func (c *fakeCtx) SaveArtifact(name string, part *genai.Part) (int, error) {
	v, err := c.arts.Save(c, c.key(name), part)
	if err != nil {
		return 0, err
	}
	if c.actions.ArtifactDelta == nil {
		c.actions.ArtifactDelta = map[string]int{}
	}
	c.actions.ArtifactDelta[name] = v
	return v, nil
}

func (c *fakeCtx) ListArtifacts() ([]string, error) {
	return c.arts.List(c, "app", "u", "s1")
}

// The memory calls: no memories, and adding a session does nothing. The
// end-to-end tests (memory_test.go) use a runner's memory service.
func (c *fakeCtx) AddSessionToMemory() error                                { return nil }
func (c *fakeCtx) AddEventsToMemory([]*session.Event, map[string]any) error { return nil }
func (c *fakeCtx) AddMemory([]memory.Entry, map[string]any) error           { return nil }
func (c *fakeCtx) SearchMemory(string) (*memory.SearchResponse, error) {
	return &memory.SearchResponse{}, nil
}
func (c *fakeCtx) DeleteMemory(string) error { return nil }

func (c *fakeCtx) RequestConfirmation(hint string, payload any) {
	if c.actions.RequestedToolConfirmations == nil {
		c.actions.RequestedToolConfirmations = map[string]session.ToolConfirmation{}
	}
	c.actions.RequestedToolConfirmations["call-1"] = session.ToolConfirmation{Hint: hint, Payload: payload}
}

// readonlyCtx is the context of the run-level plugin hooks: no state
// writes, no actions, no artifacts.
type readonlyCtx struct{ f *fakeCtx }

var _ callbacks.ReadonlyContext = readonlyCtx{}

func (r readonlyCtx) Deadline() (time.Time, bool) { return r.f.Deadline() }
func (r readonlyCtx) Done() <-chan struct{}       { return r.f.Done() }
func (r readonlyCtx) Err() error                  { return r.f.Err() }
func (r readonlyCtx) Value(k any) any             { return r.f.Value(k) }
func (r readonlyCtx) InvocationID() string        { return r.f.InvocationID() }
func (r readonlyCtx) AgentName() string           { return r.f.AgentName() }
func (r readonlyCtx) Branch() string              { return r.f.Branch() }
func (r readonlyCtx) UserContent() *genai.Content { return r.f.UserContent() }
func (r readonlyCtx) Session() *session.Session   { return r.f.Session() }
func (r readonlyCtx) AppName() string             { return r.f.AppName() }
func (r readonlyCtx) UserID() string              { return r.f.UserID() }
