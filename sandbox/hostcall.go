package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
)

// callState is what the host functions of one call see: the pool's limits
// and grants, the call's abi.Host, and for the native transport the
// instance whose allocator receives results. It reaches them through the
// call's context (callKey), so one set of host functions serves every call.
type callState struct {
	spec   *poolSpec
	host   abi.Host
	native *nativeInstance
	// parent is the caller's context and deadline the end of the call's
	// wall time. The context host functions see, with that deadline, is
	// made on their first use: most calls make no host call.
	parent   context.Context
	cctx     callCtx // what parent points to
	deadline time.Time
	hctx     hostContext
	mu       sync.Mutex // guards ctx and cancel: Done may be asked anywhere
	ctx      context.Context
	cancel   context.CancelFunc
	// stopped: the deadline or the caller's context stopped the guest.
	stopped bool
	// hostCalls counts the guest's host function calls; overBudget is set
	// when the count passed MaxHostCalls and the guest was stopped.
	hostCalls  int
	overBudget bool
	// expired is set when the guest made a host call after the deadline
	// or after the caller's context ended, and was stopped there.
	expired bool
	// logBytes is what the call has logged; logDropped the lines dropped.
	logBytes, logDropped int
	// written is what the call has handed the host's writes (MaxWriteBytes).
	written int
	// inAlloc is set while the host is inside the guest's adkhost_alloc
	// (writeResult): an allocator calling a host function is stopped.
	inAlloc, reentrant bool
}

// callCtx is the context a call's guest code runs under: the caller's,
// answering callKey with the call's state, so the host functions find it.
// It lives in the callState: a context.WithValue was one more allocation
// per call.
type callCtx struct {
	context.Context
	cs *callState
}

func (c *callCtx) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c.cs
	}
	return c.Context.Value(key)
}

// begin makes cs the state of a call under ctx; cs.parent is then the
// context of the call's guest code.
func (cs *callState) begin(ctx context.Context) {
	cs.cctx = callCtx{Context: ctx, cs: cs}
	cs.parent = &cs.cctx
}

// errReentrant stops a guest whose adkhost_alloc calls a host function:
// each such call would nest another host call, another allocation and
// another wrapped error, without bound.
var errReentrant = errors.New("adkhost_alloc called a host function; an allocator may not (ABI.md §4)")

// errHostCallBudget is the panic that stops a guest past its host call
// budget; wazero turns it into an error of the guest function, and the
// pool reports ErrHostCallLimit from overBudget.
var errHostCallBudget = errors.New("host call budget spent")

// errCallExpired is the panic that stops a guest calling a host function
// after its call's time is up; the pool reports ErrTimeout (or the
// caller's context error) from expired.
var errCallExpired = errors.New("host call after the call's deadline or cancellation")

// countHostCall counts one host function call and stops the guest past
// the budget, or when the call's deadline has passed or its caller's
// context ended. A panic is the only way out of the guest from inside a
// host function: returning a status would let a flooding guest go on.
//
// The deadline check matters because the interrupt (interrupt.go) stops a
// guest only at its next check, up to 1023 function entries or loop
// iterations later: without it a timed-out guest kept writing state,
// artifacts and actions into the invocation until then, hundreds of host
// calls, after the host had given up on it.
func (cs *callState) countHostCall() {
	cs.hostCalls++
	if cs.hostCalls > cs.spec.limits.MaxHostCalls {
		cs.overBudget = true
		panic(errHostCallBudget)
	}
	if cs.parent.Err() != nil || !time.Now().Before(cs.deadline) {
		cs.expired = true
		panic(errCallExpired)
	}
}

// budgetError is the error of a call stopped by countHostCall.
func (cs *callState) budgetError() error {
	return fmt.Errorf("%w: more than %d host function calls in one call", ErrHostCallLimit, cs.spec.limits.MaxHostCalls)
}

// context returns the context of the call's host functions: the caller's,
// ending at the call's deadline.
func (cs *callState) context() context.Context {
	cs.hctx.cs = cs
	return &cs.hctx
}

// timed returns the caller's context with the call's deadline, made on
// first use.
func (cs *callState) timed() context.Context {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ctx == nil {
		cs.ctx, cs.cancel = context.WithDeadline(cs.parent, cs.deadline)
	}
	return cs.ctx
}

// done releases the call's context.
func (cs *callState) done() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.cancel != nil {
		cs.cancel()
	}
}

// hostContext is the context host functions see. Its deadline timer (a
// context.WithDeadline) is made only when something waits on Done: the
// state and log functions, most of a guest's host calls, never do, and the
// timer cost a few allocations on each call that made any host call.
type hostContext struct{ cs *callState }

func (c *hostContext) Deadline() (time.Time, bool) {
	if d, ok := c.cs.parent.Deadline(); ok && d.Before(c.cs.deadline) {
		return d, true
	}
	return c.cs.deadline, true
}

func (c *hostContext) Done() <-chan struct{} { return c.cs.timed().Done() }

func (c *hostContext) Err() error {
	c.cs.mu.Lock()
	ctx := c.cs.ctx
	c.cs.mu.Unlock()
	if ctx != nil {
		return ctx.Err()
	}
	if err := c.cs.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.cs.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *hostContext) Value(key any) any {
	c.cs.mu.Lock()
	ctx := c.cs.ctx
	c.cs.mu.Unlock()
	if ctx != nil {
		// The timer's context answers for itself (context.Cause, and
		// contexts derived from this one, find it).
		return ctx.Value(key)
	}
	return c.cs.parent.Value(key)
}

// allowed checks the capability an operation needs.
func (cs *callState) allowed(op string) abi.Status {
	c, ok := abi.ImportCapability(op)
	if !ok {
		return abi.StatusInvalidArgument
	}
	if c != "" && !cs.spec.caps[c] {
		return abi.StatusDenied
	}
	return abi.StatusOK
}

// hostFor returns the Host for op, or a status: denied without the
// capability, unavailable without a Host.
func (cs *callState) hostFor(op string) (abi.Host, abi.Status) {
	if s := cs.allowed(op); s != abi.StatusOK {
		return nil, s
	}
	if cs.host == nil {
		return nil, abi.StatusUnavailable
	}
	return cs.host, abi.StatusOK
}

// status maps a Host method's error to a status.
func (cs *callState) status(op string, err error) abi.Status {
	if err == nil {
		return abi.StatusOK
	}
	var s abi.Status
	if errors.As(err, &s) {
		return s
	}
	cs.spec.logger.Debug("host function failed", "op", op, "err", err)
	return abi.StatusFailed
}

func validText(s string) bool { return s != "" && utf8.ValidString(s) }

func (cs *callState) stateGet(ctx context.Context, key string) ([]byte, abi.Status) {
	h, s := cs.hostFor(abi.ImportStateGet)
	if s != abi.StatusOK {
		return nil, s
	}
	if !abi.ValidStateKey(key) {
		return nil, abi.StatusInvalidArgument
	}
	v, err := h.StateGet(ctx, key)
	if s := cs.status(abi.ImportStateGet, err); s != abi.StatusOK {
		return nil, s
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	return v, abi.StatusOK
}

// chargeWrite counts n bytes of the call's writes, or answers TOO_LARGE
// past MaxWriteBytes.
func (cs *callState) chargeWrite(n int) abi.Status {
	if cs.written+n > cs.spec.limits.MaxWriteBytes {
		return abi.StatusTooLarge
	}
	cs.written += n
	return abi.StatusOK
}

func (cs *callState) stateSet(ctx context.Context, key string, value []byte) abi.Status {
	h, s := cs.hostFor(abi.ImportStateSet)
	if s != abi.StatusOK {
		return s
	}
	if !abi.ValidStateKey(key) || !json.Valid(value) {
		return abi.StatusInvalidArgument
	}
	if s := cs.chargeWrite(len(key) + len(value)); s != abi.StatusOK {
		return s
	}
	return cs.status(abi.ImportStateSet, h.StateSet(ctx, key, value))
}

func (cs *callState) stateDelete(ctx context.Context, key string) abi.Status {
	h, s := cs.hostFor(abi.ImportStateDelete)
	if s != abi.StatusOK {
		return s
	}
	if !abi.ValidStateKey(key) {
		return abi.StatusInvalidArgument
	}
	return cs.status(abi.ImportStateDelete, h.StateDelete(ctx, key))
}

func (cs *callState) transferToAgent(ctx context.Context, agent string) abi.Status {
	h, s := cs.hostFor(abi.ImportTransferToAgent)
	if s != abi.StatusOK {
		return s
	}
	if !validText(agent) {
		return abi.StatusInvalidArgument
	}
	return cs.status(abi.ImportTransferToAgent, h.TransferToAgent(ctx, agent))
}

func (cs *callState) escalate(ctx context.Context) abi.Status {
	h, s := cs.hostFor(abi.ImportEscalate)
	if s != abi.StatusOK {
		return s
	}
	return cs.status(abi.ImportEscalate, h.Escalate(ctx))
}

func (cs *callState) skipSummarization(ctx context.Context) abi.Status {
	h, s := cs.hostFor(abi.ImportSkipSummarization)
	if s != abi.StatusOK {
		return s
	}
	return cs.status(abi.ImportSkipSummarization, h.SkipSummarization(ctx))
}

func (cs *callState) requestConfirmation(ctx context.Context, hint string, payload []byte) abi.Status {
	h, s := cs.hostFor(abi.ImportRequestConfirmation)
	if s != abi.StatusOK {
		return s
	}
	if !utf8.ValidString(hint) || (len(payload) > 0 && !json.Valid(payload)) {
		return abi.StatusInvalidArgument
	}
	if s := cs.chargeWrite(len(hint) + len(payload)); s != abi.StatusOK {
		return s
	}
	var p json.RawMessage
	if len(payload) > 0 {
		p = payload
	}
	return cs.status(abi.ImportRequestConfirmation, h.RequestConfirmation(ctx, hint, p))
}

func (cs *callState) artifactLoad(ctx context.Context, name string, version int) ([]byte, abi.Status) {
	h, s := cs.hostFor(abi.ImportArtifactLoad)
	if s != abi.StatusOK {
		return nil, s
	}
	if !validText(name) || version < -1 {
		return nil, abi.StatusInvalidArgument
	}
	part, err := h.ArtifactLoad(ctx, name, version)
	if s := cs.status(abi.ImportArtifactLoad, err); s != abi.StatusOK {
		return nil, s
	}
	if part == nil {
		return nil, abi.StatusNotFound
	}
	return cs.marshal(abi.ImportArtifactLoad, part)
}

func (cs *callState) artifactSave(ctx context.Context, name string, partJSON []byte) (int, abi.Status) {
	h, s := cs.hostFor(abi.ImportArtifactSave)
	if s != abi.StatusOK {
		return 0, s
	}
	var part abi.Part
	if !validText(name) || abi.DecodeValue(partJSON, &part, cs.spec.limits.MaxOutputBytes) != nil {
		return 0, abi.StatusInvalidArgument
	}
	if s := cs.chargeWrite(len(name) + len(partJSON)); s != abi.StatusOK {
		return 0, s
	}
	v, err := h.ArtifactSave(ctx, name, &part)
	if s := cs.status(abi.ImportArtifactSave, err); s != abi.StatusOK {
		return 0, s
	}
	return v, abi.StatusOK
}

func (cs *callState) artifactList(ctx context.Context) ([]byte, abi.Status) {
	h, s := cs.hostFor(abi.ImportArtifactList)
	if s != abi.StatusOK {
		return nil, s
	}
	names, err := h.ArtifactList(ctx)
	if s := cs.status(abi.ImportArtifactList, err); s != abi.StatusOK {
		return nil, s
	}
	if names == nil {
		names = []string{}
	}
	return cs.marshal(abi.ImportArtifactList, names)
}

// log sends a guest's line to the call's Host, or to the runtime's logger
// when the call has none. It needs no capability. The log limits apply:
// a long line is cut, and a line past the call's MaxLogBytes or the pool's
// LogLinesPerSecond is dropped and counted.
func (cs *callState) log(ctx context.Context, level int, msg string) abi.Status {
	if !utf8.ValidString(msg) {
		return abi.StatusInvalidArgument
	}
	l := cs.spec.limits
	if cs.logBytes+len(msg) > l.MaxLogBytes || !cs.spec.logRate.allow(time.Now()) {
		cs.dropLog()
		return abi.StatusOK
	}
	if len(msg) > l.MaxLogLineBytes {
		cut := l.MaxLogLineBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = fmt.Sprintf("%s… (%d bytes cut)", msg[:cut], len(msg)-cut)
	}
	cs.logBytes += len(msg)
	if cs.host != nil {
		cs.host.Log(ctx, slog.Level(level), msg)
		return abi.StatusOK
	}
	cs.spec.logger.Log(ctx, slog.Level(level), msg, "source", "guest")
	return abi.StatusOK
}

// dropLog counts a dropped log line.
func (cs *callState) dropLog() {
	cs.logDropped++
	cs.spec.logDropped.Add(1)
	cs.spec.r.logDropped.Add(1)
}

// logRate is a token bucket of log lines shared by a pool's instances.
type logRate struct {
	mu     sync.Mutex
	rate   float64 // lines a second
	burst  float64
	tokens float64
	last   time.Time
}

func newLogRate(perSecond int) *logRate {
	r := float64(perSecond)
	return &logRate{rate: r, burst: 10 * r, tokens: 10 * r}
}

func (b *logRate) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (cs *callState) invocationInfo(ctx context.Context) ([]byte, abi.Status) {
	if cs.host == nil {
		return nil, abi.StatusUnavailable
	}
	info, err := cs.host.InvocationInfo(ctx)
	if s := cs.status(abi.ImportInvocationInfo, err); s != abi.StatusOK {
		return nil, s
	}
	if info == nil {
		return nil, abi.StatusUnavailable
	}
	return cs.marshal(abi.ImportInvocationInfo, info)
}

// configGet returns a granted config value, as raw bytes.
func (cs *callState) configGet(key string) (string, abi.Status) {
	if s := cs.allowed(abi.ImportConfigGet); s != abi.StatusOK {
		return "", s
	}
	if !validText(key) {
		return "", abi.StatusInvalidArgument
	}
	v, ok := cs.spec.grants.Config[key]
	if !ok {
		return "", abi.StatusNotFound
	}
	return v, abi.StatusOK
}

func (cs *callState) httpRequest(ctx context.Context, reqJSON []byte) ([]byte, abi.Status) {
	if s := cs.allowed(abi.ImportHTTPRequest); s != abi.StatusOK {
		return nil, s
	}
	var req abi.HTTPRequest
	if err := abi.DecodeValue(reqJSON, &req, cs.spec.limits.MaxOutputBytes); err != nil {
		return nil, abi.StatusInvalidArgument
	}
	resp, s := doHTTP(ctx, cs.spec.http, cs.spec.grants.HTTP, cs.spec.httpMax, &req)
	if s != abi.StatusOK {
		cs.spec.logger.Debug("http_request refused or failed", "url", req.URL, "status", s)
		return nil, s
	}
	return cs.marshal(abi.ImportHTTPRequest, resp)
}

// memorySearch returns the JSON of an abi.SearchMemoryResponse. An empty
// query is allowed, as google-adk's search_memory allows it.
func (cs *callState) memorySearch(ctx context.Context, query string) ([]byte, abi.Status) {
	h, s := cs.hostFor(abi.ImportMemorySearch)
	if s != abi.StatusOK {
		return nil, s
	}
	if !utf8.ValidString(query) {
		return nil, abi.StatusInvalidArgument
	}
	resp, err := h.MemorySearch(ctx, query)
	if s := cs.status(abi.ImportMemorySearch, err); s != abi.StatusOK {
		return nil, s
	}
	// google-adk always answers a list: never null.
	r := abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{}}
	if resp != nil && resp.Memories != nil {
		r.Memories = resp.Memories
	}
	return cs.marshal(abi.ImportMemorySearch, &r)
}

func (cs *callState) memoryAddSession(ctx context.Context) abi.Status {
	h, s := cs.hostFor(abi.ImportMemoryAddSession)
	if s != abi.StatusOK {
		return s
	}
	return cs.status(abi.ImportMemoryAddSession, h.MemoryAddSession(ctx))
}

func (cs *callState) marshal(op string, v any) ([]byte, abi.Status) {
	b, err := json.Marshal(v)
	if err != nil {
		cs.spec.logger.Debug("host function result", "op", op, "err", err)
		return nil, abi.StatusFailed
	}
	return b, abi.StatusOK
}

// dispatch runs an Extism transport host call: the same operations, with
// arguments and result as JSON.
func (cs *callState) dispatch(ctx context.Context, c *abi.HostCall) *abi.HostReply {
	r := &abi.HostReply{}
	var v []byte
	s := abi.StatusOK
	switch c.Op {
	case abi.ImportStateGet:
		v, s = cs.stateGet(ctx, c.Key)
	case abi.ImportStateSet:
		s = cs.stateSet(ctx, c.Key, c.Value)
	case abi.ImportStateDelete:
		s = cs.stateDelete(ctx, c.Key)
	case abi.ImportTransferToAgent:
		s = cs.transferToAgent(ctx, c.Name)
	case abi.ImportEscalate:
		s = cs.escalate(ctx)
	case abi.ImportSkipSummarization:
		s = cs.skipSummarization(ctx)
	case abi.ImportRequestConfirmation:
		s = cs.requestConfirmation(ctx, c.Hint, c.Value)
	case abi.ImportArtifactLoad:
		version := -1
		if c.Version != nil {
			version = *c.Version
		}
		v, s = cs.artifactLoad(ctx, c.Name, version)
	case abi.ImportArtifactSave:
		var n int
		if n, s = cs.artifactSave(ctx, c.Name, c.Value); s == abi.StatusOK {
			v = strconv.AppendInt(nil, int64(n), 10)
		}
	case abi.ImportArtifactList:
		v, s = cs.artifactList(ctx)
	case abi.ImportLog:
		s = cs.log(ctx, c.Level, c.Message)
	case abi.ImportInvocationInfo:
		v, s = cs.invocationInfo(ctx)
	case abi.ImportConfigGet:
		var str string
		if str, s = cs.configGet(c.Key); s == abi.StatusOK {
			v, _ = json.Marshal(str)
		}
	case abi.ImportHTTPRequest:
		v, s = cs.httpRequest(ctx, c.Value)
	case abi.ImportMemorySearch:
		v, s = cs.memorySearch(ctx, c.Query)
	case abi.ImportMemoryAddSession:
		s = cs.memoryAddSession(ctx)
	default:
		s = abi.StatusInvalidArgument
	}
	if s == abi.StatusOK && len(v) > cs.spec.limits.MaxInputBytes {
		s, v = abi.StatusTooLarge, nil
	}
	r.Status, r.Value = s, v
	return r
}
