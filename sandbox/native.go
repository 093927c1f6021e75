package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/adkhost/adkhost/abi"
)

// nativeInstance is an instance of a Native module. Its function handles
// are looked up once, at instantiation.
type nativeInstance struct {
	mod    api.Module
	mem    api.Memory
	limit  *linearLimit
	alloc  api.Function
	free   api.Function
	fns    map[string]api.Function // describe and the listed hooks
	stack  [2]uint64
	stderr *tail
	stop   *interrupter // nil for a module run on the guarded runtime
	// depth is the frames the guest may still open (interrupt.go); nil
	// for a module run on the guarded runtime.
	depth    api.MutableGlobal
	maxDepth uint64
	// The input block: allocated by the guest, owned by the host.
	inPtr, inCap uint32
}

func (s *poolSpec) newNative(ctx context.Context) (*nativeInstance, error) {
	limit := &linearLimit{max: uint64(s.limits.MemoryPages) << 16}
	stderr := &tail{}
	// Instantiation has its own, longer limit: a slow start under load
	// must not fail a call with a short Timeout.
	cs := &callState{spec: s, deadline: time.Now().Add(s.limits.InitTimeout)}
	cs.begin(ctx)
	defer cs.done()
	ictx := experimental.WithMemoryAllocator(cs.parent, limit)
	if !s.mod.interruptible {
		// wazero stops the start section and _initialize at the deadline.
		var cancel context.CancelFunc
		ictx, cancel = context.WithDeadline(ictx, cs.deadline)
		defer cancel()
	}
	wcfg := s.wcfg.WithStderr(stderr)
	if !s.caps[abi.CapRandom] {
		wcfg = wcfg.WithRandSource(&fakeRand{})
	}
	mod, err := s.mod.rt.InstantiateModule(ictx, s.mod.compiled, wcfg)
	if err != nil {
		return nil, instantiationError(s, limit, stderr, ictx.Err() != nil, err)
	}
	in := &nativeInstance{
		mod:    mod,
		mem:    mod.Memory(),
		limit:  limit,
		alloc:  mod.ExportedFunction(abi.ExportAlloc),
		free:   mod.ExportedFunction(abi.ExportFree),
		fns:    map[string]api.Function{abi.ExportDescribe: mod.ExportedFunction(abi.ExportDescribe)},
		stderr: stderr,
	}
	for _, h := range s.mod.describe.Hooks {
		in.fns[h.Export()] = mod.ExportedFunction(h.Export())
	}
	if s.mod.interruptible {
		g, ok := mod.ExportedGlobal(interruptExport).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("%w: instrumented module lacks its %s global", ErrTrap, interruptExport)
		}
		in.stop = newInterrupter(g)
		d, ok := mod.ExportedGlobal(depthExport).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("%w: instrumented module lacks its %s global", ErrTrap, depthExport)
		}
		in.depth, in.maxDepth = d, uint64(s.limits.MaxCallDepth)
		d.Set(in.maxDepth)
	}
	// The start function (moved to an export by instrument) and the WASI
	// reactor's _initialize run under InitTimeout.
	in.arm(ctx, cs)
	for _, name := range []string{startExport, "_initialize"} {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			continue
		}
		if err = fn.CallWithStack(ictx, in.stack[:]); err != nil {
			break
		}
	}
	stopped := in.disarm(cs)
	if stopped && err == nil {
		// The deadline fired in a host function the guest then returned
		// from: the interrupt global stays set, so the instance is
		// spent.
		err = errors.New("interrupted")
	}
	if err != nil {
		in.close(ctx)
		if cs.overBudget {
			return nil, fmt.Errorf("instantiation: %w", cs.budgetError())
		}
		if in.tooDeep() {
			return nil, fmt.Errorf("%w: instantiation: more than %d nested calls (MaxCallDepth)%s", ErrCallDepth, s.limits.MaxCallDepth, stderr.suffix())
		}
		return nil, instantiationError(s, limit, stderr, stopped || cs.expired || ictx.Err() != nil, err)
	}
	return in, nil
}

// maxCallDepth is the largest MaxCallDepth: the depth global is an i32,
// and -1 marks the trap at the limit.
const maxCallDepth = 1 << 30

// tooDeep reports whether the guest trapped at MaxCallDepth: the entry
// that trapped set the depth global to -1 (interrupt.go).
func (in *nativeInstance) tooDeep() bool {
	return in.depth != nil && int32(in.depth.Get()) == -1
}

func instantiationError(s *poolSpec, limit *linearLimit, stderr *tail, stopped bool, err error) error {
	if limit.refused.Load() {
		return fmt.Errorf("%w: instantiation: %v", ErrMemoryLimit, err)
	}
	if stopped {
		return fmt.Errorf("%w: instantiation stopped after %s (InitTimeout)", ErrTimeout, s.limits.InitTimeout)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%w: instantiation: guest exited with code %d%s", ErrTrap, exit.ExitCode(), stderr.suffix())
	}
	return fmt.Errorf("%w: instantiation: %v%s", ErrTrap, err, stderr.suffix())
}

func (in *nativeInstance) close(ctx context.Context) {
	if in.stop != nil {
		in.stop.close()
	}
	in.mod.Close(ctx)
}

// arm starts the deadline of a call: the interrupter's timer, or for a
// guarded module nothing (the call's context carries the deadline).
func (in *nativeInstance) arm(ctx context.Context, cs *callState) {
	if in.stop != nil {
		in.stop.arm(ctx, time.Until(cs.deadline))
	}
}

// disarm ends it and reports whether the deadline or ctx stopped the
// guest; the instance must then be discarded.
func (in *nativeInstance) disarm(cs *callState) bool {
	if in.stop != nil {
		return in.stop.disarm()
	}
	return false
}

// call follows the native transport (ABI.md): write the input into the
// instance's input block, call the hook, read the packed result, free the
// output block.
func (in *nativeInstance) call(ctx context.Context, cs *callState, export string, input []byte) ([]byte, bool, error) {
	fn := in.fns[export]
	if fn == nil {
		return nil, false, fmt.Errorf("%w: %s is not exported", ErrNoHook, export)
	}
	if in.stop == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, cs.deadline)
		defer cancel()
		defer func() { cs.stopped = ctx.Err() != nil }()
	} else {
		in.arm(ctx, cs)
		defer func() { cs.stopped = in.disarm(cs) }()
	}
	cs.native = in
	if in.depth != nil {
		// Balanced entries and exits leave it at the limit; setting it
		// costs nothing and keeps one call's drift out of the next.
		in.depth.Set(in.maxDepth)
	}
	in.limit.refused.Store(false)
	in.stderr.reset()
	n := uint32(len(input))
	if n > 0 {
		if err := in.ensureInputBlock(ctx, n); err != nil {
			return nil, true, err
		}
		in.mem.Write(in.inPtr, input)
	}
	in.stack[0], in.stack[1] = uint64(in.inPtr), uint64(n)
	if n == 0 {
		in.stack[0] = 0
	}
	if err := fn.CallWithStack(ctx, in.stack[:]); err != nil {
		return nil, true, in.failure(export, err)
	}
	outPtr, outLen := uint32(in.stack[0]>>32), uint32(in.stack[0])
	if outLen == 0 {
		return nil, false, nil
	}
	var out []byte
	var outErr error
	if int64(outLen) > int64(cs.spec.limits.MaxOutputBytes) {
		outErr = fmt.Errorf("%w: %d bytes, limit %d", ErrOutputTooLarge, outLen, cs.spec.limits.MaxOutputBytes)
	} else {
		b, ok := in.mem.Read(outPtr, outLen)
		if !ok {
			return nil, true, fmt.Errorf("%w: %s returned [%#x, +%d), outside the %d bytes of guest memory", ErrBadOutput, export, outPtr, outLen, in.mem.Size())
		}
		out = bytes.Clone(b)
	}
	if err := in.release(ctx, outPtr, outLen); err != nil {
		return nil, true, err
	}
	return out, false, outErr
}

// ensureInputBlock makes the instance's input block hold n bytes. The
// block is allocated once and reused while inputs fit; a larger input frees
// it and allocates one of the next power of two (4 KiB at least).
func (in *nativeInstance) ensureInputBlock(ctx context.Context, n uint32) error {
	if n <= in.inCap {
		return nil
	}
	if in.inCap > 0 {
		if err := in.release(ctx, in.inPtr, in.inCap); err != nil {
			return err
		}
		in.inPtr, in.inCap = 0, 0
	}
	c := max(uint32(4096), uint32(1)<<bits.Len32(n-1))
	if c < n { // n above 2 GiB
		c = n
	}
	in.stack[0] = uint64(c)
	if err := in.alloc.CallWithStack(ctx, in.stack[:]); err != nil {
		return in.failure(abi.ExportAlloc, err)
	}
	p := uint32(in.stack[0])
	if _, ok := in.mem.Read(p, c); p == 0 || !ok {
		return fmt.Errorf("%w: %s(%d) returned %#x, outside the %d bytes of guest memory", ErrBadAlloc, abi.ExportAlloc, c, p, in.mem.Size())
	}
	in.inPtr, in.inCap = p, c
	return nil
}

func (in *nativeInstance) release(ctx context.Context, ptr, n uint32) error {
	in.stack[0], in.stack[1] = uint64(ptr), uint64(n)
	if err := in.free.CallWithStack(ctx, in.stack[:]); err != nil {
		return in.failure(abi.ExportFree, err)
	}
	return nil
}

// failure classifies an error of a guest function. The caller discards
// the instance; the pool turns deadline errors into ErrTimeout.
func (in *nativeInstance) failure(fn string, err error) error {
	if in.tooDeep() {
		return fmt.Errorf("%w: %s: more than %d nested calls (MaxCallDepth)%s", ErrCallDepth, fn, in.maxDepth, in.stderr.suffix())
	}
	if in.limit.refused.Load() {
		return fmt.Errorf("%w: %s failed after memory.grow was refused at %d pages: %s%s", ErrMemoryLimit, fn, in.limit.max>>16, firstLine(err), in.stderr.suffix())
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%w: %s: guest exited with code %d%s", ErrTrap, fn, exit.ExitCode(), in.stderr.suffix())
	}
	return fmt.Errorf("%w: %s: %s%s", ErrTrap, fn, firstLine(err), in.stderr.suffix())
}

// firstLine drops the wasm stack trace wazero appends to a trap.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// linearLimit allocates linear memories that refuse to grow beyond max
// bytes. It replaces wazero's allocator for one instance, so each pool has
// its own limit within one wazero runtime.
type linearLimit struct {
	max     uint64
	refused atomic.Bool
}

// Allocate implements experimental.MemoryAllocator.
func (l *linearLimit) Allocate(capacity, max uint64) experimental.LinearMemory {
	return &linearMemory{limit: l}
}

type linearMemory struct {
	limit *linearLimit
	buf   []byte
}

// The spare capacity of a linear memory's first allocation: a quarter of
// its size, at most firstHeadroomMax, for memories of firstHeadroomMin or
// more.
const (
	firstHeadroomMin = 1 << 20
	firstHeadroomMax = 1 << 20
)

// Reallocate implements experimental.LinearMemory: it grows the buffer,
// doubling its capacity up to the limit, or returns nil past the limit.
// The first allocation, at instantiation, of a memory of 1 MiB or more has
// a quarter of its size to spare (at most 1 MiB): a Go guest's runtime
// grows its memory by a page as it starts, and copying the whole memory for
// that (3 MB for the weather example) was about 2 ms of a cold start. A
// smaller memory is cheap to copy, and its idle instances keep their exact
// size (the C example's would grow by a quarter).
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit.max {
		m.limit.refused.Store(true)
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	c := max(size, 2*uint64(cap(m.buf)))
	if m.buf == nil && size >= firstHeadroomMin {
		c = size + min(size/4, firstHeadroomMax)
	}
	c = min(c, m.limit.max)
	b := make([]byte, size, c)
	copy(b, m.buf)
	m.buf = b
	return b
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() { m.buf = nil }

// tail keeps the first bytes a guest writes to stderr during a call, to
// explain a trap (a Go guest's panic message goes there).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := tailMax - len(t.buf); room > 0 {
		t.buf = append(t.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *tail) reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}

// suffix returns "; stderr: ..." or "".
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(bytes.TrimSpace(t.buf))
	if s == "" {
		return ""
	}
	return "; stderr: " + strconv.Quote(s)
}

// The host functions of the native transport, in module "adkhost". Each
// reads its arguments from guest memory, runs the operation through the
// call's callState, writes results, and returns a status.
type hostFunc struct {
	sig sig
	fn  func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status
}

var importSigs = map[string]sig{}

var hostFuncs = map[string]hostFunc{
	abi.ImportStateGet: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		key, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.stateGet(ctx, key)
		return cs.writeResult(ctx, m, v, s, st[2], st[3])
	}},
	abi.ImportStateSet: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		key, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.read(m, st[2], st[3])
		if s != abi.StatusOK {
			return s
		}
		return cs.stateSet(ctx, key, v)
	}},
	abi.ImportStateDelete: {params(2), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		key, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		return cs.stateDelete(ctx, key)
	}},
	abi.ImportTransferToAgent: {params(2), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		name, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		return cs.transferToAgent(ctx, name)
	}},
	abi.ImportEscalate: {params(0), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		return cs.escalate(ctx)
	}},
	abi.ImportSkipSummarization: {params(0), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		return cs.skipSummarization(ctx)
	}},
	abi.ImportRequestConfirmation: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		hint, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		payload, s := cs.read(m, st[2], st[3])
		if s != abi.StatusOK {
			return s
		}
		return cs.requestConfirmation(ctx, hint, payload)
	}},
	abi.ImportArtifactLoad: {params(5), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		name, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.artifactLoad(ctx, name, int(int32(st[2])))
		return cs.writeResult(ctx, m, v, s, st[3], st[4])
	}},
	abi.ImportArtifactSave: {params(5), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		name, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		part, s := cs.read(m, st[2], st[3])
		if s != abi.StatusOK {
			return s
		}
		retPtr := uint32(st[4])
		if _, ok := m.Memory().Read(retPtr, 4); !ok {
			return abi.StatusBadPointer
		}
		version, s := cs.artifactSave(ctx, name, part)
		if s == abi.StatusOK {
			m.Memory().WriteUint32Le(retPtr, uint32(int32(version)))
		}
		return s
	}},
	abi.ImportArtifactList: {params(2), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		v, s := cs.artifactList(ctx)
		return cs.writeResult(ctx, m, v, s, st[0], st[1])
	}},
	abi.ImportLog: {params(3), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		msg, s := cs.readString(m, st[1], st[2])
		if s != abi.StatusOK {
			return s
		}
		return cs.log(ctx, int(int32(st[0])), msg)
	}},
	abi.ImportInvocationInfo: {params(2), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		v, s := cs.invocationInfo(ctx)
		return cs.writeResult(ctx, m, v, s, st[0], st[1])
	}},
	abi.ImportConfigGet: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		key, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.configGet(key)
		return cs.writeResult(ctx, m, []byte(v), s, st[2], st[3])
	}},
	abi.ImportHTTPRequest: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		req, s := cs.read(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.httpRequest(ctx, req)
		return cs.writeResult(ctx, m, v, s, st[2], st[3])
	}},
	abi.ImportMemorySearch: {params(4), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		query, s := cs.readString(m, st[0], st[1])
		if s != abi.StatusOK {
			return s
		}
		v, s := cs.memorySearch(ctx, query)
		return cs.writeResult(ctx, m, v, s, st[2], st[3])
	}},
	abi.ImportMemoryAddSession: {params(0), func(ctx context.Context, cs *callState, m api.Module, st []uint64) abi.Status {
		return cs.memoryAddSession(ctx)
	}},
}

// params returns the signature (i32 × n) -> i32.
func params(n int) sig {
	p := make([]api.ValueType, n)
	for i := range p {
		p[i] = i32
	}
	return sig{p, []api.ValueType{i32}}
}

func init() {
	for name, f := range hostFuncs {
		importSigs[name] = f.sig
	}
}

func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	for name, f := range hostFuncs {
		fn := f.fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
				cs, _ := ctx.Value(callKey{}).(*callState)
				if cs == nil {
					st[0] = uint64(abi.StatusUnavailable)
					return
				}
				cs.countHostCall()
				if cs.inAlloc {
					cs.reentrant = true
					panic(errReentrant)
				}
				st[0] = uint64(uint32(fn(cs.context(), cs, m, st)))
			}), f.sig.params, f.sig.results).
			WithName(name).
			Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// read copies [ptr, ptr+n) of guest memory, bounded by MaxOutputBytes.
func (cs *callState) read(m api.Module, ptr, n uint64) ([]byte, abi.Status) {
	p, l := uint32(ptr), uint32(n)
	if int64(l) > int64(cs.spec.limits.MaxOutputBytes) {
		return nil, abi.StatusTooLarge
	}
	if l == 0 {
		return nil, abi.StatusOK
	}
	b, ok := m.Memory().Read(p, l)
	if !ok {
		return nil, abi.StatusBadPointer
	}
	return bytes.Clone(b), abi.StatusOK
}

func (cs *callState) readString(m api.Module, ptr, n uint64) (string, abi.Status) {
	p, l := uint32(ptr), uint32(n)
	if int64(l) > int64(cs.spec.limits.MaxOutputBytes) {
		return "", abi.StatusTooLarge
	}
	if l == 0 {
		return "", abi.StatusOK
	}
	b, ok := m.Memory().Read(p, l)
	if !ok {
		return "", abi.StatusBadPointer
	}
	return string(b), abi.StatusOK // one copy, not read's and string's
}

// writeResult hands data to the guest: the host calls the guest's
// adkhost_alloc for room, writes data there and the block's address and
// length at retPtr and retLen. The guest owns the block. Nothing is written
// unless status is OK.
func (cs *callState) writeResult(ctx context.Context, m api.Module, data []byte, status abi.Status, retPtr, retLen uint64) abi.Status {
	if status != abi.StatusOK {
		return status
	}
	mem := m.Memory()
	rp, rl := uint32(retPtr), uint32(retLen)
	if _, ok := mem.Read(rp, 4); !ok {
		return abi.StatusBadPointer
	}
	if _, ok := mem.Read(rl, 4); !ok {
		return abi.StatusBadPointer
	}
	if len(data) > cs.spec.limits.MaxInputBytes {
		return abi.StatusTooLarge
	}
	var ptr uint32
	if len(data) > 0 {
		alloc := m.ExportedFunction(abi.ExportAlloc)
		if cs.native != nil {
			alloc = cs.native.alloc
		}
		cs.inAlloc = true
		res, err := alloc.Call(ctx, uint64(len(data)))
		cs.inAlloc = false
		if err != nil {
			if cs.reentrant {
				panic(errReentrant) // one error, not one per level
			}
			// The guest trapped inside its allocator: fail the whole call.
			panic(fmt.Errorf("%s during a host call: %w", abi.ExportAlloc, err))
		}
		ptr = uint32(res[0])
		if ptr == 0 || !mem.Write(ptr, data) {
			return abi.StatusAllocFailed
		}
	}
	var word [4]byte
	binary.LittleEndian.PutUint32(word[:], ptr)
	mem.Write(rp, word[:])
	binary.LittleEndian.PutUint32(word[:], uint32(len(data)))
	mem.Write(rl, word[:])
	return abi.StatusOK
}

// fakeRand is random_get without the random capability: the same
// pseudo-random bytes in every instance (splitmix64 from zero), a stream
// within one, as wazero's default without a source (math/rand seeded with
// 42). That default cost every instance 36k instructions to seed and kept
// 4.9 KB per instance for its life; this is one word.
type fakeRand struct{ x uint64 }

func (r *fakeRand) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 8 {
		r.x += 0x9e3779b97f4a7c15
		z := r.x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], z)
		copy(p[i:], b[:])
	}
	return len(p), nil
}
