package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/contents"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
)

// invocation is what all agents of one Runner.Run call share.
type invocation struct {
	id          string
	appName     string
	session     *session.Session
	sessions    session.Service
	artifacts   artifact.Service
	memory      memory.Service
	plugins     callbacks.Plugins
	userContent *genai.Content
	config      RunConfig
	tree        *tree
	contents    *contents.Cache
	log         *slog.Logger
	llmCalls    atomic.Int64
	// resumable: agents write checkpoints into states (resume.go).
	resumable bool
	states    *agentStates
	// compactor runs token-threshold compaction before model requests; nil
	// without RunnerConfig.Compaction.
	compactor *compactor
	// firstEvent is the index in session.Events() at or after which every
	// event of this invocation lies: the history length at the start for a
	// new invocation, else its first stored event. Sessions only append, so
	// per-step scans of the invocation's events start here instead of at 0.
	firstEvent int
	// task is findActiveTaskScope at the start of the turn, computed once.
	task taskScope

	// Node-runtime run numbers (google-adk 2.x numbers each run of an agent
	// under the same parent path); nil when the root is a workflow agent.
	runsMu sync.Mutex
	runs   map[string]int

	// warned holds the keys of warnings logged once an invocation.
	warned sync.Map
}

// firstWarning reports whether the warning of key is the invocation's
// first, for warnings every model request would repeat.
func (inv *invocation) firstWarning(key string) bool {
	_, seen := inv.warned.LoadOrStore(key, true)
	return !seen
}

// taskScope caches findActiveTaskScope for one history length: starting a
// turn asks twice (joining a paused task, scoping the user's message) and
// each answer scans the whole history. Sessions only append, so the same
// length means the same events. It is not safe for concurrent use: only
// the goroutine starting the invocation uses it.
type taskScope struct {
	at                int
	valid, ok         bool
	scope, invocation string
}

// get returns findActiveTaskScope(events), from the cache when events has
// the length it was computed for.
func (t *taskScope) get(events []*session.Event) (scope, invocationID string, ok bool) {
	if !t.valid || t.at != len(events) {
		t.scope, t.invocation, t.ok = findActiveTaskScope(events)
		t.at, t.valid = len(events), true
	}
	return t.scope, t.invocation, t.ok
}

// invocationEvents returns the session's events from inv.firstEvent on:
// a suffix holding every event of this invocation (and maybe later events
// of others, which callers filter out by invocation id).
func (inv *invocation) invocationEvents() []*session.Event {
	events := inv.session.Events()
	return events[min(inv.firstEvent, len(events)):]
}

// nextNodePath returns the path of a new run of name under parent.
func (inv *invocation) nextNodePath(parent, name string) string {
	inv.runsMu.Lock()
	defer inv.runsMu.Unlock()
	k := parent + "/" + name
	inv.runs[k]++
	path := fmt.Sprintf("%s@%d", name, inv.runs[k])
	if parent != "" {
		path = parent + "/" + path
	}
	return path
}

// reserveNodePath records every run number of path as handed out under
// its parent path (google-adk DynamicNodeState.reserve_run_ids), so that a
// later run of one of its steps is numbered after it.
func (inv *invocation) reserveNodePath(path string) {
	inv.runsMu.Lock()
	defer inv.runsMu.Unlock()
	parent := ""
	for step := range strings.SplitSeq(path, "/") {
		name, run, _ := strings.Cut(step, "@")
		if n, err := strconv.Atoi(run); err == nil {
			k := parent + "/" + name
			inv.runs[k] = max(inv.runs[k], n)
		}
		if parent != "" {
			parent += "/"
		}
		parent += step
	}
}

// topNodePath is the path of a run of a that google-adk 2.13 starts at the
// top of the invocation (the agent the turn starts in, or a transfer whose
// target runs beside the first run): every ancestor of a at run 1, a at
// its next top-level run. The path is reserved.
func (inv *invocation) topNodePath(a Agent) string {
	inv.runsMu.Lock()
	k := "/" + a.Info().Name
	inv.runs[k]++
	path := fmt.Sprintf("%s@%d", a.Info().Name, inv.runs[k])
	inv.runsMu.Unlock()
	for cur := inv.tree.parent[a]; cur != nil; cur = inv.tree.parent[cur] {
		path = cur.Info().Name + "@1/" + path
	}
	inv.reserveNodePath(path)
	return path
}

// nodeRun is one run of a node in google-adk 2.13's node runtime (its
// Context): the agent at the node and the run it was started from. The
// runtime stamps the author of the last event the run yielded on the
// events it makes itself, such as the error event of a failure; a run
// that yielded nothing inherits the author its parent run had when it
// started, and falls back to its own agent's name.
type nodeRun struct {
	name   string // "" for the top of the invocation
	path   string
	parent *nodeRun
	// subBranches marks the runs of a task delegation and of the
	// transfers made within it (google-adk schedules that chain with
	// use_sub_branch): a transfer target's branch is then a sub-branch,
	// named after its run, of the branch of the run it starts under.
	subBranches bool
	branch      string // the run's branch, where it is known
	mu          sync.Mutex
	author      string
}

// newNodeRun starts a run of the agent called name under parent.
func newNodeRun(parent *nodeRun, name, path string) *nodeRun {
	return &nodeRun{name: name, path: path, parent: parent, author: parent.lastAuthor()}
}

func (n *nodeRun) lastAuthor() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.author
}

func (n *nodeRun) setAuthor(author string) {
	if author == "" {
		return
	}
	n.mu.Lock()
	n.author = author
	n.mu.Unlock()
}

// eventAuthor is the author the runtime gives events of the run itself.
func (n *nodeRun) eventAuthor() string {
	if a := n.lastAuthor(); a != "" {
		return a
	}
	return n.name
}

// isTop reports whether n is the top of the invocation, above the first run.
func (n *nodeRun) isTop() bool { return n.parent == nil }

// parentNodePath drops the last step of a node path.
func parentNodePath(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// InvocationContext is an agent's view of the invocation in progress
// (google-adk's InvocationContext). Each agent run gets its own copy, with
// its own end-of-invocation flag, as google-adk copies the context per agent.
type InvocationContext struct {
	context.Context
	inv    *invocation
	agent  Agent
	branch string
	ended  *atomic.Bool
	// nodePath is the node-runtime path stamped on this run's events.
	nodePath string
	// node is the node-runtime run nodePath names; nil without the node
	// runtime.
	node *nodeRun
	// isolationScope confines this run's events and view of the history
	// to a task delegation (task.go); "" is unscoped.
	isolationScope string
	// singleTurn is the request of the single_turn agent this run is for.
	singleTurn *singleTurnInput
}

// newInvocationID returns google-adk's "e-<uuid>" invocation id.
func newInvocationID() string { return "e-" + uuid.NewString() }

// forAgent returns the copy an agent runs with (google-adk copies the
// context for every agent run).
func (c *InvocationContext) forAgent(a Agent) *InvocationContext {
	child := c.fork()
	child.agent = a
	return child
}

// withBranch returns a copy on another branch (ParallelAgent children).
func (c *InvocationContext) withBranch(branch string) *InvocationContext {
	child := c.fork()
	child.branch = branch
	return child
}

// fork copies c with its own end-of-invocation flag, starting from c's.
func (c *InvocationContext) fork() *InvocationContext {
	child := *c
	child.ended = new(atomic.Bool)
	child.ended.Store(c.ended.Load())
	return &child
}

// isNodeAgent reports whether a runs as a node of google-adk 2.13's node
// runtime in this context (its own node, not inside a workflow agent's).
func (c *InvocationContext) isNodeAgent(a Agent) bool {
	return c.node != nil && c.node.name == a.Info().Name
}

// withContext returns a copy bound to ctx (for cancellation of branches).
func (c *InvocationContext) withContext(ctx context.Context) *InvocationContext {
	child := *c
	child.Context = ctx
	return &child
}

func (c *InvocationContext) InvocationID() string        { return c.inv.id }
func (c *InvocationContext) Agent() Agent                { return c.agent }
func (c *InvocationContext) AgentName() string           { return c.agent.Info().Name }
func (c *InvocationContext) Branch() string              { return c.branch }
func (c *InvocationContext) UserContent() *genai.Content { return c.inv.userContent }
func (c *InvocationContext) Session() *session.Session   { return c.inv.session }
func (c *InvocationContext) AppName() string             { return c.inv.appName }
func (c *InvocationContext) UserID() string              { return c.inv.session.UserID }
func (c *InvocationContext) RunConfig() *RunConfig       { return &c.inv.config }
func (c *InvocationContext) Logger() *slog.Logger        { return c.inv.log }

// MemoryService is RunnerConfig.Memory (google-adk
// InvocationContext.memory_service); nil when the runner has none.
func (c *InvocationContext) MemoryService() memory.Service { return c.inv.memory }

// EndInvocation stops this agent's run, and that of agents it runs next.
func (c *InvocationContext) EndInvocation() { c.ended.Store(true) }

// Ended reports whether EndInvocation was called for this agent's run.
func (c *InvocationContext) Ended() bool { return c.ended.Load() }

// Parent returns a's parent in the agent tree, or nil for the root.
func (c *InvocationContext) Parent(a Agent) Agent { return c.inv.tree.parent[a] }

// RootAgent returns the root of the agent tree.
func (c *InvocationContext) RootAgent() Agent { return c.inv.tree.root }

// FindAgent returns the agent named name anywhere in the tree, or nil.
func (c *InvocationContext) FindAgent(name string) Agent { return c.inv.tree.find(name) }

// RunAgent runs a (with its callbacks) as part of this invocation; workflow
// agents call it for their children.
func (c *InvocationContext) RunAgent(a Agent) func(yield func(*session.Event, error) bool) {
	return runAgent(c, a)
}

// newEvent returns an event authored by the current agent on its branch.
func (c *InvocationContext) newEvent() *session.Event {
	return session.NewEvent(c.inv.id, c.AgentName(), c.branch)
}

// incrementLLMCalls counts a model call against RunConfig.MaxLLMCalls.
func (c *InvocationContext) incrementLLMCalls() error {
	n := c.inv.llmCalls.Add(1)
	if limit := c.inv.config.MaxLLMCalls; limit > 0 && n > int64(limit) {
		return &LLMCallsLimitExceededError{Limit: limit}
	}
	return nil
}

// countEvent counts an event to be stored against RunConfig.MaxEvents
// and MaxBytes (less the tool results in it that countResult counted).
func (c *InvocationContext) countEvent(ev *session.Event) error {
	cfg := &c.inv.config
	if ev.Partial {
		return nil
	}
	if cfg.MaxEvents > 0 && cfg.events.Add(1) > int64(cfg.MaxEvents) {
		return &EventsLimitExceededError{Limit: cfg.MaxEvents, Agent: ev.Author}
	}
	if cfg.MaxBytes <= 0 {
		return nil
	}
	size := session.EventSize(ev) - cfg.bytes.credit(ev)
	return cfg.bytes.add(size, cfg.MaxBytes, ev.Author, "an event")
}

// countResult counts a tool's response event against RunConfig.MaxBytes
// as it arrives, before the response's other calls end: what a response's
// calls return is held until all have run. Its parts are not counted
// again when the merged event is stored.
func (c *InvocationContext) countResult(ev *session.Event, toolName string) error {
	cfg := &c.inv.config
	if cfg.MaxBytes <= 0 || ev.Content == nil {
		return nil
	}
	return cfg.bytes.addParts(ev.Content.Parts, cfg.MaxBytes, ev.Author, "the result of tool "+strconv.Quote(toolName))
}

// countReplacement counts what an on_event replacement adds to an event
// against RunConfig.MaxBytes.
func (c *InvocationContext) countReplacement(orig, merged *session.Event) error {
	cfg := &c.inv.config
	if cfg.MaxBytes <= 0 || merged.Partial {
		return nil
	}
	grown := session.EventSize(merged) - session.EventSize(orig)
	if grown <= 0 {
		return nil
	}
	return cfg.bytes.add(grown, cfg.MaxBytes, merged.Author, "an on_event plugin's replacement")
}

// byteBudget counts the bytes an invocation and the runs of its agent
// tools produce against RunConfig.MaxBytes.
type byteBudget struct {
	used atomic.Int64
	// copyMu makes agent tools copy the caller's state one at a time
	// (AgentTool.seedSession).
	copyMu sync.Mutex
	mu     sync.Mutex
	// counted holds the parts of tool results counted as they arrived,
	// with their size, until the event merging them is counted.
	counted map[*genai.Part]int64
}

// add counts n bytes; past limit it refuses them (they are not counted).
func (b *byteBudget) add(n, limit int64, agent, what string) error {
	if n <= 0 {
		return nil
	}
	if b.used.Add(n) > limit {
		b.used.Add(-n)
		return &BytesLimitExceededError{Limit: limit, Agent: agent, What: what, Size: n}
	}
	return nil
}

// addParts counts parts and remembers them for credit.
func (b *byteBudget) addParts(parts []*genai.Part, limit int64, agent, what string) error {
	var n int64
	sizes := make([]int64, len(parts))
	for i, p := range parts {
		sizes[i] = session.PartSize(p)
		n += sizes[i]
	}
	if err := b.add(n, limit, agent, what); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counted == nil {
		b.counted = map[*genai.Part]int64{}
	}
	for i, p := range parts {
		b.counted[p] = sizes[i]
	}
	return nil
}

// credit returns what countResult counted of ev's parts, and forgets them.
func (b *byteBudget) credit(ev *session.Event) int64 {
	if ev.Content == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.counted) == 0 {
		return 0
	}
	var n int64
	for _, p := range ev.Content.Parts {
		if size, ok := b.counted[p]; ok {
			n += size
			delete(b.counted, p)
		}
	}
	return n
}

// callbackContext implements callbacks.CallbackContext over an agent's
// context and the actions of the event being built.
type callbackContext struct {
	*InvocationContext
	actions *session.EventActions
	state   *session.State
}

func newCallbackContext(ctx *InvocationContext, actions *session.EventActions) *callbackContext {
	return &callbackContext{InvocationContext: ctx, actions: actions, state: session.NewState(ctx.inv.session, actions)}
}

func (c *callbackContext) State() *session.State { return c.state }

// Actions returns the actions of the event being built, with the writes
// made in place into state containers recorded first (google-adk records
// them when its actions are read).
func (c *callbackContext) Actions() *session.EventActions {
	c.state.RecordNestedWrites()
	return c.actions
}

func (c *callbackContext) artifactKey(name string) artifact.Key {
	return artifact.Key{AppName: c.inv.appName, UserID: c.inv.session.UserID, SessionID: c.inv.session.ID, Name: name}
}

func (c *callbackContext) LoadArtifact(name string, version int) (*genai.Part, error) {
	if c.inv.artifacts == nil {
		return nil, errNoArtifactService
	}
	return c.inv.artifacts.Load(c, c.artifactKey(name), version)
}

func (c *callbackContext) SaveArtifact(name string, part *genai.Part) (int, error) {
	if c.inv.artifacts == nil {
		return 0, errNoArtifactService
	}
	// An artifact is stored for good, as an event is: it counts against
	// RunConfig.MaxBytes (once: an agent tool's saves are counted by the
	// caller's context it forwards them to).
	if _, forwarded := c.inv.artifacts.(forwardingArtifacts); !forwarded {
		if cfg := &c.inv.config; cfg.MaxBytes > 0 {
			if err := cfg.bytes.add(session.PartSize(part)+int64(len(name)), cfg.MaxBytes, c.AgentName(), "artifact "+strconv.Quote(truncateUTF8(name, maxLoggedNameBytes))); err != nil {
				return 0, err
			}
		}
	}
	v, err := c.inv.artifacts.Save(c, c.artifactKey(name), part)
	if err != nil {
		return 0, err
	}
	if c.actions.ArtifactDelta == nil {
		c.actions.ArtifactDelta = map[string]int{}
	}
	c.actions.ArtifactDelta[name] = v
	return v, nil
}

func (c *callbackContext) ListArtifacts() ([]string, error) {
	if c.inv.artifacts == nil {
		return nil, errNoArtifactService
	}
	return c.inv.artifacts.List(c, c.inv.appName, c.inv.session.UserID, c.inv.session.ID)
}

// Memory calls. The scope is the session's app and user, as google-adk's
// Context takes it from the session (search and delete from the
// invocation, which has the same app and user).

func (c *callbackContext) requireMemory(msg string) (memory.Service, error) {
	if c.inv.memory == nil {
		return nil, &NoMemoryServiceError{Message: msg}
	}
	return c.inv.memory, nil
}

func (c *callbackContext) AddSessionToMemory() error {
	svc, err := c.requireMemory("Cannot add session to memory: memory service is not available.")
	if err != nil {
		return err
	}
	return svc.AddSession(c, c.inv.session)
}

func (c *callbackContext) AddEventsToMemory(events []*session.Event, customMetadata map[string]any) error {
	svc, err := c.requireMemory("Cannot add events to memory: memory service is not available.")
	if err != nil {
		return err
	}
	s := c.inv.session
	return svc.AddEvents(c, memory.AddEventsRequest{AppName: s.AppName, UserID: s.UserID, SessionID: s.ID, Events: events, CustomMetadata: customMetadata})
}

func (c *callbackContext) AddMemory(memories []memory.Entry, customMetadata map[string]any) error {
	svc, err := c.requireMemory("Cannot add memory: memory service is not available.")
	if err != nil {
		return err
	}
	return svc.AddMemories(c, c.inv.session.AppName, c.inv.session.UserID, memories, customMetadata)
}

func (c *callbackContext) SearchMemory(query string) (*memory.SearchResponse, error) {
	svc, err := c.requireMemory("Memory service is not available.")
	if err != nil {
		return nil, err
	}
	return svc.Search(c, c.inv.appName, c.inv.session.UserID, query)
}

func (c *callbackContext) DeleteMemory(memoryID string) error {
	svc, err := c.requireMemory("Cannot delete memory: memory service is not available.")
	if err != nil {
		return err
	}
	return svc.Delete(c, c.inv.appName, c.inv.session.UserID, memoryID)
}

// toolContext implements callbacks.ToolContext for one function call.
type toolContext struct {
	*callbackContext
	callID       string
	confirmation *session.ToolConfirmation
	// emit passes events the tool produces (a single_turn agent's) up the
	// stream before the tool's response; nil when nothing can take them.
	emit emitter
	// dynamic collects the instructions tools give while they change a
	// request (toolsProcessor); nil otherwise.
	dynamic *[]string
}

// appendDynamicInstruction queues text for the system instruction; only
// the context toolsProcessor hands tools has a queue.
// It reports whether the text was queued.
func (t *toolContext) appendDynamicInstruction(text string) bool {
	if t.dynamic == nil {
		return false
	}
	*t.dynamic = append(*t.dynamic, text)
	return true
}

func (t *toolContext) FunctionCallID() string { return t.callID }

func (t *toolContext) ToolConfirmation() *session.ToolConfirmation { return t.confirmation }

func (t *toolContext) RequestConfirmation(hint string, payload any) {
	if t.actions.RequestedToolConfirmations == nil {
		t.actions.RequestedToolConfirmations = map[string]session.ToolConfirmation{}
	}
	t.actions.RequestedToolConfirmations[t.callID] = session.ToolConfirmation{Hint: hint, Payload: payload}
}

var (
	_ callbacks.CallbackContext = (*callbackContext)(nil)
	_ callbacks.ToolContext     = (*toolContext)(nil)
	_ callbacks.ReadonlyContext = (*InvocationContext)(nil)
)
