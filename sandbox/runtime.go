// Package sandbox runs WebAssembly modules that speak the adkhost ABI (see
// package abi): it compiles them once, pools their instances per owner, and
// calls their hooks under limits and capability grants.
//
// Four nouns: a Runtime compiles and caches; a Module is one compiled,
// validated binary; a Pool holds the instances of one module for one owner;
// a call (Pool.Call, Invoke) runs one hook on one instance. The package
// knows nothing of agents: what host functions do is up to the abi.Host the
// embedder passes with each call.
package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Config configures New. The zero Config is usable.
type Config struct {
	// CacheDir holds compiled machine code across processes
	// (wazero.NewCompilationCacheWithDir), keyed by the module's sha256 and
	// the wazero version and CPU. A module compiled once loads from it in a
	// fraction of the compile time. "" keeps compiled code in memory only.
	CacheDir string
	// Logger receives the log lines of guests called without an abi.Host,
	// and what the sandbox itself reports. nil discards.
	Logger *slog.Logger
	// Complexity bounds the shape of the modules Load accepts (zero
	// fields: defaults).
	Complexity Complexity
	// MemoryBudget bounds the guest memory of all instances together, in
	// bytes (0: unlimited). Every live instance reserves its pool's
	// MemoryPages; a call that needs a new instance past the budget first
	// closes idle instances of any pool, then waits up to AdmissionWait for
	// memory to come free, then fails with ErrMemoryBudget.
	MemoryBudget int64
	// AdmissionWait is how long a call waits for budget (default 5 s).
	AdmissionWait time.Duration
	// IdleTimeout closes instances idle for that long, giving their memory
	// back (default 2 minutes; negative: never).
	IdleTimeout time.Duration
}

// Defaults of Config.
const (
	DefaultAdmissionWait = 5 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
)

// Runtime compiles modules and owns their pools. It is safe for concurrent
// use. Close it to release compiled code and every pool.
type Runtime struct {
	cache    wazero.CompilationCache
	cacheDir string
	rcfg     wazero.RuntimeConfig // Extism: wazero stops guests at their deadline
	// rt runs native modules, instrumented to stop at their deadline
	// (interrupt.go), with the adkhost host module and WASI.
	rt         wazero.Runtime
	logger     *slog.Logger
	complexity Complexity
	validator  validator
	budget     *memBudget
	compiles   chan struct{} // one token per compile under way
	admission  time.Duration
	logDropped atomic.Uint64
	rewrites   atomic.Int64 // modules validated and rewritten, for tests
	stop       chan struct{}

	// guarded runs the native modules instrument cannot rewrite, with
	// wazero's own deadline checks; created on first use.
	guardedOnce sync.Once
	guarded     wazero.Runtime
	guardedErr  error

	mu      sync.Mutex
	closed  bool
	modules map[string]*loading
	pools   map[poolKey]*Pool
}

type loading struct {
	done chan struct{}
	mod  *Module
	err  error
}

type poolKey struct{ owner, digest string }

// New returns a Runtime. With a CacheDir it creates the directory if needed.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: compilation cache %s: %w", cfg.CacheDir, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rcfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(true)
	r := &Runtime{
		cache:      cache,
		cacheDir:   cfg.CacheDir,
		rcfg:       rcfg,
		logger:     logger,
		complexity: cfg.Complexity.WithDefaults(),
		modules:    map[string]*loading{},
		pools:      map[poolKey]*Pool{},
	}
	r.budget = newMemBudget(cfg.MemoryBudget)
	r.compiles = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))
	r.admission = cfg.AdmissionWait
	if r.admission <= 0 {
		r.admission = DefaultAdmissionWait
	}
	rt, err := newNativeRuntime(ctx, rcfg.WithCloseOnContextDone(false))
	if err != nil {
		return nil, err
	}
	r.rt = rt
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	if idle > 0 {
		r.stop = make(chan struct{})
		go r.janitor(max(idle/4, 10*time.Millisecond), idle, r.stop)
	}
	return r, nil
}

// newNativeRuntime returns a wazero runtime with WASI and the adkhost host
// module.
func newNativeRuntime(ctx context.Context, cfg wazero.RuntimeConfig) (wazero.Runtime, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("sandbox: WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("sandbox: host module: %w", err)
	}
	return rt, nil
}

// guardedRuntime returns the runtime for modules instrument cannot rewrite.
func (r *Runtime) guardedRuntime(ctx context.Context) (wazero.Runtime, error) {
	r.guardedOnce.Do(func() { r.guarded, r.guardedErr = newNativeRuntime(ctx, r.rcfg) })
	return r.guarded, r.guardedErr
}

// Load compiles and validates a module, or returns the one already loaded
// with the same sha256. It checks, in order, each with its own error: that
// the bytes compile (ErrCompile); the ABI version marker (ErrNoABIVersion,
// ErrUnknownABIVersion); the imports (ErrImport); the exports the transport
// needs and their signatures (ErrMissingExport, ErrExportSignature); then
// it runs adkhost_describe in a fresh instance with no grants and checks its
// answer and that every hook it lists is exported (ErrDescribe,
// ErrMissingExport). With a CacheDir, the answer of an earlier process is
// read from it instead of running the module again (describecache.go).
//
// Cost: a compile (about 2 s for a 3.7 MB Go guest on two cores; 40-50 ms
// of CPU from the disk cache, about two thirds of it wazero decoding and
// validating every function body, which it does even for cached code and
// has no option to skip, a third reading 15 MB of machine code back) and,
// without a cached describe message, one instantiation.
func (r *Runtime) Load(ctx context.Context, wasm []byte) (*Module, error) {
	sum := sha256.Sum256(wasm)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("sandbox: load: %w", ErrClosed)
	}
	if l, ok := r.modules[digest]; ok {
		r.mu.Unlock()
		select {
		case <-l.done:
			return l.mod, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l := &loading{done: make(chan struct{})}
	r.modules[digest] = l
	r.mu.Unlock()

	l.mod, l.err = r.load(ctx, digest, wasm)
	if errors.Is(l.err, errRewriteChanged) {
		// Another process truncated the cache entry under us: the next
		// read finds it bad, or rewritten whole, and goes on from there.
		l.mod, l.err = r.load(ctx, digest, wasm)
	}
	if l.err != nil {
		// Failures are not cached: the next Load tries again.
		r.mu.Lock()
		delete(r.modules, digest)
		r.mu.Unlock()
	}
	close(l.done)
	return l.mod, l.err
}

// Close closes every pool and releases all compiled code. Calls in flight
// fail with ErrClosed or ErrTrap.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	if r.stop != nil {
		close(r.stop)
	}
	pools := make([]*Pool, 0, len(r.pools))
	for _, p := range r.pools {
		pools = append(pools, p)
	}
	r.mu.Unlock()
	for _, p := range pools {
		p.Close(ctx)
	}
	err := r.rt.Close(ctx)
	r.guardedOnce.Do(func() {}) // no guarded runtime after Close
	if r.guarded != nil {
		if gerr := r.guarded.Close(ctx); err == nil {
			err = gerr
		}
	}
	if verr := r.validator.close(ctx); err == nil {
		err = verr
	}
	if cerr := r.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// Pool returns the pool of module m for cfg.Owner, creating it on first
// use. Instances are never shared across owners. Asking again with the same
// owner and module returns the same pool if the limits and grants are the
// same, and fails with ErrPoolConflict otherwise. It fails with
// ErrNotGranted if the module asks for a capability cfg.Grants lacks, and
// with ErrLimits if its initial memory exceeds the memory limit.
func (r *Runtime) Pool(ctx context.Context, m *Module, cfg PoolConfig) (*Pool, error) {
	if cfg.Owner == "" {
		return nil, fmt.Errorf("sandbox: pool of module %s: an owner is required", m.short())
	}
	key := poolKey{cfg.Owner, m.digest}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("sandbox: pool: %w", ErrClosed)
	}
	if p, ok := r.pools[key]; ok {
		if !p.spec.sameConfig(cfg) {
			return nil, fmt.Errorf("sandbox: pool of module %s for owner %q: %w; close it first", m.short(), cfg.Owner, ErrPoolConflict)
		}
		return p, nil
	}
	spec, err := newSpec(ctx, r, m, cfg)
	if err != nil {
		return nil, err
	}
	p := newPool(spec)
	r.pools[key] = p
	return p, nil
}

// compileContext lets wazero compile a module's functions on every CPU.
func compileContext(ctx context.Context) context.Context {
	return experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
}

func (r *Runtime) dropPool(p *Pool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := poolKey{p.spec.owner, p.spec.mod.digest}
	if r.pools[key] == p {
		delete(r.pools, key)
	}
}
