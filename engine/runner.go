package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/contents"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// StreamingMode selects how model responses are delivered.
type StreamingMode string

const (
	// StreamingModeNone delivers one complete response per model call.
	StreamingModeNone StreamingMode = ""
	// StreamingModeSSE yields partial events as the model streams, then the
	// aggregated final one. Partial events are never stored.
	StreamingModeSSE StreamingMode = "sse"
)

// DefaultMaxLLMCalls is google-adk's default limit of model calls per
// invocation.
const DefaultMaxLLMCalls = 500

// DefaultMaxEvents is the default of RunConfig.MaxEvents: 20 events for
// each of DefaultMaxLLMCalls model calls, far above what a model call
// brings (its answer, its tools' merged response, a few state and
// checkpoint events), and a bound on what an invocation that loops
// without calling the model can store.
const DefaultMaxEvents = 10_000

// DefaultMaxFunctionCalls is the default of RunConfig.MaxFunctionCalls.
// Models ask for a handful of calls at once; 256 leaves room for a
// hundred cities' weather and bounds what one answer holds: every call's
// result (up to a module's max_output_bytes each) is held until all have
// run and stored as one event.
const DefaultMaxFunctionCalls = 256

// DefaultMaxBytes is the default of RunConfig.MaxBytes: 64 MiB, some
// hundred times what a turn of text and tool results brings, and room for
// sixteen results at sandbox.DefaultMaxOutputBytes; an invocation holds
// its events in memory until it ends, and a session stores them for good.
const DefaultMaxBytes = 64 << 20

// RunConfig tunes one Runner.Run call.
type RunConfig struct {
	StreamingMode StreamingMode
	// MaxLLMCalls limits model calls in the invocation: 0 means
	// DefaultMaxLLMCalls, a negative value means no limit. An agent run as
	// a tool (AgentTool) counts its own, as google-adk's nested run does.
	MaxLLMCalls int
	// MaxEvents limits the events the invocation stores, those of the
	// agents it runs as tools (AgentTool) included: 0 means
	// DefaultMaxEvents, a negative value means no limit. google-adk has no
	// such bound: there, as here before it, an agent whose callback
	// answers for the model (before_model, before_agent) in a loop, or a
	// LoopAgent whose agents never call the model, stored events without
	// end, none counted against MaxLLMCalls, and nested agent tools
	// multiplied MaxLLMCalls by their fan-out at each level. Past it the
	// run fails with an EventsLimitExceededError.
	MaxEvents int
	// MaxFunctionCalls limits the function calls of one model response: 0
	// means DefaultMaxFunctionCalls, a negative value means no limit. A
	// response asking for more fails the agent's step with a
	// TooManyFunctionCallsError before any call runs or the response is
	// stored (google-adk runs them all at once).
	MaxFunctionCalls int
	// MaxBytes limits the bytes the invocation produces and holds, those
	// of the agents it runs as tools (AgentTool) included: every event it
	// stores (session.EventSize: content, state delta, metadata...), every
	// artifact its tools and callbacks save, every tool result as it
	// arrives, before the results of one response are merged into one
	// event (counted once), and, while they run, the copies of the
	// caller's state that agent tools seed their sessions with (256 bytes
	// a map entry or list element: the copies share strings). 0 means
	// DefaultMaxBytes, a negative value means no limit. Each of MaxEvents
	// events may carry a module's max_output_bytes, and a response's
	// MaxFunctionCalls results are held together: without this bound one
	// run held and stored gigabytes. Past it the run fails with a
	// BytesLimitExceededError.
	MaxBytes int64
	// StateDelta is applied with the user's message.
	StateDelta map[string]any
	// CustomMetadata is merged into every event of the invocation.
	CustomMetadata map[string]any
	// SaveInputBlobsAsArtifacts saves the inline data parts of the new
	// message as artifacts "artifact_<invocation id>_<part index>" and
	// stores the message with each replaced by a text part naming it
	// (google-adk's deprecated RunConfig.save_input_blobs_as_artifacts).
	// As in google-adk 2.13, only a workflow root does it, and only with
	// an artifact service.
	SaveInputBlobsAsArtifacts bool
	// Labels are added to every model request's config labels.
	Labels map[string]string
	// InvocationID resumes that invocation of a resumable app (google-adk
	// run_async's invocation_id): the message, if any, is added to it and
	// its agents continue where they stopped. A message answering a call
	// resumes the call's invocation without it. With a root LlmAgent (any
	// app), a message that answers no call, sent with the id of an
	// invocation that has a user message, retries that invocation on its
	// first user message: the new message is dropped, as google-adk's node
	// runtime does. With a workflow root, such a message runs the
	// invocation again without being stored (its state delta dropped), as
	// google-adk's legacy path does.
	InvocationID string

	// events counts the events stored against MaxEvents, shared by an
	// invocation and the runs of its agent tools (which copy its
	// RunConfig); nil until the invocation starts.
	events *atomic.Int64
	// bytes counts what the invocation produces against MaxBytes, shared
	// like events.
	bytes *byteBudget
	// nesting is how many agent tool runs this run is inside.
	nesting int
}

// RunnerConfig configures NewRunner.
type RunnerConfig struct {
	AppName string
	// Agent is the root of the agent tree.
	Agent    Agent
	Sessions session.Service
	// Artifacts is optional; without it artifact calls fail.
	Artifacts artifact.Service
	// Memory is optional; without it memory calls (and the load_memory and
	// preload_memory tools) fail.
	Memory memory.Service
	// Plugins run, in order, before every agent's own callbacks.
	Plugins []callbacks.Plugin
	// AutoCreateSession creates a missing session instead of failing.
	AutoCreateSession bool
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// ContentsCacheSessions bounds how many sessions' built request history
	// the runner keeps for reuse; 0 means 1024.
	ContentsCacheSessions int
	// Resumable makes invocations resumable (google-adk
	// ResumabilityConfig(is_resumable=True)): agents write agent_state and
	// end_of_agent checkpoints, and RunConfig.InvocationID or a function
	// response resumes a paused invocation where it stopped.
	Resumable bool
	// Compaction turns on event compaction (google-adk
	// App.events_compaction_config); nil leaves it off.
	Compaction *CompactionConfig
}

// Runner runs an agent tree against a session service (google-adk Runner).
// It is safe for concurrent use; its configuration never changes.
type Runner struct {
	cfg       RunnerConfig
	tree      *tree
	contents  *contents.Cache
	compactor *compactor // nil without RunnerConfig.Compaction
}

// NewRunner validates the agent tree and returns a Runner.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.AppName == "" {
		return nil, errors.New("engine.NewRunner: AppName is required")
	}
	if cfg.Agent == nil {
		return nil, errors.New("engine.NewRunner: Agent is required")
	}
	if cfg.Sessions == nil {
		return nil, errors.New("engine.NewRunner: Sessions is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t, err := newTree(cfg.Agent)
	if err != nil {
		return nil, fmt.Errorf("engine.NewRunner: %w", err)
	}
	if cfg.ContentsCacheSessions <= 0 {
		cfg.ContentsCacheSessions = 1024
	}
	r := &Runner{cfg: cfg, tree: t, contents: contents.NewCache(cfg.ContentsCacheSessions)}
	if cfg.Compaction != nil {
		if r.compactor, err = newCompactor(*cfg.Compaction, cfg.Agent, cfg.Logger); err != nil {
			return nil, fmt.Errorf("engine.NewRunner: %w", err)
		}
	}
	return r, nil
}

// Run appends msg to the session as the user's turn, runs the agent that
// should answer it, and yields every event. Non-partial events are stored
// before they are yielded. An error ends the stream; events stored before
// it stay in the session.
func (r *Runner) Run(ctx context.Context, userID, sessionID string, msg *genai.Content, cfg RunConfig) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		ictx, err := r.newInvocation(ctx, userID, sessionID, msg, cfg)
		if err != nil {
			yield(nil, err)
			return
		}
		if ictx == nil {
			return // a resumed invocation whose agents had all ended
		}
		for ev, err := range r.execWithPlugins(ictx) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// newInvocation loads the session, stores the user's message and picks
// the agent to run (google-adk _setup_context_for_new_invocation and, in a
// resumable app, _setup_context_for_resumed_invocation). It returns nil,
// nil for a resumed invocation that has nothing left to run.
func (r *Runner) newInvocation(ctx context.Context, userID, sessionID string, msg *genai.Content, cfg RunConfig) (*InvocationContext, error) {
	if err := checkRootMode(r.tree.root); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	// google-adk 2.13's node runtime (a root LlmAgent) runs a message
	// without parts, and resumes an invocation by id without a message in
	// any app; its legacy path (a workflow root) refuses both.
	_, nodeRuntime := r.tree.root.(*LlmAgent)
	switch {
	case msg == nil && cfg.InvocationID == "":
		return nil, errors.New("run: a new message, or an invocation id to resume, is required")
	case msg == nil && !r.cfg.Resumable && !nodeRuntime:
		return nil, &MessageError{Message: fmt.Sprintf("Running an agent requires a new_message or a resumable app. Session: %s, User: %s", sessionID, userID)}
	}
	if msg != nil {
		if nodeRuntime && hasResumeInputs(msg) && slices.ContainsFunc(msg.Parts, func(p *genai.Part) bool { return p != nil && p.Text != "" }) {
			return nil, &MessageError{Message: "Message cannot contain both function responses and text. Function responses resume an existing invocation while text starts a new one."}
		}
		if msg.Role != "user" {
			msg = &genai.Content{Role: "user", Parts: msg.Parts}
		}
	}
	cfg = cfg.resolved()
	sess, err := r.cfg.Sessions.Get(ctx, &session.GetRequest{AppName: r.cfg.AppName, UserID: userID, SessionID: sessionID})
	if errors.Is(err, session.ErrNotFound) && r.cfg.AutoCreateSession {
		sess, err = r.cfg.Sessions.Create(ctx, &session.CreateRequest{AppName: r.cfg.AppName, UserID: userID, SessionID: sessionID})
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	id, err := r.resolveInvocationID(sess.Events(), msg, cfg.InvocationID)
	if err != nil {
		return nil, err
	}
	// A message that answers no call joins a task paused waiting for the
	// user: it borrows the task's invocation, as a new turn, not a resume.
	joinsTask := false
	var task taskScope
	if id == "" && msg != nil && !hasFunctionResponse(msg) {
		if _, taskInv, ok := task.get(sess.Events()); ok {
			id, joinsTask = taskInv, true
		}
	}
	resumed := r.cfg.Resumable && id != "" && !joinsTask
	// A new id has no stored events: this invocation's events all come
	// after the current history.
	firstEvent := len(sess.Events())
	if id == "" {
		id = newInvocationID()
	} else {
		firstEvent = firstEventOf(sess.Events(), id)
	}
	inv := &invocation{
		id: id, appName: r.cfg.AppName, session: sess,
		sessions: r.cfg.Sessions, artifacts: r.cfg.Artifacts, memory: r.cfg.Memory, plugins: r.cfg.Plugins,
		config: cfg, tree: r.tree, contents: r.contents, log: r.cfg.Logger,
		resumable: r.cfg.Resumable, states: newAgentStates(),
		compactor: r.compactor, firstEvent: firstEvent, task: task,
	}
	ictx := &InvocationContext{Context: ctx, inv: inv, agent: r.tree.root, ended: new(atomic.Bool)}
	// google-adk's node runtime (a root LlmAgent) runs a message sent with
	// the id of an invocation that has a user message, and that answers no
	// call, as a retry of that invocation: on its first user message, the
	// new one neither stored nor passed to on_user_message (a state delta
	// is stored on an event of its own).
	if nodeRuntime && msg != nil && cfg.InvocationID != "" && id == cfg.InvocationID && !joinsTask && !hasResumeInputs(msg) {
		if first := firstUserMessage(inv.invocationEvents(), id); first != nil {
			msg = nil
			inv.userContent = first
		}
	}
	// Its legacy path (a workflow root) runs the invocation with the
	// message as the invocation's user content but does not store it, nor
	// the turn's state delta, nor pass it to on_user_message, when it
	// answers no call and the invocation has a user message already
	// (_handle_new_message).
	keepMessage := true
	if !nodeRuntime && msg != nil && !joinsTask && !hasFunctionResponse(msg) && firstUserMessage(inv.invocationEvents(), id) != nil {
		keepMessage = false
		inv.userContent = msg
	}
	if resumed && inv.userContent == nil {
		if len(sess.Events()) == 0 {
			return nil, fmt.Errorf("run: session %s has no events to resume", sess.ID)
		}
		inv.userContent = msg
		if msg == nil {
			if inv.userContent = firstUserMessage(inv.invocationEvents(), id); inv.userContent == nil {
				return nil, fmt.Errorf("run: no user message available for resuming invocation %s", id)
			}
		}
	} else if msg == nil && inv.userContent == nil {
		// The node runtime runs an invocation given by id again, on its
		// first user message.
		inv.userContent = firstUserMessage(inv.invocationEvents(), id)
	}
	if msg != nil && keepMessage {
		if err := r.appendUserMessage(ictx, msg, cfg); err != nil {
			// google-adk's node runtime tells on_run_error of a failure in
			// on_user_message or in storing the message.
			if _, nodeRuntime := r.tree.root.(*LlmAgent); nodeRuntime {
				inv.plugins.OnRunError(ictx, err)
			}
			return nil, err
		}
	} else if len(cfg.StateDelta) > 0 && keepMessage {
		ev := session.NewEvent(inv.id, "user", "")
		ev.Actions.StateDelta = maps.Clone(cfg.StateDelta)
		applyCustomMetadata(ev, cfg.CustomMetadata)
		if err := r.cfg.Sessions.AppendEvent(ctx, sess, ev); err != nil {
			return nil, fmt.Errorf("run: storing the state delta: %w", err)
		}
	}
	if resumed {
		inv.states.populate(inv.invocationEvents(), id)
		// A root that wrote no checkpoint did not run: the invocation started
		// at (and paused in) a sub-agent, which the usual routing finds.
		if _, rootStarted := inv.states.ended[r.tree.root.Info().Name]; !rootStarted {
			ictx.agent = findAgentToRun(sess.Events(), r.tree)
		}
		if inv.states.ended[ictx.agent.Info().Name] {
			return nil, nil
		}
	} else {
		ictx.agent = findAgentToRun(sess.Events(), r.tree)
	}
	if _, ok := r.tree.root.(*LlmAgent); ok {
		inv.runs = map[string]int{}
		ictx.nodePath = inv.topNodePath(ictx.agent)
		ictx.node = newNodeRun(&nodeRun{}, ictx.agent.Info().Name, ictx.nodePath)
		// An agent the root task transferred to answers inside the root's
		// task while it is active: its run keeps the task's scope.
		if scope, _, ok := inv.task.get(sess.Events()); ok && strings.HasPrefix(ictx.nodePath, scope+"/") {
			ictx.isolationScope = scope
		}
	}
	return ictx, nil
}

// resolved is cfg with its bounds' defaults filled in and its event count
// made, for a new invocation.
func (cfg RunConfig) resolved() RunConfig {
	cfg.MaxLLMCalls = withDefault(cfg.MaxLLMCalls, DefaultMaxLLMCalls)
	cfg.MaxEvents = withDefault(cfg.MaxEvents, DefaultMaxEvents)
	cfg.MaxFunctionCalls = withDefault(cfg.MaxFunctionCalls, DefaultMaxFunctionCalls)
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.events == nil {
		cfg.events = new(atomic.Int64)
	}
	if cfg.bytes == nil {
		cfg.bytes = &byteBudget{}
	}
	return cfg
}

// withDefault resolves a RunConfig bound: 0 is def; a negative value (no
// limit) stays negative, so that an agent tool's run, which copies the
// resolved RunConfig, has no limit either rather than the default.
func withDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// appendUserMessage passes msg through on_user_message and stores it as
// the user's event of the invocation.
func (r *Runner) appendUserMessage(ictx *InvocationContext, msg *genai.Content, cfg RunConfig) error {
	inv := ictx.inv
	if m, err := inv.plugins.OnUserMessage(ictx, msg); err != nil {
		return err
	} else if m != nil {
		msg = m
	}
	if slices.ContainsFunc(msg.Parts, func(p *genai.Part) bool { return p != nil && p.FunctionCall != nil }) {
		return &MessageError{Message: "User message cannot contain function calls."}
	}
	_, nodeRuntime := r.tree.root.(*LlmAgent)
	if !nodeRuntime && len(msg.Parts) == 0 {
		return &MessageError{Message: "No parts in the new_message."}
	}
	if !nodeRuntime && cfg.SaveInputBlobsAsArtifacts && r.cfg.Artifacts != nil {
		saved, err := r.saveInputBlobs(ictx, msg)
		if err != nil {
			return err
		}
		msg = saved
	}
	inv.userContent = msg
	user := session.NewEvent(inv.id, "user", "")
	user.Content = msg
	if len(cfg.StateDelta) > 0 {
		user.Actions.StateDelta = maps.Clone(cfg.StateDelta)
	}
	applyCustomMetadata(user, cfg.CustomMetadata)
	// While a task waits for the user, the message is the task's.
	if scope, _, ok := inv.task.get(inv.session.Events()); ok {
		user.IsolationScope = scope
	}
	if call := findMatchingFunctionCall(inv.session.Events(), msg); call != nil {
		user.Branch = call.Branch
		if user.IsolationScope == "" {
			user.IsolationScope = call.IsolationScope
		}
	}
	if err := r.cfg.Sessions.AppendEvent(ictx, inv.session, user); err != nil {
		return fmt.Errorf("run: storing the user message: %w", err)
	}
	return nil
}

// saveInputBlobs saves msg's inline data parts as artifacts and returns
// msg with each replaced by a text part naming its artifact (google-adk
// _append_new_message_to_session). No event records the artifacts.
func (r *Runner) saveInputBlobs(ictx *InvocationContext, msg *genai.Content) (*genai.Content, error) {
	inv := ictx.inv
	var out *genai.Content
	for i, p := range msg.Parts {
		if p == nil || p.InlineData == nil {
			continue
		}
		name := fmt.Sprintf("artifact_%s_%d", inv.id, i)
		key := artifact.Key{AppName: inv.appName, UserID: inv.session.UserID, SessionID: inv.session.ID, Name: name}
		if _, err := r.cfg.Artifacts.Save(ictx, key, p); err != nil {
			return nil, fmt.Errorf("run: saving input blob %d as artifact %q: %w", i, name, err)
		}
		if out == nil {
			out = &genai.Content{Role: msg.Role, Parts: slices.Clone(msg.Parts)}
		}
		out.Parts[i] = &genai.Part{Text: fmt.Sprintf("Uploaded file: %s. It is saved into artifacts", name)}
	}
	if out == nil {
		return msg, nil
	}
	return out, nil
}

// resolveInvocationID returns the invocation a run belongs to: the one
// whose calls msg's function responses answer, else the given id ("" for
// a new invocation). As in google-adk 2.13, the node runtime (a root
// LlmAgent) and a resumable app are strict: every response id must answer
// a call of the session (rewound calls excluded), all of one invocation,
// and a given id needs the first response to carry one. A workflow root
// in an app that is not resumable only joins the invocation when the
// responses resolve cleanly, else the message starts a new one.
func (r *Runner) resolveInvocationID(events []*session.Event, msg *genai.Content, given string) (string, error) {
	if msg == nil {
		return given, nil
	}
	_, nodeRuntime := r.tree.root.(*LlmAgent)
	strict := nodeRuntime || r.cfg.Resumable
	if strict && (given != "" || !nodeRuntime) {
		// google-adk _resolve_invocation_id.
		for _, p := range msg.Parts {
			if p != nil && p.FunctionResponse != nil {
				if p.FunctionResponse.ID == "" {
					return "", &MessageError{Message: "Function response id is required to resume an invocation."}
				}
				break
			}
		}
	}
	id, err := resolveFromResponses(events, msg)
	if err != nil {
		if !strict {
			return given, nil
		}
		return "", err
	}
	if id == "" {
		return given, nil
	}
	if given != "" && given != id {
		r.cfg.Logger.Warn("the given invocation id is ignored: the message answers a call of another invocation", "given", given, "invocation", id)
	}
	return id, nil
}

// resolveFromResponses returns the invocation of the calls msg's function
// responses (those with ids) answer, "" when none has an id (google-adk
// _resolve_invocation_id_from_fr).
func resolveFromResponses(events []*session.Event, msg *genai.Content) (string, error) {
	ids := map[string]bool{}
	for _, p := range msg.Parts {
		if p != nil && p.FunctionResponse != nil && p.FunctionResponse.ID != "" {
			ids[p.FunctionResponse.ID] = true
		}
	}
	if len(ids) == 0 {
		return "", nil
	}
	events = contents.LiveEvents(events)
	found := map[string]bool{}
	for i := len(events) - 1; i >= 0 && len(ids) > 0; i-- {
		for _, fc := range events[i].FunctionCalls() {
			if ids[fc.ID] {
				found[events[i].InvocationID] = true
				delete(ids, fc.ID)
			}
		}
	}
	if len(ids) > 0 {
		return "", &MessageError{Message: fmt.Sprintf("Function call not found for function response ids: %s. Ensure each function response ID matches an existing function call in the session history.", pySetRepr(ids))}
	}
	if len(found) > 1 {
		return "", &MessageError{Message: fmt.Sprintf("Function responses resolve to multiple invocations: %s. All function responses in a single message must belong to the same invocation.", pySetRepr(found))}
	}
	for id := range found {
		return id, nil
	}
	return "", nil
}

// hasResumeInputs reports whether msg answers calls: a function response
// with an id (google-adk _extract_resume_inputs).
func hasResumeInputs(msg *genai.Content) bool {
	return slices.ContainsFunc(msg.Parts, func(p *genai.Part) bool {
		return p != nil && p.FunctionResponse != nil && p.FunctionResponse.ID != ""
	})
}

// pySetRepr formats a set of strings as Python prints one (its order is
// Python's hash order; sorted here).
func pySetRepr(set map[string]bool) string {
	reprs := make([]string, 0, len(set))
	for _, s := range slices.Sorted(maps.Keys(set)) {
		reprs = append(reprs, pyfmt.Repr(s))
	}
	return "{" + strings.Join(reprs, ", ") + "}"
}

// firstEventOf returns the index of the first event of invocation id, or
// len(events) when it has none.
func firstEventOf(events []*session.Event, id string) int {
	for i, ev := range events {
		if ev.InvocationID == id {
			return i
		}
	}
	return len(events)
}

// firstUserMessage returns the message that started the invocation: its
// first user event with content that is not a function response.
func firstUserMessage(events []*session.Event, invocationID string) *genai.Content {
	for _, ev := range events {
		if ev.InvocationID != invocationID || ev.Author != "user" || ev.Content == nil || len(ev.Content.Parts) == 0 {
			continue
		}
		if len(ev.FunctionResponses()) == 0 {
			return ev.Content
		}
	}
	return nil
}

// execWithPlugins runs the agent between the before-run and after-run
// plugin hooks, passing each event through on_event and storing it. A
// failure is reported to on_run_error; after_run runs only when the run did
// not fail, including when the caller stopped early.
func (r *Runner) execWithPlugins(ictx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		plugins := ictx.inv.plugins
		err := r.runWithPlugins(ictx, yield)
		if err != nil && !errors.Is(err, errStopped) && ictx.Err() != nil {
			r.abort(ictx, yield)
			return
		}
		if errors.Is(err, errStopped) {
			if err := plugins.AfterRun(ictx); err != nil {
				r.cfg.Logger.Error("after_run failed after the caller stopped", "invocation", ictx.inv.id, "err", err)
				return
			}
			// google-adk's node runtime (an LlmAgent root) counts a caller
			// that stopped early as a completed run and compacts.
			if _, nodeRuntime := r.tree.root.(*LlmAgent); nodeRuntime {
				if err := r.compactAfterInvocation(ictx); err != nil {
					// Told to on_run_error; the caller has gone.
					plugins.OnRunError(ictx, err)
					r.cfg.Logger.Error("post-invocation compaction failed after the caller stopped", "invocation", ictx.inv.id, "err", err)
				}
			}
			return
		}
		if err == nil {
			err = plugins.AfterRun(ictx)
			if err == nil {
				err = r.compactAfterInvocation(ictx)
				if err == nil {
					return
				}
				// google-adk's legacy path (a workflow root) compacts
				// after its plugin wrapper, so on_run_error is not told.
				if _, nodeRuntime := r.tree.root.(*LlmAgent); !nodeRuntime {
					yield(nil, err)
					return
				}
			}
		}
		plugins.OnRunError(ictx, err)
		yield(nil, err)
	}
}

// abort seals an invocation whose context ended (abort.go): it stores and
// yields the sealing events, runs after_run, as google-adk does for an
// aborted run, and ends with the context's error. The sealing outlives
// the cancelled context, bounded by the plugins' and store's own limits.
func (r *Runner) abort(ictx *InvocationContext, yield func(*session.Event, error) bool) {
	cause := context.Cause(ictx)
	sctx := ictx.withContext(context.WithoutCancel(ictx.Context))
	inv := sctx.inv
	for _, ev := range abortEvents(inv.invocationEvents(), inv.id, r.tree.root.Info().Name, sctx.branch) {
		out, err := r.processAndAppend(sctx, ev)
		if err != nil {
			r.cfg.Logger.Error("sealing an aborted invocation failed", "invocation", inv.id, "err", err)
			yield(nil, fmt.Errorf("run: aborted (%w), and sealing the invocation failed: %w", cause, err))
			return
		}
		if !yield(out, nil) {
			return
		}
	}
	if err := inv.plugins.AfterRun(sctx); err != nil {
		r.cfg.Logger.Error("after_run failed after an abort", "invocation", inv.id, "err", err)
	}
	yield(nil, fmt.Errorf("run: aborted: %w", cause))
}

// compactAfterInvocation runs post-invocation event compaction, after the
// invocation's events were yielded (google-adk
// _run_post_invocation_compaction). A summarizer's failure does not fail
// the turn; having no summarizer, or the store refusing the summary, does.
func (r *Runner) compactAfterInvocation(ictx *InvocationContext) error {
	if r.compactor == nil {
		return nil
	}
	return r.compactor.afterInvocation(ictx, r.cfg.Sessions, ictx.inv.session)
}

// errStopped reports that the caller stopped iterating.
var errStopped = errors.New("caller stopped")

// runWithPlugins yields the run's events; it returns errStopped when yield
// returned false, or the error that ended the run.
func (r *Runner) runWithPlugins(ictx *InvocationContext, yield func(*session.Event, error) bool) error {
	emit := func(ev *session.Event) error {
		if err := ictx.countEvent(ev); err != nil {
			return err
		}
		out, err := r.processAndAppend(ictx, ev)
		if err != nil {
			return err
		}
		if !yield(out, nil) {
			return errStopped
		}
		// The caller aborted the run: stop here (execWithPlugins seals).
		return ictx.Err()
	}
	early, err := ictx.inv.plugins.BeforeRun(ictx)
	if err != nil {
		return err
	}
	if early != nil {
		ev := session.NewEvent(ictx.inv.id, "model", "")
		ev.Content = early
		return emit(ev)
	}
	if la, ok := ictx.agent.(*LlmAgent); ok && ictx.agent == r.tree.root && la.cfg.Mode == ModeTask {
		return r.runRootTask(ictx, la, emit, yield)
	}
	for ev, err := range runAgent(ictx, ictx.agent) {
		if err != nil {
			return r.recordFailure(ictx, err, yield)
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// runRootTask runs a root LlmAgent in task mode as google-adk's node
// runtime does: in the isolation scope of its node path (so the user's
// replies join it while it waits), until finish_task is answered; the
// terminal event then carries the task result as its output.
func (r *Runner) runRootTask(ictx *InvocationContext, la *LlmAgent, emit emitter, yield func(*session.Event, error) bool) error {
	ictx.isolationScope = ictx.nodePath
	var runErr error
	runTask(ictx, la, func(ev *session.Event, err error) bool {
		if err != nil {
			runErr = r.recordFailure(ictx, err, yield)
			return false
		}
		if err := emit(ev); err != nil {
			runErr = err
			return false
		}
		return true
	})
	return runErr
}

// recordFailure handles an agent's failure. With an LlmAgent at the root
// (google-adk 2.13's node runtime) the failure is first recorded as an
// error event of the failing agent's run; a workflow agent at the root only
// raises, as google-adk's legacy path does, and so does a transfer that
// cannot be carried out.
func (r *Runner) recordFailure(ictx *InvocationContext, err error, yield func(*session.Event, error) bool) error {
	var failed *agentRunError
	var transfer *TransferError
	_, nodeRuntime := r.tree.root.(*LlmAgent)
	if !nodeRuntime || !errors.As(err, &failed) || errors.As(err, &transfer) || ictx.Err() != nil {
		return err
	}
	// google-adk 2.13's node runtime authors the error event like every
	// event it makes itself: with the author of the last event the failing
	// run yielded, or the one its parent run had when it started (a model
	// or instruction error of an agent reached by transfer is the
	// transferring agent's; a tool error comes after the agent's call).
	out, aerr := r.processAndAppend(ictx, failureEvent(ictx.inv.id, failed, err))
	if aerr != nil {
		r.cfg.Logger.Error("storing the error event failed", "invocation", ictx.inv.id, "err", aerr)
		return err
	}
	if !yield(out, nil) {
		return errStopped
	}
	return err
}

// failureEvent is the error event google-adk 2.13's node runtime records
// for a failed run: no content, the error's code and message, authored and
// placed as the failing run's events were (agentRunError).
func failureEvent(invocationID string, failed *agentRunError, err error) *session.Event {
	ev := session.NewEvent(invocationID, failed.author, failed.branch)
	ev.IsolationScope = failed.scope
	ev.ErrorCode, ev.ErrorMessage = errorEventFields(err)
	if failed.nodePath != "" {
		ev.NodeInfo = &session.NodeInfo{Path: failed.nodePath}
	}
	return ev
}

// processAndAppend applies run metadata and on_event, then stores the
// event unless it is partial. A replacement from on_event overrides the
// fields it sets; the original keeps its identity (google-adk
// Runner._get_output_event).
func (r *Runner) processAndAppend(ictx *InvocationContext, ev *session.Event) (*session.Event, error) {
	applyCustomMetadata(ev, ictx.inv.config.CustomMetadata)
	repl, err := ictx.inv.plugins.OnEvent(ictx, ev)
	if err != nil {
		return nil, err
	}
	if repl != nil && repl != ev {
		applyCustomMetadata(repl, ictx.inv.config.CustomMetadata)
		merged := mergeEvent(ev, repl)
		if err := ictx.countReplacement(ev, merged); err != nil {
			return nil, err
		}
		ev = merged
	}
	if !ev.Partial {
		if err := r.cfg.Sessions.AppendEvent(ictx, ictx.inv.session, ev); err != nil {
			return nil, fmt.Errorf("run: storing event of %q: %w", ev.Author, err)
		}
	}
	return ev, nil
}

// mergeEvent returns a copy of orig with every field repl sets (non-zero)
// taken from repl, except the event's id, invocation and time.
func mergeEvent(orig, repl *session.Event) *session.Event {
	out := *orig
	mergeStruct(reflect.ValueOf(&out).Elem(), reflect.ValueOf(repl).Elem())
	out.ID, out.InvocationID, out.Timestamp = orig.ID, orig.InvocationID, orig.Timestamp
	return &out
}

// mergeStruct sets dst's fields to src's non-zero ones, looking into
// embedded structs.
func mergeStruct(dst, src reflect.Value) {
	for i := range src.NumField() {
		f := src.Field(i)
		if src.Type().Field(i).Anonymous && f.Kind() == reflect.Struct {
			mergeStruct(dst.Field(i), f)
			continue
		}
		if !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
}

// InternalMetadataPrefix starts the custom_metadata keys only the engine
// may write (google-adk's INTERNAL_METADATA_PREFIX): RunConfig's are
// dropped.
const InternalMetadataPrefix = "__adk_internal_"

// applyCustomMetadata merges the run's custom metadata, minus internal
// keys, under ev's own (google-adk _apply_run_config_custom_metadata).
func applyCustomMetadata(ev *session.Event, md map[string]any) {
	if len(md) == 0 {
		return
	}
	merged := make(map[string]any, len(md)+len(ev.CustomMetadata))
	for k, v := range md {
		if !strings.HasPrefix(k, InternalMetadataPrefix) {
			merged[k] = v
		}
	}
	if len(merged) == 0 {
		return
	}
	maps.Copy(merged, ev.CustomMetadata)
	ev.CustomMetadata = merged
}

// findMatchingFunctionCall returns the event that made the call answered by
// msg's first function response, searching events from the end.
func findMatchingFunctionCall(events []*session.Event, msg *genai.Content) *session.Event {
	var id string
	for _, p := range msg.Parts {
		if p != nil && p.FunctionResponse != nil {
			id = p.FunctionResponse.ID
			break
		}
	}
	if id == "" {
		return nil
	}
	for i := len(events) - 1; i >= 0; i-- {
		for _, fc := range events[i].FunctionCalls() {
			if fc.ID == id {
				return events[i]
			}
		}
	}
	return nil
}

// findAgentToRun picks the agent that answers the latest user message
// (google-adk 2.13 _agent_router.find_agent_to_run): the author of a call
// the message answers; else, scanning back, the target of a transfer that
// has not answered yet, the root, or the last agent that replied if it can
// transfer back up the tree; else the root. An agent inside a task
// delegation is replaced by the agent that delegated it. Rewound events
// take no part: a rewound turn's agent does not answer the next one.
func findAgentToRun(events []*session.Event, t *tree) Agent {
	events = contents.LiveEvents(events)
	if n := len(events); n > 0 && events[n-1].Content != nil && !lastReplyAborted(events) {
		if call := findMatchingFunctionCall(events[:n-1], events[n-1].Content); call != nil {
			if a := t.find(call.Author); a != nil {
				return resolveTaskDelegator(a, t)
			}
		}
	}
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		if ev.Author == "user" || isAbortEvent(ev) || ev.Actions.AgentState != nil || ev.Actions.EndOfAgent {
			continue
		}
		if ev.ErrorCode != "" && (ev.Content == nil || len(ev.Content.Parts) == 0) {
			continue
		}
		if target := ev.Actions.TransferToAgent; target != "" {
			if src, ok := t.find(ev.Author).(*LlmAgent); ok {
				for _, cand := range src.transferTargetsIn(t) {
					if cand.Info().Name == target && transferableAcrossTree(cand, t) {
						return cand
					}
				}
			}
		}
		if ev.Author == t.root.Info().Name {
			return t.root
		}
		a := t.find(ev.Author)
		if a == nil {
			continue
		}
		if transferableAcrossTree(a, t) {
			return resolveTaskDelegator(a, t)
		}
	}
	return t.root
}

// lastReplyAborted reports whether the newest event that is not the
// user's seals an aborted invocation: a function response in the user's
// message then answers a call the abort already answered, and routes
// nowhere in particular.
func lastReplyAborted(events []*session.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Author != "user" {
			return isAbortEvent(events[i])
		}
	}
	return false
}

// transferableAcrossTree reports whether a and all its ancestors are
// LlmAgents allowed to transfer to their parents.
func transferableAcrossTree(a Agent, t *tree) bool {
	for a != nil {
		la, ok := a.(*LlmAgent)
		if !ok || la.cfg.DisallowTransferToParent {
			return false
		}
		a = t.parent[a]
	}
	return true
}
