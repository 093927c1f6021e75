package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/adkhost/adkhost/abi"
)

// Transport is how the host talks to a module.
type Transport int

const (
	// Native is the fast path on wazero: guest-exported adkhost_alloc and
	// adkhost_free, input written into guest memory, output returned as a
	// packed (ptr<<32 | len), host functions imported from "adkhost".
	Native Transport = iota + 1
	// Extism runs a module built with an Extism PDK (it imports
	// "extism:host/env") through github.com/extism/go-sdk: the same hooks
	// and JSON, with the PDK's input and output, and one host function,
	// adkhost_host, taking a JSON abi.HostCall.
	Extism
)

func (t Transport) String() string {
	switch t {
	case Native:
		return "native"
	case Extism:
		return "extism"
	}
	return "Transport(" + strconv.Itoa(int(t)) + ")"
}

// Module is a compiled, validated module. It is immutable and safe for
// concurrent use; it lives until its Runtime is closed.
type Module struct {
	digest    string
	transport Transport
	describe  abi.Describe
	minPages  uint32
	compiled  wazero.CompiledModule // Native
	wasm      []byte                // Extism: go-sdk compiles per pool
	// rt is the runtime compiled belongs to. interruptible: compiled is
	// instrumented (interrupt.go), so the host stops it through its
	// interrupt global; otherwise rt is the guarded runtime.
	rt            wazero.Runtime
	interruptible bool
}

// Digest returns "sha256:" and the hex sha256 of the module's bytes.
func (m *Module) Digest() string { return m.digest }

// Transport returns how the host calls the module.
func (m *Module) Transport() Transport { return m.transport }

// Describe returns the module's describe message. It must not be modified.
func (m *Module) Describe() *abi.Describe { return &m.describe }

// short names the module in errors: its digest's first 12 hex digits.
func (m *Module) short() string { return shortDigest(m.digest) }

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// sig is a function signature, printed as in ABI.md: "(i32, i32) -> i64".
type sig struct{ params, results []api.ValueType }

func (s sig) String() string {
	names := func(ts []api.ValueType) string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = api.ValueTypeName(t)
		}
		return strings.Join(out, ", ")
	}
	res := names(s.results)
	if len(s.results) != 1 {
		res = "(" + res + ")"
	}
	return "(" + names(s.params) + ") -> " + res
}

func sigOf(d api.FunctionDefinition) sig { return sig{d.ParamTypes(), d.ResultTypes()} }

func (s sig) equal(o sig) bool {
	return slices.Equal(s.params, o.params) && slices.Equal(s.results, o.results)
}

// The export signatures of each transport.
var (
	sigMarker       = sig{}
	sigMarkerExtism = sig{nil, []api.ValueType{i32}}
	sigAlloc        = sig{[]api.ValueType{i32}, []api.ValueType{i32}}
	sigFree         = sig{[]api.ValueType{i32, i32}, nil}
	sigHook         = sig{[]api.ValueType{i32, i32}, []api.ValueType{i64}}
	sigExtismHook   = sig{nil, []api.ValueType{i32}}
	sigExtismHost   = sig{[]api.ValueType{i64}, []api.ValueType{i64}}
)

// load compiles and validates; Runtime.Load caches it.
func (r *Runtime) load(ctx context.Context, digest string, wasm []byte) (*Module, error) {
	fail := func(kind error, format string, args ...any) error {
		return fmt.Errorf("sandbox: module %s: %w: %s", shortDigest(digest), kind, fmt.Sprintf(format, args...))
	}
	// A module rewritten before (the disk cache, by digest) passed every
	// check then: a process restarting with a warm cache pays none of them.
	rt, code, interruptible := r.rt, wasm, false
	cached, bad := r.openRewrite(digest)
	if bad {
		r.logger.Warn("cached rewrite of the module failed its checks; rebuilding it", "module", shortDigest(digest))
	}
	if cached != nil {
		defer cached.release()
		code, interruptible = cached.body, true
	} else {
		var err error
		if code, err = checkShape(wasm, r.complexity); err != nil {
			return nil, fmt.Errorf("sandbox: module %s: %w", shortDigest(digest), err)
		}
	}
	// Compiles run one at a time per half of the CPUs: a burst of uploads
	// queues instead of taking every core from the calls being served.
	select {
	case r.compiles <- struct{}{}:
		defer func() { <-r.compiles }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !interruptible && !importsExtism(code) {
		b, err := r.instrumented(ctx, digest, code)
		switch {
		case err == nil:
			code, interruptible = b, true
		case errors.Is(err, errInvalid):
			return nil, fail(ErrCompile, "%s", strings.TrimPrefix(err.Error(), errInvalid.Error()+": "))
		default:
			r.logger.Warn("module runs with slower deadline checks", "module", shortDigest(digest), "err", err)
			if rt, err = r.guardedRuntime(ctx); err != nil {
				return nil, err
			}
		}
	}
	var compiled wazero.CompiledModule
	var err error
	compile := func() { compiled, err = rt.CompileModule(compileContext(ctx), code) }
	if cached != nil {
		// wazero reads the mapped entry as it decodes.
		if ferr := guardFaults(compile); ferr != nil {
			return nil, fmt.Errorf("sandbox: module %s: %w", shortDigest(digest), ferr)
		}
	} else {
		compile()
	}
	if err != nil {
		return nil, fail(ErrCompile, "%v", err)
	}
	m := &Module{digest: digest, transport: Native, compiled: compiled, rt: rt, interruptible: interruptible}
	keep := false
	defer func() {
		if !keep {
			compiled.Close(ctx)
		}
	}()
	for _, imp := range compiled.ImportedFunctions() {
		if mod, _, _ := imp.Import(); mod == abi.ExtismEnvModule {
			m.transport = Extism
		}
	}
	exports := compiled.ExportedFunctions()

	// The version marker.
	var versions []string
	for name := range exports {
		if v, ok := strings.CutPrefix(name, abi.VersionExportPrefix); ok {
			versions = append(versions, v)
		}
	}
	slices.Sort(versions)
	if len(versions) == 0 {
		return nil, fail(ErrNoABIVersion, "it exports no function named %s<N>; an ABI v%d module exports %s", abi.VersionExportPrefix, abi.Version, abi.VersionExport)
	}
	marker, ok := exports[abi.VersionExport]
	if !ok {
		return nil, fail(ErrUnknownABIVersion, "it exports %s%s; this host speaks version %d (%s)", abi.VersionExportPrefix, strings.Join(versions, ", "+abi.VersionExportPrefix), abi.Version, abi.VersionExport)
	}
	if s := sigOf(marker); !s.equal(sigMarker) && !(m.transport == Extism && s.equal(sigMarkerExtism)) {
		return nil, fail(ErrExportSignature, "%s is %s, want %s", abi.VersionExport, s, sigMarker)
	}

	// Imports: only what the host provides.
	for _, imp := range compiled.ImportedFunctions() {
		mod, name, _ := imp.Import()
		switch {
		case mod == abi.WASIModule:
		case mod == abi.ImportModule && m.transport == Native:
			want, ok := importSigs[name]
			if !ok {
				return nil, fail(ErrImport, "%s.%s is not an ABI v%d host function", mod, name, abi.Version)
			}
			if s := sigOf(imp); !s.equal(want) {
				return nil, fail(ErrImport, "%s.%s is imported as %s, want %s", mod, name, s, want)
			}
		case mod == abi.ExtismEnvModule:
		case mod == abi.ExtismUserModule && m.transport == Extism:
			if name != abi.ImportExtismHost {
				return nil, fail(ErrImport, "%s.%s: the Extism transport provides only %s.%s", mod, name, mod, abi.ImportExtismHost)
			}
			if s := sigOf(imp); !s.equal(sigExtismHost) {
				return nil, fail(ErrImport, "%s.%s is imported as %s, want %s", mod, name, s, sigExtismHost)
			}
		default:
			return nil, fail(ErrImport, "%s.%s: a %s module may import only from %s", mod, name, m.transport, importModules(m.transport))
		}
	}
	for _, mem := range compiled.ImportedMemories() {
		mod, name, _ := mem.Import()
		return nil, fail(ErrImport, "memory %s.%s: a module must define its own memory", mod, name)
	}

	// Exports the transport needs.
	need := func(name string, want sig, why string) error {
		d, ok := exports[name]
		if !ok {
			return fail(ErrMissingExport, "%s, a function %s %s", name, want, why)
		}
		if s := sigOf(d); !s.equal(want) {
			return fail(ErrExportSignature, "%s is %s, want %s", name, s, want)
		}
		return nil
	}
	hookSig := sigHook
	if m.transport == Native {
		mem, ok := compiled.ExportedMemories()[abi.ExportMemory]
		if !ok {
			return nil, fail(ErrMissingExport, "the memory %q, which the native transport reads and writes", abi.ExportMemory)
		}
		m.minPages = mem.Min()
		if err := need(abi.ExportAlloc, sigAlloc, "that the native transport uses to pass input"); err != nil {
			return nil, err
		}
		if err := need(abi.ExportFree, sigFree, "that the native transport uses to release input and output"); err != nil {
			return nil, err
		}
	} else {
		hookSig = sigExtismHook
		// The bytes checkShape returned, its tables capped: the Extism
		// runtime compiles them again, and the upload's own let table.grow
		// go past MaxTableElements, outside the memory budget. Cloned: a
		// cached entry's mapping does not outlive Load.
		m.wasm = slices.Clone(code)
	}
	if err := need(abi.ExportDescribe, hookSig, "that declares the module's tools and hooks"); err != nil {
		return nil, err
	}
	for _, h := range abi.Hooks() {
		if d, ok := exports[h.Export()]; ok {
			if s := sigOf(d); !s.equal(hookSig) {
				return nil, fail(ErrExportSignature, "%s is %s, want %s", h.Export(), s, hookSig)
			}
		}
	}

	// The describe message, from the cache or from the module.
	d, raw := r.cachedDescribe(digest), []byte(nil)
	if d == nil {
		d, raw, err = r.describe(ctx, m)
	}
	if err != nil {
		var se *callError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("sandbox: module %s: %w: %s failed: %w", shortDigest(digest), ErrDescribe, abi.ExportDescribe, se.err)
		}
		// Wrapped, so that the cause (ErrTimeout, ErrCallDepth, ...) shows.
		return nil, fmt.Errorf("sandbox: module %s: %w: %w", shortDigest(digest), ErrDescribe, err)
	}
	if err := d.Validate(); err != nil {
		return nil, fail(ErrDescribe, "%v", err)
	}
	for _, h := range d.Hooks {
		if _, ok := exports[h.Export()]; !ok {
			return nil, fail(ErrMissingExport, "%s: the describe message lists hook %q", h.Export(), h)
		}
	}
	m.describe = *d
	if raw != nil {
		r.storeDescribe(digest, raw)
	}
	if m.transport == Extism {
		// go-sdk compiles the module in its own runtime, from the cache.
		compiled.Close(ctx)
		m.compiled = nil
	}
	keep = true
	return m, nil
}

func importModules(t Transport) string {
	if t == Native {
		return abi.ImportModule + " and " + abi.WASIModule
	}
	return abi.ExtismEnvModule + ", " + abi.ExtismUserModule + " and " + abi.WASIModule
}

// describe runs adkhost_describe in a fresh instance with default limits
// and no grants, and returns the message and its encoding.
func (r *Runtime) describe(ctx context.Context, m *Module) (*abi.Describe, []byte, error) {
	spec, err := newSpec(ctx, r, m, PoolConfig{Owner: "(load)"})
	if err != nil {
		return nil, nil, err
	}
	defer spec.close(ctx)
	in, err := spec.newInstance(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer in.close(ctx)
	input, err := abi.Encode(&abi.DescribeInput{})
	if err != nil {
		return nil, nil, err
	}
	out, _, err := spec.run(ctx, in, abi.ExportDescribe, input, nil)
	if err != nil {
		return nil, nil, &callError{err}
	}
	var d abi.Describe
	if err := abi.Decode(out, &d, spec.limits.MaxOutputBytes); err != nil {
		return nil, nil, err
	}
	return &d, out, nil
}

// callError marks an error of the call itself, not of its output.
type callError struct{ err error }

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }
