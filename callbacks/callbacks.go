// Package callbacks defines the hooks an agent and its plugins attach to a
// run, the contexts the hooks receive, and the chain rule that combines them:
// plugins first, in registration order, then the agent's list; the first
// non-nil result wins and stops the chain.
package callbacks

import (
	"context"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// ReadonlyContext is what every hook can read about the invocation in
// progress. It is a context.Context, so hooks can honour cancellation.
type ReadonlyContext interface {
	context.Context
	InvocationID() string
	// AgentName is the agent currently running.
	AgentName() string
	// Branch is the dot-separated agent path of the current agent.
	Branch() string
	// UserContent is the user message that started the invocation.
	UserContent() *genai.Content
	Session() *session.Session
	AppName() string
	UserID() string
}

// CallbackContext is what agent and model hooks receive: the invocation plus
// state and actions that land on the event the hook contributes to.
type CallbackContext interface {
	ReadonlyContext
	// State reads and writes session state; writes are recorded in Actions.
	State() *session.State
	Actions() *session.EventActions
	// LoadArtifact returns a version of an artifact (artifact.Latest for the
	// newest).
	LoadArtifact(name string, version int) (*genai.Part, error)
	// SaveArtifact stores a new version and records it in Actions.
	SaveArtifact(name string, part *genai.Part) (version int, err error)
	ListArtifacts() ([]string, error)
	// AddSessionToMemory ingests the current session into the memory
	// service.
	AddSessionToMemory() error
	// AddEventsToMemory ingests events as a delta, scoped to the current
	// session; customMetadata is service-specific.
	AddEventsToMemory(events []*session.Event, customMetadata map[string]any) error
	// AddMemory writes memories directly for the current user.
	AddMemory(memories []memory.Entry, customMetadata map[string]any) error
	// SearchMemory searches the current user's memories.
	SearchMemory(query string) (*memory.SearchResponse, error)
	// DeleteMemory removes one of the user's memories by its id.
	DeleteMemory(memoryID string) error
}

// ToolContext is what a tool and the tool hooks receive.
type ToolContext interface {
	CallbackContext
	// FunctionCallID is the id of the call being answered.
	FunctionCallID() string
	// RequestConfirmation asks the user to confirm this call.
	RequestConfirmation(hint string, payload any)
	// ToolConfirmation is the user's answer to an earlier request, if any.
	ToolConfirmation() *session.ToolConfirmation
}

// Tool is what tool hooks learn about the tool being called.
type Tool interface {
	Name() string
	Description() string
	IsLongRunning() bool
}

// Agent callbacks: a non-nil Content from BeforeAgent skips the agent and
// becomes its answer; from AfterAgent it is an extra event after the agent.
type (
	BeforeAgent func(ctx CallbackContext) (*genai.Content, error)
	AfterAgent  func(ctx CallbackContext) (*genai.Content, error)
)

// Model callbacks: a non-nil Response from BeforeModel skips the model call;
// from AfterModel it replaces the model's response; from OnModelError it is
// used instead of failing.
type (
	BeforeModel  func(ctx CallbackContext, req *model.Request) (*model.Response, error)
	AfterModel   func(ctx CallbackContext, resp *model.Response) (*model.Response, error)
	OnModelError func(ctx CallbackContext, req *model.Request, err error) (*model.Response, error)
)

// Tool callbacks: a non-nil map from BeforeTool skips the tool and is its
// result; from AfterTool it replaces the result; from OnToolError it is used
// as the result instead of failing. BeforeTool may change args in place.
type (
	BeforeTool  func(ctx ToolContext, tool Tool, args map[string]any) (map[string]any, error)
	AfterTool   func(ctx ToolContext, tool Tool, args, result map[string]any) (map[string]any, error)
	OnToolError func(ctx ToolContext, tool Tool, args map[string]any, err error) (map[string]any, error)
)

// Agent holds the callbacks an agent registers, each list run in order.
type Agent struct {
	BeforeAgent  []BeforeAgent
	AfterAgent   []AfterAgent
	BeforeModel  []BeforeModel
	AfterModel   []AfterModel
	OnModelError []OnModelError
	BeforeTool   []BeforeTool
	AfterTool    []AfterTool
	OnToolError  []OnToolError
}
