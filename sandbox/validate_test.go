package sandbox

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// wasmModule assembles a module from (id, body) sections.
func wasmModule(sections ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

func section(id byte, body []byte) []byte {
	return append(appendU32([]byte{id}, uint32(len(body))), body...)
}

func vec(items ...[]byte) []byte {
	out := appendU32(nil, uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

// forged is a module whose one function sets global index g while the
// module defines one global (index 0): g = 1, 2, 3 are the interrupt,
// countdown and depth globals instrument would add. The ABI version marker
// is exported so that only validity stands between it and a load.
func forged(g uint32) []byte {
	code := []byte{0x00}                    // no locals
	code = append(code, 0x41, 0x00)         // i32.const 0
	code = appendU32(append(code, 0x24), g) // global.set g
	code = append(code, 0x0b)               // end
	return wasmModule(
		section(secType, vec([]byte{0x60, 0x00, 0x00})),               // () -> ()
		section(secFunction, vec([]byte{0x00})),                       // func 0: type 0
		section(secMemory, vec([]byte{0x00, 0x01})),                   // memory 1
		section(secGlobal, vec([]byte{0x7f, 0x01, 0x41, 0x00, 0x0b})), // mut i32 = 0
		section(secExport, vec(append(appendName(nil, "adkhost_abi_version_1"), 0x00, 0x00))),
		section(secCode, vec(append(appendU32(nil, uint32(len(code))), code...))),
	)
}

// TestForgedInstrumentationGlobals: a module that is invalid as uploaded
// because its code names globals just past its own must be refused as
// invalid, though instrument would make those indices valid (they become
// the interrupt, countdown and depth globals). Validation runs on the
// bytes as uploaded, before any rewrite.
func TestForgedInstrumentationGlobals(t *testing.T) {
	ctx := context.Background()
	r, err := New(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	for g := uint32(1); g <= 3; g++ {
		wasm := forged(g)
		// Both guards hold on their own: the rewriter refuses to rewrite
		// it, and validation refuses it.
		if _, err := instrument(wasm); !errors.Is(err, errUninstrumentable) || !strings.Contains(err.Error(), "past the module's 1 globals") {
			t.Errorf("global %d: instrument = %v, want a refusal", g, err)
		}
		if verr := r.validator.validate(ctx, wasm); verr == nil {
			t.Fatalf("global %d: the forged module validates", g)
		}
		_, err := r.Load(ctx, wasm)
		if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "global") {
			t.Errorf("global %d: Load = %v, want ErrCompile naming the global", g, err)
		}
	}
	// The same module naming its own global loads as far as the ABI checks.
	ok := forged(0)
	if _, err := r.Load(ctx, ok); errors.Is(err, ErrCompile) || err == nil {
		t.Errorf("valid module: Load = %v, want a later refusal (no describe), not ErrCompile", err)
	}
}

// TestComplexityLimits: modules past the shape limits are refused before
// compiling, quickly, with the count and the limit.
func TestComplexityLimits(t *testing.T) {
	c := Complexity{MaxFunctions: 10, MaxGlobals: 5, MaxTableElements: 1000}.WithDefaults()
	funcs := make([][]byte, 11)
	for i := range funcs {
		funcs[i] = []byte{0x00}
	}
	_, err := checkShape(wasmModule(section(secType, vec([]byte{0x60, 0x00, 0x00})), section(secFunction, vec(funcs...))), c)
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "11 functions, at most 10") {
		t.Errorf("functions: %v", err)
	}
	globals := make([][]byte, 6)
	for i := range globals {
		globals[i] = []byte{0x7f, 0x00, 0x41, 0x00, 0x0b}
	}
	_, err = checkShape(wasmModule(section(secGlobal, vec(globals...))), c)
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "6 globals, at most 5") {
		t.Errorf("globals: %v", err)
	}
	_, err = checkShape(wasmModule(section(secTable, vec([]byte{0x70, 0x00, 0xe9, 0x07}))), c) // min 1001
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "table 0 starts with 1001 elements") {
		t.Errorf("table min: %v", err)
	}
	imp := append(appendName(appendName(nil, "env"), "t"), 0x01, 0x70, 0x00, 0x01)
	_, err = checkShape(wasmModule(section(secImport, vec(imp))), c)
	if !errors.Is(err, ErrImport) {
		t.Errorf("imported table: %v", err)
	}
}

// TestTablesCapped: a table without a maximum, or with one past
// MaxTableElements, gets MaxTableElements as its maximum, so table.grow
// past it fails as the spec says instead of growing outside every limit.
func TestTablesCapped(t *testing.T) {
	c := Complexity{MaxTableElements: 1000}.WithDefaults()
	for _, tc := range []struct {
		name  string
		table []byte
		want  []byte
	}{
		{"no maximum", []byte{0x70, 0x00, 0x01}, []byte{0x70, 0x01, 0x01, 0xe8, 0x07}},
		{"maximum too large", []byte{0x70, 0x01, 0x01, 0xff, 0xff, 0x03}, []byte{0x70, 0x01, 0x01, 0xe8, 0x07}},
		{"maximum within", []byte{0x70, 0x01, 0x01, 0x05}, []byte{0x70, 0x01, 0x01, 0x05}},
	} {
		in := wasmModule(section(secMemory, vec([]byte{0x00, 0x01})), section(secTable, vec(tc.table)), section(secCustom, []byte{0x01, 'x'}))
		out, err := checkShape(in, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := wasmModule(section(secMemory, vec([]byte{0x00, 0x01})), section(secTable, vec(tc.want)), section(secCustom, []byte{0x01, 'x'}))
		if !bytes.Equal(out, want) {
			t.Errorf("%s:\n got %x\nwant %x", tc.name, out, want)
		}
	}
}

// FuzzInstrumentValidity is the differential check of the rewriter: for
// any bytes, the instrumented module validates only if the original did,
// and the globals instrument adds are named by nothing but its own code
// and exports.
func FuzzInstrumentValidity(f *testing.F) {
	for g := uint32(0); g <= 4; g++ {
		f.Add(forged(g))
	}
	f.Add(wasmModule(section(secMemory, vec([]byte{0x00, 0x01}))))
	f.Add(callShapes())
	f.Add(branchy(brTable(100)))
	f.Add(branchy(seqIfs(100)))
	f.Add(branchy(multiValue(10, 10)))
	// Found by this target: 247M globals declared in 8 bytes made wazero's
	// decoder allocate gigabytes (refused now by checkShape).
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x000\x06\x06\xf5\xf5\xf5\xf500"))
	ctx := context.Background()
	var v validator
	defer v.close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if len(wasm) > 1<<16 {
			return
		}
		// As Runtime.Load does: the shape first (wazero's decoder believes
		// declared counts and allocates for them), then validation.
		wasm, err := checkShape(wasm, Complexity{}.WithDefaults())
		if errors.Is(err, errUnreadBody) && v.validate(ctx, wasm) == nil {
			t.Fatalf("checkShape cannot read a body of a valid module: %v", err)
		}
		if err != nil {
			return
		}
		out, err := instrument(wasm)
		if err != nil {
			return
		}
		// wazero's decoder allocates what a module declares: what passes
		// checkShape must not make it allocate much more than its size.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		origErr := v.validate(ctx, wasm)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Fatalf("validating %d bytes allocated %d MiB", len(wasm), grew>>20)
		}
		outErr := v.validate(ctx, out)
		if origErr != nil && outErr == nil {
			t.Fatalf("an invalid module became valid after instrument: %v", origErr)
		}
		if origErr == nil && outErr != nil {
			t.Fatalf("instrument broke a valid module: %v", outErr)
		}
		if origErr == nil {
			checkAddedGlobalsPrivate(t, wasm, out)
		}
	})
}

// checkAddedGlobalsPrivate fails unless every export of the added globals
// is instrument's own.
func checkAddedGlobalsPrivate(t *testing.T, orig, out []byte) {
	t.Helper()
	for r := (reader{b: out, i: 8}); r.i < len(r.b); {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil || id != secExport {
			continue
		}
		er := reader{b: body}
		for n := er.u32(); n > 0 && er.err == nil; n-- {
			name := string(er.take(int(er.u32())))
			kind := er.byte()
			idx := er.u32()
			if kind == 0x03 && name != interruptExport && name != depthExport && bytes.Contains(orig, []byte(name)) {
				// An export of the original: its index must be one of the
				// original's globals, which instrument leaves in place.
				origGlobals := globalCount(orig)
				if idx >= origGlobals {
					t.Fatalf("export %q names global %d, one instrument added (the original has %d)", name, idx, origGlobals)
				}
			}
		}
	}
}

// globalCount is the number of globals (imported and defined) of a valid
// module.
func globalCount(wasm []byte) uint32 {
	var n uint32
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		id := r.byte()
		body := r.take(int(r.u32()))
		switch id {
		case secImport:
			k, _, _ := countImportedGlobals(body)
			n += k
		case secGlobal:
			br := reader{b: body}
			n += br.u32()
		}
	}
	return n
}

// TestDeclaredCountsBounded: modules of a few bytes that declare millions
// of items. wazero's decoder allocates for a declared count before reading
// the items (2^26 locals: 28 GB; 2^26 imports: 7 GB), so checkShape
// refuses every such module before it reaches wazero.
func TestDeclaredCountsBounded(t *testing.T) {
	big := appendU32(nil, 1<<26)
	locals := append(append([]byte{0x01}, big...), 0x7f, 0x0b)
	withCode := func(code []byte) []byte {
		return wasmModule(section(secType, vec([]byte{0x60, 0x00, 0x00})), section(secFunction, vec([]byte{0x00})),
			section(secCode, append(appendU32([]byte{0x01}, uint32(len(code))), code...)))
	}
	for name, wasm := range map[string][]byte{
		"locals":       withCode(locals),
		"type params":  wasmModule(section(secType, append(append([]byte{0x01, 0x60}, big...), 0x7f))),
		"functions":    wasmModule(section(secFunction, append(big, 0x00))),
		"globals":      wasmModule(section(secGlobal, append(big, 0x7f, 0x00, 0x41, 0x00, 0x0b))),
		"imports":      wasmModule(section(secImport, append(big, 0x00))),
		"exports":      wasmModule(section(secExport, append(big, 0x00))),
		"elements":     wasmModule(section(secElem, append(big, 0x00))),
		"data":         wasmModule(section(secData, append(big, 0x00))),
		"fuzz finding": []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x000\x06\x06\xf5\xf5\xf5\xf500"),
	} {
		if _, err := checkShape(wasm, Complexity{}.WithDefaults()); !errors.Is(err, ErrTooComplex) {
			t.Errorf("%s: checkShape = %v, want ErrTooComplex", name, err)
		}
	}
}

// TestDeclaredLengthsBounded: byte lengths past the end of their section
// (a data segment of 3.7 GB in 40 bytes, found by FuzzInstrumentValidity:
// wazero allocated all of it) are refused before wazero reads them.
func TestDeclaredLengthsBounded(t *testing.T) {
	huge := appendU32(nil, 0xEDDDDDDD)
	for name, wasm := range map[string][]byte{
		"data segment": []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x000\v\x19\x11\x01\xdd\xdd\xdd\xdd\x0e000000000000000000"),
		"export name":  wasmModule(section(secExport, append(append([]byte{0x01}, huge...), 'x'))),
		"import name":  wasmModule(section(secImport, append(append([]byte{0x01}, huge...), 'x'))),
		"elements":     wasmModule(section(secElem, append(append([]byte{0x01, 0x00, 0x41, 0x00, 0x0b}, huge...), 0x00))),
		"code size":    wasmModule(section(secCode, append(append([]byte{0x01}, appendU32(nil, 1<<20)...), 0x00))),
		"custom name":  []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x000\x00\x06\xff\xff\xff\x7f00"),
		"name section": wasmModule(section(secCustom, append(append(appendName(nil, "name"), 0x01, 0x06), append(appendU32(nil, 1<<30), 0x00)...))),
	} {
		if _, err := checkShape(wasm, Complexity{}.WithDefaults()); !errors.Is(err, ErrTooComplex) {
			t.Errorf("%s: checkShape = %v, want ErrTooComplex", name, err)
		}
	}
}

// TestTablesCappedTogether: the bound is on the module's tables together,
// or MaxTables tables of MaxTableElements each would hold MaxTables times
// the bound (100 × 8 MiB per instance, outside the memory budget). Each
// table may grow by an equal share of what the minimums leave.
func TestTablesCappedTogether(t *testing.T) {
	c := Complexity{MaxTableElements: 1000}.WithDefaults()
	// Four tables without a maximum, minimums 0, 100, 0, 0: 900 left,
	// 225 each.
	tables := vec([]byte{0x70, 0x00, 0x00}, []byte{0x70, 0x00, 0x64}, []byte{0x70, 0x00, 0x00}, []byte{0x6f, 0x00, 0x00})
	out, err := checkShape(wasmModule(section(secMemory, vec([]byte{0x00, 0x01})), section(secTable, tables)), c)
	if err != nil {
		t.Fatal(err)
	}
	want := vec([]byte{0x70, 0x01, 0x00, 0xe1, 0x01}, []byte{0x70, 0x01, 0x64, 0xc5, 0x02}, []byte{0x70, 0x01, 0x00, 0xe1, 0x01}, []byte{0x6f, 0x01, 0x00, 0xe1, 0x01})
	if w := wasmModule(section(secMemory, vec([]byte{0x00, 0x01})), section(secTable, want)); !bytes.Equal(out, w) {
		t.Errorf("caps:\n got %x\nwant %x", out, w)
	}
	// Minimums adding up to more than the bound: refused, naming the sum.
	over := vec([]byte{0x70, 0x00, 0xf4, 0x03}, []byte{0x70, 0x00, 0xf4, 0x03}, []byte{0x70, 0x00, 0x01}) // 500 + 500 + 1
	_, err = checkShape(wasmModule(section(secMemory, vec([]byte{0x00, 0x01})), section(secTable, over)), c)
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "1001 elements in all, at most 1000") {
		t.Errorf("minimums over the bound: %v, want ErrTooComplex naming 1001 of 1000", err)
	}
}

// callShapes is a module with the function shapes instrument treats
// apart: a call-free function with a loop (no entry or exit code), one
// whose body starts with a loop (no entry check), and one that branches
// before its loop and calls (all of it).
func callShapes() []byte {
	body := func(code ...byte) []byte {
		return append(appendU32(nil, uint32(len(code)+1)), append([]byte{0x00}, code...)...)
	}
	return wasmModule(
		section(secType, vec([]byte{0x60, 0x00, 0x00})),
		section(secFunction, vec([]byte{0}, []byte{0}, []byte{0})),
		section(secMemory, vec([]byte{0x00, 0x01})),
		section(secCode, vec(
			body(0x03, 0x40, 0x0b, 0x0b), // loop end
			body(0x02, 0x40, 0x03, 0x40, 0x10, 0x00, 0x0b, 0x0b, 0x10, 0x00, 0x0b), // block loop call 0 end end call 0
			body(0x41, 0x01, 0x04, 0x40, 0x03, 0x40, 0x0b, 0x0b, 0x10, 0x01, 0x0b), // i32.const 1 if loop end end call 1
		)),
	)
}

func TestLoopFirst(t *testing.T) {
	for _, c := range []struct {
		expr []byte
		want bool
	}{
		{[]byte{0x03, 0x40, 0x0b, 0x0b}, true},                               // loop
		{[]byte{0x02, 0x40, 0x03, 0x40}, true},                               // block loop
		{[]byte{0x23, 0x00, 0x21, 0x01, 0x02, 0x40, 0x03, 0x40}, true},       // a Go guest's: global.get local.set block loop
		{[]byte{0x41, 0x01, 0x1a, 0x28, 0x02, 0x00, 0x1a, 0x03, 0x40}, true}, // i32.const drop i32.load drop loop
		{[]byte{0x41, 0x01, 0x04, 0x40, 0x03, 0x40}, false},                  // if loop
		{[]byte{0x10, 0x00, 0x03, 0x40}, false},                              // call loop
		{[]byte{0x0c, 0x00, 0x03, 0x40}, false},                              // br loop
		{[]byte{0x41, 0x00, 0x40, 0x00, 0x1a, 0x03, 0x40}, false},            // memory.grow loop
		{[]byte{0x0b}, false},                                                // end
		{[]byte{0x41}, false},                                                // truncated
		{nil, false},
	} {
		if got := loopFirst(c.expr); got != c.want {
			t.Errorf("loopFirst(% x) = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestInstrumentCallShapes checks each function of callShapes gets the
// code its shape needs, by counting the depth and countdown global writes
// in its rewritten body.
func TestInstrumentCallShapes(t *testing.T) {
	out, err := instrument(callShapes())
	if err != nil {
		t.Fatal(err)
	}
	// No globals in the module: 0 is the interrupt global, 1 the
	// countdown, 2 the depth.
	var bodies [][]byte
	for r := (reader{b: out, i: 8}); r.i < len(r.b); {
		id := r.byte()
		sec := r.take(int(r.u32()))
		if id != secCode {
			continue
		}
		cr := reader{b: sec}
		for n := cr.u32(); n > 0; n-- {
			bodies = append(bodies, cr.take(int(cr.u32())))
		}
	}
	count := func(b []byte, op, g byte) int { return bytes.Count(b, []byte{op, g}) }
	for i, want := range []struct{ depthSets, countdownSets int }{
		{0, 2}, // call-free: its loop's check only (decrement, reset)
		{3, 2}, // starts with a loop: entry (-1 at the limit, decrement), exit; the loop's check
		{3, 4}, // if before the loop, calls: entry with its check, exit, the loop's check
	} {
		if d, c := count(bodies[i], 0x24, 2), count(bodies[i], 0x24, 1); d != want.depthSets || c != want.countdownSets {
			t.Errorf("function %d: %d depth and %d countdown global.set, want %d and %d:\n% x", i, d, c, want.depthSets, want.countdownSets, bodies[i])
		}
	}
}
