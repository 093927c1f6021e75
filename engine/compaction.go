package engine

// Event compaction (google-adk EventsCompactionConfig, apps/compaction.py):
// older events of a session are replaced, in model requests, by a summary
// carried in a compaction event. Two triggers exist. The sliding window runs
// after an invocation and summarizes the invocations that completed since
// the last compaction (with some overlap). The token threshold runs after an
// invocation and before every model request, and summarizes all but the
// newest events once the prompt grew past a number of tokens.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/contents"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// CompactionConfig turns on event compaction for a Runner (google-adk
// EventsCompactionConfig). The sliding-window pair (CompactionInterval,
// OverlapSize) and the token-threshold pair (TokenThreshold,
// EventRetentionSize) are each set together or not at all, and at least one
// pair is set. A nil field is unset; Go 1.26's new(2) makes a value.
type CompactionConfig struct {
	// Summarizer turns a range of events into one compaction event. Nil
	// means an LLMSummarizer over the model of the first agent that needs
	// one (the root after an invocation, the agent about to call its model
	// before a request), kept from then on, as google-adk does.
	Summarizer Summarizer
	// CompactionInterval is the number of new invocations, completed since
	// the end of the last compaction, that triggers a sliding-window
	// compaction after an invocation. Greater than 0.
	CompactionInterval *int
	// OverlapSize is the number of invocations before the new ones that a
	// sliding-window summary covers again, for continuity. At least 0.
	OverlapSize *int
	// TokenThreshold triggers a compaction, after an invocation and before
	// a model request, once the latest prompt token count reported by the
	// model (or estimated at four characters a token) reaches it. Greater
	// than 0.
	TokenThreshold *int
	// EventRetentionSize is the number of newest events a token-threshold
	// compaction leaves uncompacted. At least 0.
	EventRetentionSize *int
}

// Validate reports the first problem with the configuration, with
// google-adk's rules.
func (c *CompactionConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    *int
		min  int
	}{
		{"CompactionInterval", c.CompactionInterval, 1},
		{"OverlapSize", c.OverlapSize, 0},
		{"TokenThreshold", c.TokenThreshold, 1},
		{"EventRetentionSize", c.EventRetentionSize, 0},
	} {
		if f.v != nil && *f.v < f.min {
			return fmt.Errorf("compaction: %s must be at least %d, got %d", f.name, f.min, *f.v)
		}
	}
	token, window := c.TokenThreshold != nil, c.CompactionInterval != nil
	switch {
	case token != (c.EventRetentionSize != nil):
		return errors.New("compaction: TokenThreshold and EventRetentionSize must be set together")
	case window != (c.OverlapSize != nil):
		return errors.New("compaction: CompactionInterval and OverlapSize must be set together")
	case !token && !window:
		return errors.New("compaction: at least one trigger must be configured: TokenThreshold with EventRetentionSize, or CompactionInterval with OverlapSize")
	}
	return nil
}

// Summarizer summarizes events into a compaction event (google-adk
// BaseEventsSummarizer). The event carries Actions.Compaction with the
// events' first and last timestamps and the summary; nil, nil means no
// compaction.
type Summarizer interface {
	Summarize(ctx context.Context, events []*session.Event) (*session.Event, error)
}

// compactor runs compaction for a Runner; its configuration never changes.
type compactor struct {
	cfg  CompactionConfig
	root Agent
	log  *slog.Logger

	mu sync.Mutex
	// summarizer is cfg.Summarizer, or else the LLMSummarizer of the first
	// agent that needed one (summarizerFor).
	summarizer Summarizer
}

// newCompactor validates cfg.
func newCompactor(cfg CompactionConfig, root Agent, log *slog.Logger) (*compactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &compactor{cfg: cfg, root: root, log: log, summarizer: cfg.Summarizer}, nil
}

// summarizerFor returns the summarizer to use when an agent whose model
// is m (nil: none) needs one: the configured one, else an LLMSummarizer
// over the model of the first agent that needed one, kept from then on
// (google-adk _ensure_compaction_summarizer, which stores it in the app's
// config). After an invocation that is the root; before a model request,
// the agent about to call its model.
func (c *compactor) summarizerFor(agent string, m model.Model) (Summarizer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.summarizer != nil {
		return c.summarizer, nil
	}
	if m == nil {
		return nil, &NoSummarizerModelError{Agent: agent}
	}
	c.summarizer = NewLLMSummarizer(m, "")
	return c.summarizer, nil
}

// rootModel is the root's model, if it is an LlmAgent with one.
func (c *compactor) rootModel() model.Model {
	if la, ok := c.root.(*LlmAgent); ok {
		return la.cfg.Model
	}
	return nil
}

func (c *compactor) tokenThresholdSet() bool {
	return c.cfg.TokenThreshold != nil && c.cfg.EventRetentionSize != nil
}

func (c *compactor) slidingWindowSet() bool {
	return c.cfg.CompactionInterval != nil && c.cfg.OverlapSize != nil
}

// afterInvocation is google-adk Runner._run_post_invocation_compaction:
// a summarizer that fails is logged (runAfterInvocation goes on with the
// uncompacted history) and a summary made while a newer turn changed the
// session is discarded, but any other failure, such as a root that has no
// model to summarize with (NoSummarizerModelError) or a summary the store
// refused, is returned: google-adk raises it out of run_async.
func (c *compactor) afterInvocation(ctx context.Context, svc session.Service, sess *session.Session) error {
	err := c.runAfterInvocation(ctx, svc, sess)
	if errors.Is(err, session.ErrStale) {
		c.log.Info("discarding stale post-invocation compaction; a newer turn updated the session while summarization was running", "session", sess.ID)
		return nil
	}
	return err
}

// NoSummarizerModelError is google-adk's ValueError when compaction is
// due, no CompactionConfig.Summarizer is set, and the agent that would
// lend its model (the root, after an invocation) is not an LlmAgent. Set
// CompactionConfig.Summarizer to compact under a workflow root.
type NoSummarizerModelError struct {
	// Agent is the agent that had no model.
	Agent string
}

// Error is google-adk's message, which the turn's error carries.
func (e *NoSummarizerModelError) Error() string {
	return "No LlmAgent model available for event compaction summarizer."
}

// ErrorCode makes the error carry google-adk's exception name.
func (*NoSummarizerModelError) ErrorCode() string { return "ValueError" }

// runAfterInvocation is google-adk _run_compaction_for_sliding_window: a
// token-threshold compaction when configured and triggered, else a
// sliding-window one.
func (c *compactor) runAfterInvocation(ctx context.Context, svc session.Service, sess *session.Session) error {
	// Events of task delegations (isolation scopes) stay out of the
	// session's summary, so a task's private turns do not leak into it.
	events := inIsolationScope(contents.ApplyRewinds(sess.Events()), "")
	if len(events) == 0 {
		return nil
	}
	if c.tokenThresholdSet() {
		done, err := c.compactForTokenThreshold(ctx, svc, sess, c.rootModel(), "", "", "")
		if err != nil || done {
			return err
		}
	}
	if !c.slidingWindowSet() {
		return nil
	}
	toCompact := slidingWindowRange(events, *c.cfg.CompactionInterval, *c.cfg.OverlapSize)
	if len(toCompact) == 0 || !rangeWorthCompacting(events, toCompact) {
		return nil
	}
	ev, err := c.summarize(ctx, c.root.Info().Name, c.rootModel(), events, toCompact, "sliding_window")
	if ev == nil || err != nil {
		return err
	}
	if err := svc.AppendEvent(ctx, sess, ev); err != nil {
		return fmt.Errorf("storing the sliding-window compaction: %w", err)
	}
	return nil
}

// slidingWindowRange returns the events a sliding-window compaction
// summarizes, or nil: once interval invocations ended after the last
// compaction, the invocations from overlap before the first new one to the
// last new one, without compaction events, cut to their longest
// self-contained prefix.
func slidingWindowRange(events []*session.Event, interval, overlap int) []*session.Event {
	lastEnd := 0.0
	for _, e := range slices.Backward(events) {
		if c := e.Actions.Compaction; c != nil && c.EndTimestamp != 0 {
			lastEnd = c.EndTimestamp
			break
		}
	}
	var order []string // invocations by first appearance
	latest := map[string]float64{}
	for _, e := range events {
		if e.InvocationID == "" || e.Actions.Compaction != nil {
			continue
		}
		ts := session.TimeToFloat(e.Timestamp)
		prev, seen := latest[e.InvocationID]
		if !seen {
			order = append(order, e.InvocationID)
		}
		latest[e.InvocationID] = max(prev, ts)
	}
	var fresh []string
	for _, id := range order {
		if latest[id] > lastEnd { // false for a NaN end, as in google-adk
			fresh = append(fresh, id)
		}
	}
	if len(fresh) < interval {
		return nil
	}
	endID := fresh[len(fresh)-1]
	startID := order[max(0, slices.Index(order, fresh[0])-overlap)]
	last := -1
	for i, e := range slices.Backward(events) {
		if e.InvocationID == endID {
			last = i
			break
		}
	}
	first := slices.IndexFunc(events, func(e *session.Event) bool { return e.InvocationID == startID })
	if last < 0 || first < 0 || first > last {
		return nil
	}
	var out []*session.Event
	for _, e := range events[first : last+1] {
		if e.Actions.Compaction == nil {
			out = append(out, e)
		}
	}
	return longestSelfContainedPrefix(out, events)
}

// compactForTokenThreshold is google-adk
// _run_compaction_for_token_threshold_config: when the latest prompt token
// count for agentName on branch reaches the threshold, the events since the
// last compaction except the newest EventRetentionSize are summarized
// (with the previous summary first, so the new one supersedes it) and the
// summary is stored. Only events of isolation scope ("" for none) count
// and are summarized, and the summary belongs to that scope, so a task
// delegation's events never leak into another scope's history or out of
// it. It reports whether it stored a summary.
func (c *compactor) compactForTokenThreshold(ctx context.Context, svc session.Service, sess *session.Session, m model.Model, agentName, branch, scope string) (bool, error) {
	if !c.tokenThresholdSet() {
		return false, nil
	}
	rewound := contents.ApplyRewinds(sess.Events())
	events := inIsolationScope(rewound, scope)
	count, ok := latestPromptTokenCount(rewound, branch, agentName, scope)
	if !ok || count < *c.cfg.TokenThreshold {
		return false, nil
	}
	toCompact := tokenThresholdRange(events, *c.cfg.EventRetentionSize)
	if len(toCompact) == 0 || !rangeWorthCompacting(events, toCompact) {
		return false, nil
	}
	ev, err := c.summarize(ctx, cmp.Or(agentName, c.root.Info().Name), m, events, toCompact, "token_threshold")
	if ev == nil || err != nil {
		return false, err
	}
	ev.IsolationScope = scope
	if err := svc.AppendEvent(ctx, sess, ev); err != nil {
		return false, fmt.Errorf("storing the token-threshold compaction: %w", err)
	}
	return true, nil
}

// summarize asks the summarizer (summarizerFor) for a compaction of
// toCompact. A summarizer that fails is logged and yields nil, nil: the
// full history is still usable. Having no summarizer at all is an error
// (google-adk's _ensure_compaction_summarizer raises, outside the guard
// around the summarizer's call).
func (c *compactor) summarize(ctx context.Context, agent string, m model.Model, events, toCompact []*session.Event, trigger string) (*session.Event, error) {
	sum, err := c.summarizerFor(agent, m)
	if err != nil {
		return nil, err
	}
	ev, err := sum.Summarize(ctx, toCompact)
	if err != nil {
		c.log.Warn("event compaction failed; continuing with the uncompacted history", "trigger", trigger, "err", err)
		return nil, nil
	}
	if ev == nil {
		return nil, nil
	}
	if saved := promptCharsSaved(events, ev); saved < 0 {
		c.log.Info("compaction grew the request: the summary is larger than what it replaced", "trigger", trigger, "chars", -saved, "events", len(toCompact))
	}
	return ev, nil
}

// latestPromptTokenCount is google-adk _latest_prompt_token_count: the
// prompt token count of the latest event of the isolation scope (by
// agentName, when set) since that scope's latest compaction, else an
// estimate from the contents a request in that scope would carry. A zero
// count counts as unreported.
func latestPromptTokenCount(events []*session.Event, branch, agentName, scope string) (int, bool) {
	for _, e := range slices.Backward(events) {
		if e.IsolationScope != scope {
			continue
		}
		if e.Actions.Compaction != nil {
			break // earlier counts describe a prompt the summary replaced
		}
		if u := e.UsageMetadata; u != nil && u.PromptTokenCount != 0 && (agentName == "" || e.Author == agentName) {
			return int(u.PromptTokenCount), true
		}
	}
	total := 0
	for _, c := range contents.Build(events, contents.Options{AgentName: agentName, Branch: branch, IsolationScope: scope}) {
		total += countContentChars(c)
	}
	if total <= 0 {
		return 0, false
	}
	return total / 4, true // about four characters a token
}

// inIsolationScope returns the events of one isolation scope ("" for the
// events of no task delegation).
func inIsolationScope(events []*session.Event, scope string) []*session.Event {
	var out []*session.Event
	for _, e := range events {
		if e.IsolationScope == scope {
			out = append(out, e)
		}
	}
	return out
}

// countContentChars is google-adk _count_chars_in_content: text, function
// names, and args and responses as Python's json.dumps writes them.
func countContentChars(c *genai.Content) int {
	n := 0
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		n += utf8.RuneCountInString(p.Text)
		if fc := p.FunctionCall; fc != nil {
			n += utf8.RuneCountInString(fc.Name)
			if len(fc.Args) > 0 {
				n += pyJSONDumpsLen(fc.Args)
			}
		}
		if fr := p.FunctionResponse; fr != nil {
			n += utf8.RuneCountInString(fr.Name)
			if len(fr.Response) > 0 {
				n += pyJSONDumpsLen(fr.Response)
			}
		}
	}
	return n
}

// pyJSONDumpsLen is len(json.dumps(v)) in Python, whose default
// ensure_ascii escapes every character from U+007F as \uXXXX (a surrogate
// pair above U+FFFF). A value JSON cannot encode counts as its str().
func pyJSONDumpsLen(v any) int {
	s, err := pyfmt.JSONDumps(v)
	if err != nil {
		return utf8.RuneCountInString(pyfmt.Str(v))
	}
	n := 0
	for _, r := range s {
		switch {
		case r < 0x7f:
			n++
		case r <= 0xffff:
			n += 6
		default:
			n += 12
		}
	}
	return n
}

// tokenThresholdRange is google-adk _events_to_compact_for_token_threshold:
// the events after the latest compaction's end, without the newest
// retention ones (moving the split earlier so no kept response loses its
// call), cut to their longest self-contained prefix, and preceded by the
// previous summary as a seed event at its start.
func tokenThresholdRange(events []*session.Event, retention int) []*session.Event {
	latest := contents.LatestCompaction(events)
	lastEnd := 0.0
	if latest != nil {
		lastEnd = latest.Actions.Compaction.EndTimestamp
	}
	var candidates []*session.Event
	for _, e := range events {
		if e.Actions.Compaction == nil && session.TimeToFloat(e.Timestamp) > lastEnd {
			candidates = append(candidates, e)
		}
	}
	if len(candidates) <= retention {
		return nil
	}
	toCompact := candidates
	if retention > 0 {
		toCompact = candidates[:safeTokenCompactionSplit(candidates, retention)]
	}
	toCompact = longestSelfContainedPrefix(toCompact, events)
	if len(toCompact) == 0 {
		return nil
	}
	if latest == nil || latest.Actions.Compaction.CompactedContent == nil {
		return toCompact
	}
	seed := &session.Event{
		ID:             session.NewEventID(),
		InvocationID:   session.NewEventID(),
		Author:         "model",
		Branch:         latest.Branch,
		IsolationScope: latest.IsolationScope,
		Timestamp:      session.FloatToTime(latest.Actions.Compaction.StartTimestamp),
	}
	seed.Content = latest.Actions.Compaction.CompactedContent
	return append([]*session.Event{seed}, toCompact...)
}

// safeTokenCompactionSplit is google-adk
// _safe_token_compaction_split_index: the latest split at or before
// len(candidates)-retention after which every function response's call is
// kept too; 0 when there is none.
func safeTokenCompactionSplit(candidates []*session.Event, retention int) int {
	initial := len(candidates) - retention
	if initial <= 0 {
		return 0
	}
	unmatched := map[string]bool{}
	for i, e := range slices.Backward(candidates) {
		for id := range responseIDs(e) {
			unmatched[id] = true
		}
		for id := range callIDs(e) {
			delete(unmatched, id)
		}
		if len(unmatched) == 0 && i <= initial {
			return i
		}
	}
	return 0
}

// longestSelfContainedPrefix is google-adk _longest_self_contained_prefix:
// the longest prefix of events that leaves no function call, tool
// confirmation or credential request open. When that is not all of them
// and the cut falls inside one invocation, calls that provably can never be
// answered are ignored and the longer prefix, if any, is taken.
func longestSelfContainedPrefix(events, all []*session.Event) []*session.Event {
	pass := func(dead map[string]bool) int {
		open := map[string]bool{}
		safe := 0
		for i, e := range events {
			for id := range responseIDs(e) {
				delete(open, id)
			}
			for id := range callIDs(e) {
				if !dead[id] {
					open[id] = true
				}
			}
			for id := range requestedIDs(e) {
				if !dead[id] {
					open[id] = true
				}
			}
			if len(open) == 0 {
				safe = i + 1
			}
		}
		return safe
	}
	safe := pass(nil)
	if safe == len(events) || all == nil {
		return events[:safe]
	}
	if safe > 0 && events[safe-1].InvocationID != events[safe].InvocationID {
		return events[:safe]
	}
	newest := ""
	for _, e := range slices.Backward(all) {
		if e.InvocationID != "" && e.Actions.Compaction == nil {
			newest = e.InvocationID
			break
		}
	}
	dead := provablyDeadCallIDs(events, all, newest)
	if len(dead) == 0 {
		return events[:safe]
	}
	return events[:max(safe, pass(dead))]
}

// clientFunctionCallNames are google-adk's synthetic human-in-the-loop calls.
var clientFunctionCallNames = []string{"adk_request_credential", "adk_request_confirmation", "adk_request_input"}

// provablyDeadCallIDs is google-adk _provably_dead_call_ids: calls opened
// in events, outside the newest invocation, that no response anywhere in
// the session answers and that are not long-running calls (other than
// synthetic ones of older invocations) or pending requests of the newest
// invocation.
func provablyDeadCallIDs(events, all []*session.Event, newest string) map[string]bool {
	protected, answered := map[string]bool{}, map[string]bool{}
	for _, e := range all {
		newestOrUnscoped := e.InvocationID == "" || e.InvocationID == newest
		if len(e.LongRunningToolIDs) > 0 {
			synthetic := map[string]bool{}
			if !newestOrUnscoped {
				for _, fc := range e.FunctionCalls() {
					if fc.ID != "" && slices.Contains(clientFunctionCallNames, fc.Name) {
						synthetic[fc.ID] = true
					}
				}
			}
			for _, id := range e.LongRunningToolIDs {
				if !synthetic[id] {
					protected[id] = true
				}
			}
		}
		if newestOrUnscoped {
			for id := range requestedIDs(e) {
				protected[id] = true
			}
		}
		pending := map[string]bool{}
		for id := range requestedIDs(e) {
			pending[id] = true
		}
		for id := range responseIDs(e) {
			if !pending[id] {
				answered[id] = true
			}
		}
	}
	dead := map[string]bool{}
	for _, e := range events {
		if newest != "" && e.InvocationID == newest {
			continue
		}
		for id := range callIDs(e) {
			if !protected[id] && !answered[id] {
				dead[id] = true
			}
		}
	}
	return dead
}

// callIDs yields the event's non-empty function call ids.
func callIDs(e *session.Event) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, fc := range e.FunctionCalls() {
			if fc.ID != "" && !yield(fc.ID) {
				return
			}
		}
	}
}

// responseIDs yields the event's non-empty function response ids.
func responseIDs(e *session.Event) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, fr := range e.FunctionResponses() {
			if fr.ID != "" && !yield(fr.ID) {
				return
			}
		}
	}
}

// requestedIDs yields the call ids of the event's tool confirmation and
// credential requests.
func requestedIDs(e *session.Event) func(func(string) bool) {
	return func(yield func(string) bool) {
		for id := range e.Actions.RequestedToolConfirmations {
			if !yield(id) {
				return
			}
		}
		for id := range e.Actions.RequestedAuthConfigs {
			if !yield(id) {
				return
			}
		}
	}
}

// rangeWorthCompacting is google-adk _is_range_worth_compacting: whether an
// empty summary of toCompact would remove more from the request than the
// latest summary's size, the best guess of the next summary's size.
func rangeWorthCompacting(events, toCompact []*session.Event) bool {
	start := session.TimeToFloat(toCompact[0].Timestamp)
	end := start
	for _, e := range toCompact {
		ts := session.TimeToFloat(e.Timestamp)
		start, end = min(start, ts), max(end, ts)
	}
	weightless := &session.Event{ID: session.NewEventID(), InvocationID: session.NewEventID(), Author: "model", Timestamp: time.Now()}
	weightless.Actions.Compaction = &session.EventCompaction{StartTimestamp: start, EndTimestamp: end, CompactedContent: &genai.Content{Role: "model", Parts: []*genai.Part{}}}
	previous := 0
	if latest := contents.LatestCompaction(events); latest != nil {
		previous = serializedSize([]*session.Event{latest})
	}
	return promptCharsSaved(events, weightless) > previous
}

// promptCharsSaved is google-adk _prompt_chars_saved: how much smaller the
// request's history gets when compaction is appended to events (negative
// when it grows).
func promptCharsSaved(events []*session.Event, compaction *session.Event) int {
	before := contents.ProcessCompactionEvents(events, "")
	after := contents.ProcessCompactionEvents(slices.Concat(events, []*session.Event{compaction}), "")
	return serializedSize(before) - serializedSize(after)
}

// serializedSize is google-adk _serialized_size: the summed length of the
// contents the events contribute to a request (a compaction's summary for
// a compaction event) as pydantic's model_dump_json(exclude_none=True)
// writes them.
func serializedSize(events []*session.Event) int {
	n := 0
	for _, e := range events {
		c := e.Content
		if e.Actions.Compaction != nil && e.Actions.Compaction.CompactedContent != nil {
			c = e.Actions.Compaction.CompactedContent
		}
		if c != nil {
			n += pydanticJSONLen(c)
			// pydantic keeps an empty parts list (a weightless summary's),
			// which genai's omitempty drops: add `"parts":[]` and its comma.
			if c.Parts != nil && len(c.Parts) == 0 {
				n += len(`"parts":[]`)
				if c.Role != "" {
					n++
				}
			}
		}
	}
	return n
}

// pydanticJSONLen is the length in characters of v's compact JSON with
// snake_case field names and raw non-ASCII text, as pydantic writes genai
// types. Field order does not change the length, so encoding/json's output
// is measured with its keys renamed.
func pydanticJSONLen(v any) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return 0
	}
	return compactJSONLen(data, true)
}

func compactJSONLen(v any, snake bool) int {
	switch t := v.(type) {
	case nil:
		return 4
	case bool:
		if t {
			return 4
		}
		return 5
	case json.Number:
		return len(t)
	case string:
		return jsonStringLen(t)
	case []any:
		n := 2 + max(0, len(t)-1)
		for _, x := range t {
			n += compactJSONLen(x, snake)
		}
		return n
	case map[string]any:
		n := 2 + max(0, len(t)-1)
		for k, x := range t {
			if snake {
				k = snakeCase(k)
			}
			// Data maps (args, responses, schemas) keep their keys.
			n += jsonStringLen(k) + 1 + compactJSONLen(x, snake && !dataField(k))
		}
		return n
	}
	return 0
}

// dataField reports whether a genai field holds user data whose keys are
// not field names.
func dataField(snakeKey string) bool {
	switch snakeKey {
	case "args", "response", "parameters_json_schema", "response_json_schema", "partial_args":
		return true
	}
	return false
}

func jsonStringLen(s string) int {
	n := 2
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
			n += 2
		case r < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

// snakeCase turns a genai JSON field name (camelCase) into pydantic's.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
