package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/adkhost/adkhost/abi"
)

// PoolConfig configures Runtime.Pool.
type PoolConfig struct {
	// Owner is the app the instances serve; required. Two owners never
	// share an instance, so nothing one leaves in guest memory reaches
	// the other.
	Owner string
	// Limits override the defaults for this module.
	Limits Limits
	// Grants are what this owner lets the module use.
	Grants Grants
}

// Pool holds the instances of one module for one owner: at most
// Limits.MaxInstances, each used by one call at a time, so parallel calls
// run on distinct instances. An instance is created on demand (about 7 ms
// and 6-7 MiB of Go heap for a 3.7 MB Go guest, far less for C or WAT),
// kept for the next call, and closed after a trap, a timeout or a bad
// output.
//
// An instance keeps its memory between calls of the same owner: a guest
// must not rely on it, nor on it being cleared.
//
// A Pool is safe for concurrent use.
type Pool struct {
	spec *poolSpec
	sem  chan struct{} // one token per live instance
	idle chan idleInstance

	mu     sync.Mutex
	closed bool

	created, discarded, calls atomic.Uint64
}

// idleInstance is an instance waiting for a call, since when.
type idleInstance struct {
	in    instance
	since time.Time
}

// PoolStats counts a pool's instances and calls.
type PoolStats struct {
	// Live instances, Idle among them.
	Live, Idle int
	// Created and Discarded since the pool was made; Calls started.
	Created, Discarded, Calls uint64
	// LogDropped counts the guest log lines the log limits dropped.
	LogDropped uint64
}

// poolSpec is everything an instance of a pool is made from.
type poolSpec struct {
	r       *Runtime
	mod     *Module
	owner   string
	limits  Limits
	grants  Grants
	caps    map[abi.Capability]bool // asked for and granted
	logger  *slog.Logger
	http    *http.Client
	httpMax int
	wcfg    wazero.ModuleConfig // Native
	extism  *extism.CompiledPlugin
	closing sync.Once
	// logRate bounds the log lines of the pool's instances together;
	// logDropped counts the lines the log limits dropped.
	logRate    *logRate
	logDropped atomic.Uint64
}

func newSpec(ctx context.Context, r *Runtime, m *Module, cfg PoolConfig) (*poolSpec, error) {
	s := &poolSpec{
		r:      r,
		mod:    m,
		owner:  cfg.Owner,
		limits: cfg.Limits.WithDefaults(),
		grants: cfg.Grants,
		caps:   map[abi.Capability]bool{},
		logger: r.logger.With("module", m.short(), "owner", cfg.Owner),
	}
	s.logRate = newLogRate(s.limits.LogLinesPerSecond)
	fail := func(kind error, format string, args ...any) error {
		return fmt.Errorf("sandbox: pool of module %s for owner %q: %w: %s", m.short(), cfg.Owner, kind, fmt.Sprintf(format, args...))
	}
	if miss := s.grants.missing(m.describe.Capabilities); len(miss) > 0 {
		return nil, fail(ErrNotGranted, "the module asks for %v", miss)
	}
	for _, c := range m.describe.Capabilities {
		s.caps[c] = true
	}
	if m.minPages > s.limits.MemoryPages {
		return nil, fail(ErrLimits, "the module starts with %d memory pages, above the limit of %d", m.minPages, s.limits.MemoryPages)
	}
	if s.limits.MaxCallDepth > maxCallDepth {
		return nil, fail(ErrLimits, "MaxCallDepth %d exceeds %d", s.limits.MaxCallDepth, maxCallDepth)
	}
	if s.limits.MemoryPages > 65536 {
		return nil, fail(ErrLimits, "MemoryPages %d exceeds 65536 (4 GiB)", s.limits.MemoryPages)
	}
	if s.caps[abi.CapHTTP] {
		s.http, s.httpMax = newHTTPClient(s.grants.HTTP)
	}

	// WASI: nothing unless asked for and granted.
	// No start functions: the instance runs _initialize under its deadline
	// (newNative). Go-sdk sets its own for Extism.
	w := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	if s.caps[abi.CapEnv] {
		for k, v := range s.grants.Env {
			w = w.WithEnv(k, v)
		}
	}
	if s.caps[abi.CapClock] {
		w = w.WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	}
	if s.caps[abi.CapRandom] {
		w = w.WithRandSource(rand.Reader)
	}
	if s.caps[abi.CapFS] && m.transport == Native {
		fs := wazero.NewFSConfig()
		for _, d := range s.grants.Dirs {
			fs = fs.WithReadOnlyDirMount(d.HostPath, d.GuestPath)
		}
		w = w.WithFSConfig(fs)
	}
	s.wcfg = w
	if m.transport == Extism {
		if err := s.compileExtism(compileContext(ctx)); err != nil {
			return nil, fail(ErrCompile, "%v", err)
		}
	}
	return s, nil
}

// close releases what the spec holds, once its last instance is closed.
func (s *poolSpec) close(ctx context.Context) {
	s.closing.Do(func() {
		if s.extism != nil {
			s.extism.Close(ctx)
		}
		if s.http != nil {
			s.http.CloseIdleConnections()
		}
	})
}

func (s *poolSpec) sameConfig(cfg PoolConfig) bool {
	return s.limits == cfg.Limits.WithDefaults() && reflect.DeepEqual(s.grants, cfg.Grants)
}

func (s *poolSpec) newInstance(ctx context.Context) (instance, error) {
	if s.mod.transport == Extism {
		return s.newExtism(ctx)
	}
	return s.newNative(ctx)
}

// instance is one instantiated module, used by one call at a time.
type instance interface {
	// call runs export with input. discard reports that the instance must
	// not be used again.
	call(ctx context.Context, cs *callState, export string, input []byte) (out []byte, discard bool, err error)
	close(ctx context.Context)
}

// callKey is the context key of the *callState the host functions serve.
type callKey struct{}

// run calls export on in under the spec's limits: the deadline, the call
// state the host functions receive, and the output size.
func (s *poolSpec) run(ctx context.Context, in instance, export string, input []byte, h abi.Host) ([]byte, bool, error) {
	cs := &callState{spec: s, host: h, deadline: time.Now().Add(s.limits.Timeout)}
	cs.begin(ctx)
	defer cs.done()
	out, discard, err := in.call(cs.parent, cs, export, input)
	if cs.logDropped > 0 {
		s.logger.Warn("guest log lines dropped by the log limits", "export", export, "dropped", cs.logDropped,
			"max_log_bytes", s.limits.MaxLogBytes, "log_lines_per_second", s.limits.LogLinesPerSecond)
	}
	if cs.reentrant {
		return nil, true, fmt.Errorf("%w: %w", ErrTrap, errReentrant)
	}
	if cs.overBudget {
		// The guest was stopped by its host call budget; the transport saw
		// only the panic that stopped it.
		return nil, true, cs.budgetError()
	}
	if err != nil && (cs.stopped || cs.expired || ctx.Err() != nil) {
		// Whatever the guest was doing, the deadline or the caller ended it.
		discard = true
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		} else {
			err = fmt.Errorf("%w: stopped after %s", ErrTimeout, s.limits.Timeout)
		}
	}
	return out, discard, err
}

func newPool(s *poolSpec) *Pool {
	n := s.limits.MaxInstances
	return &Pool{spec: s, sem: make(chan struct{}, n), idle: make(chan idleInstance, n)}
}

// Module returns the pool's module.
func (p *Pool) Module() *Module { return p.spec.mod }

// Owner returns the owner the pool serves.
func (p *Pool) Owner() string { return p.spec.owner }

// Limits returns the pool's limits, defaults filled in.
func (p *Pool) Limits() Limits { return p.spec.limits }

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	return PoolStats{
		Live:       len(p.sem),
		Idle:       len(p.idle),
		Created:    p.created.Load(),
		Discarded:  p.discarded.Load(),
		Calls:      p.calls.Load(),
		LogDropped: p.spec.logDropped.Load(),
	}
}

// Call runs hook with input (the hook's JSON input message) on an instance
// of its own, and returns the output bytes: empty, or the hook's JSON
// output message, which the caller decodes (Invoke does both). h serves the
// guest's host calls; nil answers them StatusUnavailable. ctx reaches h's
// methods, with the call's deadline.
//
// It waits for an instance if MaxInstances are busy. Errors wrap one of
// the call errors of this package (ErrTimeout, ErrTrap, ...), or ctx's.
//
// Cost (2-core EPYC): the transport alone is about 2 µs. The guest's own
// work dominates otherwise: the Go SDK's weather example answers a
// get_weather call in about 40 µs, where the same SDK code compiled for the
// host takes 2.5 µs (make bench-wasm); the loop checks that let a deadline
// stop a guest (interrupt.go) account for about a tenth of that.
func (p *Pool) Call(ctx context.Context, hook abi.Hook, input []byte, h abi.Host) ([]byte, error) {
	s := p.spec
	fail := func(err error) error {
		return fmt.Errorf("sandbox: module %s hook %s: %w", s.mod.short(), hook, err)
	}
	if !s.mod.describe.Implements(hook) {
		return nil, fail(ErrNoHook)
	}
	if len(input) > s.limits.MaxInputBytes {
		return nil, fail(fmt.Errorf("%w: %d bytes, limit %d", ErrInputTooLarge, len(input), s.limits.MaxInputBytes))
	}
	in, err := p.acquire(ctx)
	if err != nil {
		return nil, fail(err)
	}
	p.calls.Add(1)
	out, discard, err := s.run(ctx, in, hook.Export(), input, h)
	if discard {
		p.discard(in)
	} else {
		p.release(in)
	}
	if err != nil {
		return nil, fail(err)
	}
	return out, nil
}

// Invoke encodes in, calls hook, and decodes the output strictly into the
// hook's output type Out (abi.Hook.NewOutput). An empty output decodes to a
// zero Out. A malformed output fails with ErrBadOutput wrapping the abi
// codec error; the instance is kept.
func Invoke[Out any, PO interface {
	*Out
	abi.Message
}](ctx context.Context, p *Pool, hook abi.Hook, in abi.Message, h abi.Host) (*Out, error) {
	types, ok := hookTypes[hook]
	if !ok || reflect.TypeOf(in) != types.in {
		return nil, fmt.Errorf("sandbox: Invoke %s: input is %T, want %T", hook, in, hook.NewInput())
	}
	if reflect.TypeOf(PO(nil)) != types.out {
		return nil, fmt.Errorf("sandbox: Invoke %s: output type is %T, want %T", hook, PO(nil), hook.NewOutput())
	}
	buf := inputBuffers.Get().(*[]byte)
	input, err := abi.AppendEncode((*buf)[:0], in)
	if err != nil {
		inputBuffers.Put(buf)
		return nil, fmt.Errorf("sandbox: Invoke %s: %w", hook, err)
	}
	raw, err := p.Call(ctx, hook, input, h)
	// Call copied the input into the guest: the buffer serves the next.
	if cap(input) <= maxPooledInput {
		*buf = input
		inputBuffers.Put(buf)
	}
	if err != nil {
		return nil, err
	}
	out := new(Out)
	if len(raw) == 0 {
		PO(out).ABIHeader().ABIVersion = abi.Version
		return out, nil
	}
	if err := abi.Decode(raw, PO(out), p.spec.limits.MaxOutputBytes); err != nil {
		return nil, fmt.Errorf("sandbox: module %s hook %s: %w: %w", p.spec.mod.short(), hook, ErrBadOutput, err)
	}
	return out, nil
}

// hookTypes are the input and output types of each hook, for Invoke's
// checks: comparing with hook.NewInput()'s and NewOutput()'s allocated two
// messages per call.
var hookTypes = func() map[abi.Hook]struct{ in, out reflect.Type } {
	m := map[abi.Hook]struct{ in, out reflect.Type }{}
	for _, h := range abi.Hooks() {
		m[h] = struct{ in, out reflect.Type }{reflect.TypeOf(h.NewInput()), reflect.TypeOf(h.NewOutput())}
	}
	return m
}()

// inputBuffers hold Invoke's encoded inputs between calls; one larger than
// maxPooledInput is left to the garbage collector.
var inputBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledInput = 64 << 10

// Close closes the idle instances and marks the pool closed: calls in
// flight finish, their instances are then closed, and later calls fail with
// ErrClosed. It closes the pool for everyone holding it.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.spec.r.dropPool(p)
	for {
		select {
		case it := <-p.idle:
			p.discard(it.in)
		default:
			if len(p.sem) == 0 {
				p.spec.close(ctx)
			}
			return nil
		}
	}
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// acquire returns an idle instance, or a new one while fewer than
// MaxInstances live, or waits for either.
func (p *Pool) acquire(ctx context.Context) (instance, error) {
	if p.isClosed() {
		return nil, ErrClosed
	}
	select {
	case it := <-p.idle:
		return it.in, nil
	default:
	}
	select {
	case it := <-p.idle:
		return it.in, nil
	case p.sem <- struct{}{}:
		r := p.spec.r
		n := p.reservation()
		if err := r.budget.reserve(ctx, n, r.admission, func(need int64) { r.closeIdle(0, need) }); err != nil {
			<-p.sem
			return nil, err
		}
		in, err := p.spec.newInstance(ctx)
		if err != nil {
			r.budget.release(n)
			<-p.sem
			return nil, err
		}
		p.created.Add(1)
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reservation is what one instance holds of the runtime's memory budget:
// the most its linear memory can grow to.
func (p *Pool) reservation() int64 { return int64(p.spec.limits.MemoryPages) << 16 }

// closeIdle closes the instances idle since before now-olderThan, until
// enough reports true, and returns the reservations it freed.
func (p *Pool) closeIdle(now time.Time, olderThan time.Duration, enough func() bool) int64 {
	var freed int64
	var keep []idleInstance
	for n := len(p.idle); n > 0 && !enough(); n-- {
		select {
		case it := <-p.idle:
			if now.Sub(it.since) >= olderThan {
				p.discard(it.in)
				freed += p.reservation()
			} else {
				keep = append(keep, it)
			}
		default:
			n = 0
		}
	}
	for _, it := range keep {
		p.idle <- it // never blocks: these were idle a moment ago
	}
	return freed
}

func (p *Pool) release(in instance) {
	if p.isClosed() {
		p.discard(in)
		return
	}
	p.idle <- idleInstance{in, time.Now()} // never blocks: len(idle) < live <= cap
}

func (p *Pool) discard(in instance) {
	in.close(context.Background())
	p.discarded.Add(1)
	p.spec.r.budget.release(p.reservation())
	<-p.sem
	if len(p.sem) == 0 && p.isClosed() {
		p.spec.close(context.Background())
	}
}
