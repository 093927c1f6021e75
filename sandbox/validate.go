package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
)

// Before anything rewrites or compiles a module, two checks run on the
// bytes as uploaded:
//
//   - checkShape reads the section headers and the item counts of each
//     vector, and refuses a module past Complexity (ErrTooComplex): a
//     1.4 MB module of 100,000 functions and 100,000 globals took 40-61 s
//     of both cores to compile, and the limits keep compile time to what
//     real modules need. It also caps every table (capTables).
//   - validate runs wazero's full validation of the module, unmodified,
//     with the interpreter engine (which validates exactly as the
//     compiler does, at a fraction of its cost). instrument then only ever
//     sees valid modules: an invalid module whose code names the globals
//     instrument adds, just past its own, would otherwise become valid
//     after the rewrite and reach the interrupt and depth globals.

// ErrTooComplex: the module has more functions, globals, types, tables,
// segments, imports or exports than Complexity allows, or a table larger
// than MaxTableElements. It is refused before it is compiled.
var ErrTooComplex = errors.New("module too complex")

// Complexity bounds the shape of a module, checked before it is compiled.
// A zero field takes its default; the defaults are far above what real
// guests need (a 4 MB Go guest: 2,471 functions, 2 globals, 10,167 locals
// in all). wazero's compile time grows with globals times functions
// (10,000 × 100,000: 4.8 s; the 100,000 × 100,000 of an attack: ~50 s),
// which the defaults keep near a second.
type Complexity struct {
	MaxFunctions, MaxGlobals, MaxTypes     uint32
	MaxImports, MaxExports                 uint32
	MaxDataSegments, MaxElementSegments    uint32
	MaxTables                              uint32
	MaxLocalsPerFunction, MaxFunctionBytes uint32
	// MaxTableElements is the most elements the module's tables may ever
	// hold together: each table's maximum is lowered to its minimum plus
	// an equal share of what the minimums leave (capTables), so table.grow
	// past it fails (returns -1) as the spec says; tables whose minimums
	// add up to more are refused.
	MaxTableElements uint32
	// MaxBranchesPerLabel bounds the branches (br, br_if, br_table
	// entries) to one label of a function, and MaxBranchTableEntries the
	// br_table entries of one function: compile time grows with the square
	// of the first and memory with the second (branches.go).
	MaxBranchesPerLabel, MaxBranchTableEntries uint32
}

// Default complexity limits.
const (
	DefaultMaxFunctions          = 100_000
	DefaultMaxGlobals            = 2_000 // compile time grows with globals × functions: 2,000 × 100,000 is about a second
	DefaultMaxTypes              = 10_000
	DefaultMaxImports            = 1_000
	DefaultMaxExports            = 10_000
	DefaultMaxDataSegments       = 100_000
	DefaultMaxElementSegments    = 10_000
	DefaultMaxTables             = 100
	DefaultMaxLocalsPerFunction  = 50_000
	DefaultMaxFunctionBytes      = 8 << 20
	DefaultMaxTableElements      = 1 << 20 // 8 MiB of funcref slots
	DefaultMaxBranchesPerLabel   = 40_000  // the Python runtime has 12,848
	DefaultMaxBranchTableEntries = 100_000 // the Python runtime has 14,691 in one function
)

// WithDefaults returns c with every zero field set to its default.
func (c Complexity) WithDefaults() Complexity {
	set := func(p *uint32, d uint32) {
		if *p == 0 {
			*p = d
		}
	}
	set(&c.MaxFunctions, DefaultMaxFunctions)
	set(&c.MaxGlobals, DefaultMaxGlobals)
	set(&c.MaxTypes, DefaultMaxTypes)
	set(&c.MaxImports, DefaultMaxImports)
	set(&c.MaxExports, DefaultMaxExports)
	set(&c.MaxDataSegments, DefaultMaxDataSegments)
	set(&c.MaxElementSegments, DefaultMaxElementSegments)
	set(&c.MaxTables, DefaultMaxTables)
	set(&c.MaxLocalsPerFunction, DefaultMaxLocalsPerFunction)
	set(&c.MaxFunctionBytes, DefaultMaxFunctionBytes)
	set(&c.MaxTableElements, DefaultMaxTableElements)
	set(&c.MaxBranchesPerLabel, DefaultMaxBranchesPerLabel)
	set(&c.MaxBranchTableEntries, DefaultMaxBranchTableEntries)
	return c
}

// checkShape refuses a module past c (ErrTooComplex) and returns it with
// every table capped at c.MaxTableElements. Malformed bytes are left for
// validate to report with wazero's message.
func checkShape(wasm []byte, c Complexity) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return wasm, nil // validate says what is wrong
	}
	tooMany := func(what string, n, limit uint32) error {
		return fmt.Errorf("%w: %d %s, at most %d", ErrTooComplex, n, what, limit)
	}
	var imports uint32
	var arities [][2]uint32 // each type's parameters and results
	out := wasm
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		at := r.i
		id := r.byte()
		n := r.u32()
		start := r.i
		body := r.take(int(n))
		if r.err != nil {
			return nil, fmt.Errorf("%w: section at byte %d: %v", ErrCompile, at, r.err)
		}
		count := func() uint32 {
			br := reader{b: body}
			return br.u32()
		}
		// Every item of a vector takes at least a byte: a count past the
		// bytes left is a lie wazero's decoder would believe, allocating
		// for it before reading (2^26 locals cost it 28 GB).
		if id != secCustom && id != secStart && id != secDataCount {
			br := reader{b: body}
			k := br.u32()
			if br.err != nil {
				// wazero's decoder reads a malformed count past its
				// section (a truncated table count made it allocate 46 GB):
				// refuse what the spec cannot read.
				return nil, fmt.Errorf("%w: section %d: its item count: %v", ErrCompile, id, br.err)
			}
			if uint64(k) > uint64(len(body)-br.i) {
				return nil, fmt.Errorf("%w: section %d declares %d items in %d bytes", ErrTooComplex, id, k, len(body)-br.i)
			}
		}
		switch id {
		case secCustom:
			if err := checkCustom(body); err != nil {
				return nil, err
			}
		case secType:
			if k := count(); k > c.MaxTypes {
				return nil, tooMany("types", k, c.MaxTypes)
			}
			var err error
			if arities, err = checkTypes(body); err != nil {
				return nil, err
			}
		case secImport:
			imports = count()
			if imports > c.MaxImports {
				return nil, tooMany("imports", imports, c.MaxImports)
			}
			// Imported tables are refused: no host module provides one,
			// and their size would escape MaxTableElements.
			tables := 0
			if err := walkSection(body, func(r *reader) {
				if importEntry(r) == 0x01 {
					tables++
				}
			}); err != nil {
				return nil, err
			}
			if tables > 0 {
				return nil, fmt.Errorf("%w: the module imports a table; a module must define its own tables", ErrImport)
			}
		case secFunction:
			if k := count(); k > c.MaxFunctions {
				return nil, tooMany("functions", k, c.MaxFunctions)
			}
			if err := walkSection(body, func(r *reader) { r.u32() }); err != nil {
				return nil, err
			}
		case secMemory:
			if err := walkSection(body, func(r *reader) { r.limits() }); err != nil {
				return nil, err
			}
		case secStart, secDataCount:
			br := reader{b: body}
			br.u32()
			if br.err == nil && br.i != len(body) {
				br.err = fmt.Errorf("%d bytes after its index", len(body)-br.i)
			}
			if br.err != nil {
				return nil, fmt.Errorf("%w: section %d: %v", ErrCompile, id, br.err)
			}
		case secTable:
			capped, err := capTables(body, c)
			if err != nil {
				return nil, err
			}
			if capped != nil {
				// Rebuild the module with the new table section (its size
				// may differ by the bytes of the added maxima).
				var b []byte
				b = append(b, wasm[:at]...)
				b = append(b, secTable)
				b = appendU32(b, uint32(len(capped)))
				b = append(b, capped...)
				b = append(b, wasm[start+int(n):]...)
				out = b
			}
		case secGlobal:
			if k := count(); k > c.MaxGlobals {
				return nil, tooMany("globals", k, c.MaxGlobals)
			}
			if err := walkSection(body, func(r *reader) { r.byte(); r.byte(); r.constExpr() }); err != nil {
				return nil, err
			}
		case secExport:
			if k := count(); k > c.MaxExports {
				return nil, tooMany("exports", k, c.MaxExports)
			}
			if err := walkSection(body, func(r *reader) { r.name(); r.byte(); r.u32() }); err != nil {
				return nil, err
			}
		case secElem:
			if k := count(); k > c.MaxElementSegments {
				return nil, tooMany("element segments", k, c.MaxElementSegments)
			}
			if err := walkSection(body, elemSegment); err != nil {
				return nil, err
			}
		case secData:
			if k := count(); k > c.MaxDataSegments {
				return nil, tooMany("data segments", k, c.MaxDataSegments)
			}
			if err := walkSection(body, dataSegment); err != nil {
				return nil, err
			}
		case secCode:
			if err := checkBodies(body, c, arities); err != nil {
				return nil, err
			}
		}
	}
	if imports > c.MaxImports {
		return nil, tooMany("imports", imports, c.MaxImports)
	}
	return out, nil
}

// walkSection reads every item of a vector section with item, and refuses
// (ErrTooComplex) one whose lengths and counts run past its bytes: wazero's
// decoder allocates what a length declares before it reads it (a data
// segment declaring 3.7 GB in a 40-byte module cost it 3.7 GiB). Items it
// cannot read otherwise are left for validate to report.
func walkSection(body []byte, item func(*reader)) error {
	r := reader{b: body}
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		item(&r)
	}
	if r.err != nil && errors.Is(r.err, errPastEnd) {
		return fmt.Errorf("%w: %v", ErrTooComplex, r.err)
	}
	if r.err != nil {
		return fmt.Errorf("%w: %v", ErrCompile, r.err)
	}
	return nil
}

// name reads a length-prefixed name.
func (r *reader) name() { r.vecBytes() }

// vecBytes reads a length-prefixed byte vector, refusing a length past
// the bytes left.
func (r *reader) vecBytes() {
	n := r.u32()
	if r.err == nil && int64(n) > int64(len(r.b)-r.i) {
		r.pastEnd(n)
		return
	}
	r.take(int(n))
}

// count reads a vector count, refusing one past the bytes left (an item
// takes at least one).
func (r *reader) count() uint32 {
	n := r.u32()
	if r.err == nil && int64(n) > int64(len(r.b)-r.i) {
		r.pastEnd(n)
		return 0
	}
	return n
}

// errPastEnd marks a declared length longer than what follows.
var errPastEnd = errors.New("declares more than the bytes that follow")

func (r *reader) pastEnd(n uint32) {
	if r.err == nil {
		r.err = fmt.Errorf("a length of %d %w (%d)", n, errPastEnd, len(r.b)-r.i)
	}
	r.i = len(r.b)
}

// checkCustom checks the lengths of a custom section's name and, for the
// "name" section (which wazero decodes for stack traces), of its
// subsections and name maps.
func checkCustom(body []byte) error {
	r := reader{b: body}
	n := r.u32()
	if r.err != nil {
		return fmt.Errorf("%w: a custom section's name: %v", ErrCompile, r.err)
	}
	if int64(n) > int64(len(r.b)-r.i) {
		return fmt.Errorf("%w: a custom section's name of %d bytes in %d", ErrTooComplex, n, len(r.b)-r.i)
	}
	if string(r.take(int(n))) != "name" || r.err != nil {
		return nil
	}
	for r.i < len(r.b) && r.err == nil {
		id := r.byte()
		size := r.u32()
		if r.err == nil && int64(size) > int64(len(r.b)-r.i) {
			r.pastEnd(size)
			break
		}
		sub := reader{b: r.take(int(size))}
		switch id {
		case 0: // module name
			sub.vecBytes()
		case 1: // function names: a name map
			for k := sub.count(); k > 0 && sub.err == nil; k-- {
				sub.u32()
				sub.vecBytes()
			}
		case 2: // local names: an indirect name map
			for k := sub.count(); k > 0 && sub.err == nil; k-- {
				sub.u32()
				for j := sub.count(); j > 0 && sub.err == nil; j-- {
					sub.u32()
					sub.vecBytes()
				}
			}
		}
		if sub.err != nil && errors.Is(sub.err, errPastEnd) {
			r.err = sub.err
		}
	}
	if r.err != nil && errors.Is(r.err, errPastEnd) {
		return fmt.Errorf("%w: name section: %v", ErrTooComplex, r.err)
	}
	if r.err != nil {
		return fmt.Errorf("%w: name section: %v", ErrCompile, r.err)
	}
	return nil
}

// importEntry reads one import and returns its kind (0 function, 1 table,
// 2 memory, 3 global, 4 tag).
func importEntry(r *reader) byte {
	r.name()
	r.name()
	kind := r.byte()
	switch kind {
	case 0x00:
		r.u32()
	case 0x01:
		r.byte()
		r.limits()
	case 0x02:
		r.limits()
	case 0x03:
		r.byte()
		r.byte()
	case 0x04:
		r.byte()
		r.u32()
	default:
		r.fail("import kind %#x", kind)
	}
	return kind
}

func dataSegment(r *reader) {
	switch flags := r.u32(); flags {
	case 0:
		r.constExpr()
	case 1:
	case 2:
		r.u32()
		r.constExpr()
	default:
		r.fail("data segment flags %d", flags)
		return
	}
	r.vecBytes()
}

func elemSegment(r *reader) {
	flags := r.u32()
	if flags > 7 {
		r.fail("element segment flags %d", flags)
		return
	}
	if flags == 2 || flags == 6 {
		r.u32() // table
	}
	if flags&1 == 0 {
		r.constExpr() // offset
	}
	if flags&3 != 0 {
		r.byte() // element kind or reference type
	}
	n := r.count()
	for ; n > 0 && r.err == nil; n-- {
		if flags&4 != 0 {
			r.constExpr()
		} else {
			r.u32()
		}
	}
}

// checkBodies bounds each function body's bytes, declared locals and
// branches (branchCount), and the locals and branches of all functions
// together.
func checkBodies(sec []byte, c Complexity, arities [][2]uint32) error {
	r := reader{b: sec}
	n := r.u32()
	var total uint64
	branches := branchCount{c: c, arities: arities}
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		if size > c.MaxFunctionBytes {
			return fmt.Errorf("%w: function %d has %d bytes of code, at most %d", ErrTooComplex, i, size, c.MaxFunctionBytes)
		}
		if int64(size) > int64(len(r.b)-r.i) {
			return fmt.Errorf("%w: function %d declares %d bytes of code, past the section's end", ErrTooComplex, i, size)
		}
		fn := reader{b: r.take(int(size))}
		var locals uint64
		for k := fn.count(); k > 0 && fn.err == nil; k-- {
			locals += uint64(fn.u32())
			fn.byte()
			if locals > uint64(c.MaxLocalsPerFunction) {
				return fmt.Errorf("%w: function %d declares more than %d locals", ErrTooComplex, i, c.MaxLocalsPerFunction)
			}
		}
		if total += locals; total > maxLocalsTotal {
			return fmt.Errorf("%w: the functions declare more than %d locals together", ErrTooComplex, maxLocalsTotal)
		}
		if fn.err != nil {
			return fmt.Errorf("%w: function %d's locals: %v", ErrCompile, i, fn.err)
		}
		if err := branches.body(i, locals, fn.b[fn.i:]); err != nil {
			return err
		}
	}
	if r.err != nil {
		return fmt.Errorf("%w: code section: %v", ErrCompile, r.err)
	}
	return branches.check()
}

// maxLocalsTotal bounds the locals of a module's functions together
// (wazero's validation allocates about 64 bytes a local; a 4 MB Go guest
// declares about 10,000).
const maxLocalsTotal = 2_000_000

// maxTypeArity bounds the parameters and results of a function type.
const maxTypeArity = 1000

// checkTypes bounds the parameters and results of each function type, and
// returns their numbers by type.
func checkTypes(body []byte) ([][2]uint32, error) {
	r := reader{b: body}
	var out [][2]uint32
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		if form := r.byte(); form != 0x60 {
			if r.err != nil {
				break
			}
			return nil, fmt.Errorf("%w: type form %#x; this host knows function types (0x60)", ErrCompile, form)
		}
		var a [2]uint32
		for j := range a {
			k := r.u32()
			if k > maxTypeArity || int(k) > len(r.b)-r.i {
				return nil, fmt.Errorf("%w: a function type with %d parameters or results, at most %d", ErrTooComplex, k, maxTypeArity)
			}
			r.take(int(k))
			a[j] = k
		}
		out = append(out, a)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: type section: %v", ErrCompile, r.err)
	}
	return out, nil
}

// capTables returns the table section with the tables' maximums adding up
// to at most c.MaxTableElements, or nil when no table needs a change: the
// bound is per module, not per table, or a module of MaxTables tables
// would hold MaxTables times as much. Each table may grow by an equal
// share of what the tables' minimums leave (one table: all of it). Tables
// whose minimums already add up to more are refused.
func capTables(body []byte, c Complexity) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	if n > c.MaxTables {
		return nil, fmt.Errorf("%w: %d tables, at most %d", ErrTooComplex, n, c.MaxTables)
	}
	type table struct {
		ref      byte
		min, max uint32
		hasMax   bool
	}
	var tables []table
	var mins uint64
	for i := uint32(0); i < n && r.err == nil; i++ {
		t := table{ref: r.byte()}
		flags := r.byte()
		if flags > 1 {
			return nil, fmt.Errorf("%w: table %d has limits of form %#x; this host knows 0 and 1", ErrCompile, i, flags)
		}
		t.min = r.u32()
		if flags == 1 {
			t.max, t.hasMax = r.u32(), true
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: table section: %v", ErrCompile, r.err)
		}
		if t.min > c.MaxTableElements {
			return nil, fmt.Errorf("%w: table %d starts with %d elements, at most %d", ErrTooComplex, i, t.min, c.MaxTableElements)
		}
		if mins += uint64(t.min); mins > uint64(c.MaxTableElements) {
			return nil, fmt.Errorf("%w: tables 0-%d start with %d elements in all, at most %d for the module's tables together", ErrTooComplex, i, mins, c.MaxTableElements)
		}
		tables = append(tables, t)
	}
	if r.err == nil && r.i != len(body) {
		r.err = fmt.Errorf("%d bytes after the last table", len(body)-r.i)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: table section: %v", ErrCompile, r.err)
	}
	var share uint32
	if n > 0 {
		share = uint32((uint64(c.MaxTableElements) - mins) / uint64(n))
	}
	out := appendU32(nil, n)
	changed := false
	for _, t := range tables {
		limit := t.min + share
		if !t.hasMax || t.max > limit {
			t.max, changed = limit, true
		}
		out = append(out, t.ref, 0x01)
		out = appendU32(out, t.min)
		out = appendU32(out, t.max)
	}
	if !changed {
		return nil, nil
	}
	return out, nil
}

// validator validates modules with wazero's interpreter engine: the same
// decoding and validation as the compiler, without generating code.
type validator struct {
	once sync.Once
	rt   wazero.Runtime
}

// validate reports whether wasm is a valid module, with wazero's message.
func (v *validator) validate(ctx context.Context, wasm []byte) error {
	v.once.Do(func() { v.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter()) })
	m, err := v.rt.CompileModule(ctx, wasm)
	if err != nil {
		return err
	}
	return m.Close(ctx)
}

func (v *validator) close(ctx context.Context) error {
	ran := false
	v.once.Do(func() { ran = true })
	if ran || v.rt == nil {
		return nil
	}
	return v.rt.Close(ctx)
}
