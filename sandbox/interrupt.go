package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/adkhost/adkhost/abi"
)

// Stopping a guest at its deadline. wazero's own mechanism
// (RuntimeConfig.WithCloseOnContextDone) makes compiled code leave to Go at
// every loop header and starts a goroutine per call: a Go guest, whose
// every function is a loop, ran about 2.5 times slower with it, and each
// call paid about 1 µs. Instead, instrument rewrites a native module before
// it is compiled: every function entry and loop header decrements a
// counter global it adds (but the entries of small functions that call
// nothing, callFreeMaxBody), and every 1024th time
//
//   - leaves to Go with memory.grow 0, where the goroutine can be
//     preempted: compiled Wasm cannot be, and a guest that never left
//     would hold up the garbage collector's stop-the-world, and with it
//     every goroutine of the process, the timer below included;
//   - traps if the interrupt global it adds is not zero.
//
// The host sets the interrupt global from a timer (or when the caller's
// context ends), and the call fails with ErrTimeout. A module's start
// section is moved to an export, so that the host runs it under the same
// guard instead of inside wazero's instantiation.
//
// Bounding the call depth. wazero grows an instance's call stack up to a
// fixed 400 MB before it traps "stack overflow", outside any memory limit.
// instrument also adds a depth global, the frames the guest may still
// open: every function entry traps if it is zero and decrements it, and
// every exit increments it again; a small function that calls nothing
// goes without both, and adds at most one frame past the limit. Exits are the end of the body, return,
// and branches to the function's label; instrument wraps each body in a
// block so that all but return (rewritten to a branch to that block) and
// the tail calls (which increment before leaving) run one increment at
// the block's end. Calls out to host functions return normally, and a
// host function calling back into the guest (adkhost_alloc) nests
// balanced entries and exits. A trap skips the exits, but the instance is
// then discarded; the host resets the global before every call anyway.
// Before trapping at the limit, the entry sets the global to -1, so the
// host can tell that trap from any other (ErrCallDepth). Exception
// handling, which could unwind past exits, is not enabled in wazero and
// its instructions make a module uninstrumentable.

// Exports instrument adds. The names have a dot, which no ABI export has.
const (
	interruptExport = "adkhost.interrupt"
	depthExport     = "adkhost.depth"
	startExport     = "adkhost.start"
)

// errUninstrumentable: the module uses an instruction instrument does not
// know; it runs with wazero's slower context-done checks instead.
var errUninstrumentable = errors.New("cannot instrument")

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElem      = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders non-custom sections as the binary format requires.
func sectionRank(id byte) int {
	switch id {
	case secTag:
		return 55 // between memory (5) and global (6)
	case secDataCount:
		return 95 // between element (9) and code (10)
	}
	return int(id) * 10
}

// instrument returns wasm with the interrupt and depth globals, their
// checks, the start function moved to an export, and its data segments merged
// (mergeData). It fails with errUninstrumentable on
// anything it does not understand; the module is then run unchanged.
func instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("%w: not a wasm binary", errUninstrumentable)
	}
	type section struct {
		id   byte
		body []byte
	}
	var secs []section
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		id := r.byte()
		n := r.u32()
		body := r.take(int(n))
		if r.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", errUninstrumentable, id, r.err)
		}
		secs = append(secs, section{id, body})
	}

	// Global indices: imported globals first, then defined ones.
	var importedGlobals, definedGlobals uint32
	var start []byte
	var types []funcType
	var funcTypes []uint32 // the type index of each defined function
	hasMemory, hasDataCount := false, false
	for _, s := range secs {
		switch s.id {
		case secDataCount:
			hasDataCount = true
		case secType:
			t, err := parseTypes(s.body)
			if err != nil {
				return nil, err
			}
			types = t
		case secFunction:
			r := reader{b: s.body}
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				funcTypes = append(funcTypes, r.u32())
			}
			if r.err != nil {
				return nil, fmt.Errorf("%w: function section: %v", errUninstrumentable, r.err)
			}
		case secImport:
			n, mem, err := countImportedGlobals(s.body)
			if err != nil {
				return nil, err
			}
			importedGlobals, hasMemory = n, hasMemory || mem
		case secMemory:
			r := reader{b: s.body}
			hasMemory = hasMemory || r.u32() > 0
		case secGlobal:
			r := reader{b: s.body}
			definedGlobals = r.u32()
			if r.err != nil {
				return nil, fmt.Errorf("%w: global section: %v", errUninstrumentable, r.err)
			}
		case secStart:
			start = s.body
		}
	}
	// The sections instrument appends to must hold exactly their items:
	// appending to one with trailing bytes would turn those bytes into
	// items. And an export naming a global past the module's own would,
	// after the rewrite, name one of the added globals.
	for _, s := range secs {
		r := reader{b: s.body}
		switch s.id {
		case secExport:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.take(int(r.u32()))
				kind, idx := r.byte(), r.u32()
				if kind == 0x03 && idx >= importedGlobals+definedGlobals {
					r.fail("export of global %d, past the module's %d globals", idx, importedGlobals+definedGlobals)
				}
			}
		case secGlobal:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.byte() // value type
				r.byte() // mutability
				r.constExpr()
			}
		case secType:
			r.i = len(r.b) // parseTypes read it whole
		default:
			continue
		}
		if r.err == nil && r.i != len(r.b) {
			r.err = fmt.Errorf("%d bytes after the last item", len(r.b)-r.i)
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", errUninstrumentable, s.id, r.err)
		}
	}
	if !hasMemory {
		return nil, fmt.Errorf("%w: no memory for the memory.grow safepoint", errUninstrumentable)
	}
	gidx := importedGlobals + definedGlobals
	ctr := gidx + 1
	var check []byte
	check = appendU32(append(check, 0x23), ctr)         // global.get $ctr
	check = append(check, 0x41, 0x01, 0x6b)             // i32.const 1, i32.sub
	check = appendU32(append(check, 0x24), ctr)         // global.set $ctr
	check = appendU32(append(check, 0x23), ctr)         // global.get $ctr
	check = append(check, 0x45, 0x04, 0x40)             // i32.eqz, if
	check = append(check, 0x41, 0x80, 0x08)             //   i32.const 1024
	check = appendU32(append(check, 0x24), ctr)         //   global.set $ctr
	check = append(check, 0x41, 0x00, 0x40, 0x00, 0x1a) //   memory.grow 0, drop
	check = appendU32(append(check, 0x23), gidx)        //   global.get $interrupt
	check = append(check, 0x04, 0x40, 0x00, 0x0b)       //   if unreachable end
	check = append(check, 0x0b)                         // end

	depth := gidx + 2
	var enter, leave []byte
	enter = appendU32(append(enter, 0x23), depth) // global.get $depth
	enter = append(enter, 0x45, 0x04, 0x40)       // i32.eqz, if
	enter = append(enter, 0x41, 0x7f)             //   i32.const -1
	enter = appendU32(append(enter, 0x24), depth) //   global.set $depth
	enter = append(enter, 0x00, 0x0b)             //   unreachable, end
	enter = appendU32(append(enter, 0x23), depth) // global.get $depth
	enter = append(enter, 0x41, 0x01, 0x6b)       // i32.const 1, i32.sub
	enter = appendU32(append(enter, 0x24), depth) // global.set $depth
	leave = appendU32(append(leave, 0x23), depth) // global.get $depth
	leave = append(leave, 0x41, 0x01, 0x6a)       // i32.const 1, i32.add
	leave = appendU32(append(leave, 0x24), depth) // global.set $depth
	enterDepth := enter
	enter = append(slices.Clip(enter), check...)

	// Block types of the wrapper blocks: a function's results, as a type
	// [] -> [results] for more than one result, added when the module has
	// none.
	blockTypes := make([][]byte, len(types))
	var newTypes []funcType
	for i, t := range types {
		switch len(t.results) {
		case 0:
			blockTypes[i] = []byte{0x40}
		case 1:
			blockTypes[i] = t.results
		default:
			blockOf := func(u funcType) bool { return len(u.params) == 0 && bytes.Equal(u.results, t.results) }
			j := slices.IndexFunc(types, blockOf)
			if j < 0 {
				if k := slices.IndexFunc(newTypes, blockOf); k >= 0 {
					j = len(types) + k
				} else {
					j = len(types) + len(newTypes)
					newTypes = append(newTypes, funcType{results: t.results})
				}
			}
			blockTypes[i] = appendU32(nil, uint32(j))
		}
	}

	// mut i32 $interrupt = 0, mut i32 $ctr = 1024, mut i32 $depth
	newGlobal := []byte{0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41, 0x80, 0x08, 0x0b, 0x7f, 0x01, 0x41}
	newGlobal = appendS32(newGlobal, DefaultMaxCallDepth) // the host sets the pool's
	newGlobal = append(newGlobal, 0x0b)
	newExports := appendName(nil, interruptExport)
	newExports = append(newExports, 0x03) // global
	newExports = appendU32(newExports, gidx)
	newExports = appendName(newExports, depthExport)
	newExports = append(newExports, 0x03) // global
	newExports = appendU32(newExports, depth)
	nExports := uint32(2)
	if start != nil {
		newExports = appendName(newExports, startExport)
		newExports = append(newExports, 0x00) // func
		newExports = append(newExports, start...)
		nExports++
	}

	out := make([]byte, 0, len(wasm)+len(wasm)/8)
	out = append(out, wasm[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	haveGlobal, haveExport := false, false
	// insertMissing emits the global and export sections a module lacks,
	// before the first section that must follow them.
	insertMissing := func(before int) {
		if !haveGlobal && before > sectionRank(secGlobal) {
			emit(secGlobal, append(appendU32(nil, 3), newGlobal...))
			haveGlobal = true
		}
		if !haveExport && before > sectionRank(secExport) {
			emit(secExport, append(appendU32(nil, nExports), newExports...))
			haveExport = true
		}
	}
	// Trailing custom sections stay trailing: the added sections go before
	// them, so a decoder reads the module's end as it did before.
	lastNonCustom := -1
	for i, s := range secs {
		if s.id != secCustom {
			lastNonCustom = i
		}
	}
	for i, s := range secs {
		if s.id != secCustom {
			insertMissing(sectionRank(s.id))
		} else if i > lastNonCustom {
			insertMissing(1 << 30)
		}
		switch s.id {
		case secGlobal:
			b, err := appendVecItems(s.body, 3, newGlobal)
			if err != nil {
				return nil, err
			}
			emit(s.id, b)
			haveGlobal = true
		case secExport:
			b, err := appendVecItems(s.body, nExports, newExports)
			if err != nil {
				return nil, err
			}
			emit(s.id, b)
			haveExport = true
		case secStart:
			// Moved to startExport.
		case secType:
			var items []byte
			for _, t := range newTypes {
				items = append(items, 0x60)
				items = appendU32(items, 0)
				items = appendU32(items, uint32(len(t.results)))
				items = append(items, t.results...)
			}
			b, err := appendVecItems(s.body, uint32(len(newTypes)), items)
			if err != nil {
				return nil, err
			}
			emit(s.id, b)
		case secCode:
			bts := make([][]byte, len(funcTypes))
			for i, ti := range funcTypes {
				if int(ti) >= len(blockTypes) {
					return nil, fmt.Errorf("%w: function %d has type %d of %d", errUninstrumentable, i, ti, len(blockTypes))
				}
				bts[i] = blockTypes[ti]
			}
			b, err := instrumentCode(s.body, bodyCode{enter: enter, enterDepth: enterDepth, leave: leave, check: check, globals: gidx, types: uint32(len(types))}, bts)
			if err != nil {
				return nil, err
			}
			emit(s.id, b)
		case secData:
			if hasDataCount {
				emit(s.id, s.body)
			} else {
				emit(s.id, mergeData(s.body))
			}
		default:
			emit(s.id, s.body)
		}
	}
	insertMissing(1 << 30)
	return out, nil
}

// appendVecItems adds n items, already encoded, to the end of a vector.
func appendVecItems(vec []byte, n uint32, items []byte) ([]byte, error) {
	r := reader{b: vec}
	count := r.u32()
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", errUninstrumentable, r.err)
	}
	b := appendU32(make([]byte, 0, len(vec)+len(items)+5), count+n)
	b = append(b, vec[r.i:]...)
	return append(b, items...), nil
}

// countImportedGlobals returns the number of imported globals and whether
// a memory is imported.
func countImportedGlobals(body []byte) (uint32, bool, error) {
	r := reader{b: body}
	var globals uint32
	memory := false
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		switch importEntry(&r) {
		case 0x02:
			memory = true
		case 0x03:
			globals++
		}
	}
	if r.err != nil {
		return 0, false, fmt.Errorf("%w: import section: %v", errUninstrumentable, r.err)
	}
	return globals, memory, nil
}

// bodyCode is what instrumentCode inserts: enter at a function's entry,
// check after every loop instruction, leave at every exit. globals and
// types are the counts of the original module's globals and types: a body
// naming a global or type at or past them would name what instrument adds,
// and is refused (a valid module never does; this is the rewriter's own
// guarantee, independent of validation).
type bodyCode struct {
	enter, check, leave []byte
	// enterDepth is enter without check, for a body that reaches a loop
	// header, and its check, before anything could branch or call.
	enterDepth     []byte
	globals, types uint32
}

// callFree is the code of a function that calls nothing: loop checks only.
func (c bodyCode) callFree() bodyCode {
	c.enter, c.enterDepth, c.leave = nil, nil, nil
	return c
}

// loopFirst reports whether expr (a body after its locals) runs into a
// loop header through straight-line code only: blocks, locals, globals,
// constants, loads, stores and numeric instructions, no branch, call or
// if. The loop's check then runs right after the function's entry, and
// the entry need not run its own. A Go guest's functions all start so
// (the loop its resume points branch to). Anything this does not read is
// a no.
func loopFirst(expr []byte) bool {
	r := reader{b: expr}
	for r.err == nil && r.i < len(r.b) {
		switch op := r.byte(); {
		case op == 0x03: // loop
			return r.err == nil
		case op == 0x02: // block
			r.blockType()
		case op == 0x01 || op == 0x1a: // nop, drop
		case op >= 0x20 && op <= 0x24: // local.*, global.*
			r.u32()
		case op >= 0x28 && op <= 0x3e:
			r.memarg()
		case op == 0x41:
			r.s33()
		case op == 0x42:
			r.s64()
		case op == 0x43:
			r.take(4)
		case op == 0x44:
			r.take(8)
		case op >= 0x45 && op <= 0xc4:
		default:
			return false
		}
	}
	return false
}

// callFreeMaxBody is the largest function body (bytes) that goes without
// entry and exit code when it calls nothing. Such a function adds at most
// one frame past MaxCallDepth, and between two checks a caller runs at most
// this many bytes of straight-line code per call it makes. memcmp, strlen,
// a bump allocator, a Go guest's small leaf functions fit; the entry and
// exit code cost a C guest's tool call about a tenth of its guest
// instructions, much of it in such helpers (make bench-wasm's C row).
const callFreeMaxBody = 1024

// instrumentCode instruments every function body; blockTypes holds the
// block type of each function's results.
func instrumentCode(sec []byte, code bodyCode, blockTypes [][]byte) ([]byte, error) {
	r := reader{b: sec}
	n := r.u32()
	if r.err == nil && int(n) != len(blockTypes) {
		return nil, fmt.Errorf("%w: %d function bodies for %d functions", errUninstrumentable, n, len(blockTypes))
	}
	out := appendU32(make([]byte, 0, len(sec)+len(sec)/8), n)
	var body []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		fn := r.take(int(size))
		if r.err != nil {
			break
		}
		var err error
		var calls bool
		body, calls, err = instrumentBody(body[:0], fn, code, blockTypes[i])
		if err == nil && !calls && len(fn) <= callFreeMaxBody {
			// A small function that calls nothing opens no frame past
			// its own and runs no longer than its body between its loop
			// checks: it goes without the entry and exit code.
			body, _, err = instrumentBody(body[:0], fn, code.callFree(), blockTypes[i])
		}
		if err != nil {
			return nil, fmt.Errorf("%w: function %d: %v", errUninstrumentable, i, err)
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.err == nil && r.i != len(sec) {
		// Rebuilding from the bodies alone would drop these bytes, making
		// an invalid section valid.
		r.err = fmt.Errorf("%d bytes after the last function body", len(sec)-r.i)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: code section: %v", errUninstrumentable, r.err)
	}
	return out, nil
}

// instrumentBody rewrites one function body (locals, then expr) to
//
//	locals  enter  block (result ...)  expr'  end  leave  end
//
// where expr' is expr without its final end, with check after every loop,
// return as a branch to the new block, and leave before every tail call.
// A branch to the function's own label now targets the block, so every
// exit but a tail call runs leave once. calls reports whether the body
// calls anything (call, call_indirect and the tail calls).
func instrumentBody(out, fn []byte, code bodyCode, blockType []byte) (_ []byte, calls bool, _ error) {
	r := reader{b: fn}
	for n := r.u32(); n > 0 && r.err == nil; n-- { // locals
		r.u32()
		r.byte()
	}
	if r.err != nil {
		return nil, false, r.err
	}
	out = append(out, fn[:r.i]...)
	if loopFirst(fn[r.i:]) {
		out = append(out, code.enterDepth...)
	} else {
		out = append(out, code.enter...)
	}
	out = append(out, 0x02) // block
	out = append(out, blockType...)
	from := r.i
	nesting := uint32(0) // blocks open within expr
	for r.i < len(r.b) && r.err == nil {
		at := r.i
		op := r.byte()
		switch {
		case op == 0x03: // loop
			if t, ok := r.blockType(); ok && t >= code.types {
				r.fail("loop of type %d, past the module's %d types", t, code.types)
			}
			nesting++
			out = append(out, fn[from:r.i]...)
			out = append(out, code.check...)
			from = r.i
		case op == 0x02 || op == 0x04: // block, if
			if t, ok := r.blockType(); ok && t >= code.types {
				r.fail("block of type %d, past the module's %d types", t, code.types)
			}
			nesting++
		case op == 0x0b: // end
			if nesting > 0 {
				nesting--
				continue
			}
			if r.i != len(r.b) {
				r.fail("code after the function's end at %d", r.i)
				continue
			}
			out = append(out, fn[from:r.i]...) // ends the block
			out = append(out, code.leave...)
			out = append(out, 0x0b)
			return out, calls, nil
		case op == 0x0f: // return: br to the block, which leaves
			out = append(out, fn[from:at]...)
			out = appendU32(append(out, 0x0c), nesting)
			from = r.i
		case op == 0x12 || op == 0x13: // return_call, return_call_indirect
			calls = true
			// The callee's frame replaces this one: leave first.
			out = append(out, fn[from:at]...)
			out = append(out, code.leave...)
			from = at
			if t := r.u32(); op == 0x13 && t >= code.types {
				r.fail("return_call_indirect of type %d, past the module's %d types", t, code.types)
			}
			if op == 0x13 {
				r.u32()
			}
		case op <= 0x01 || op == 0x05 || op == 0x1a || op == 0x1b || op == 0xd1:
			// no immediate
		case op == 0x23 || op == 0x24: // global.get, global.set
			if g := r.u32(); g >= code.globals {
				r.fail("global %d, past the module's %d globals", g, code.globals)
			}
		case op == 0x0c || op == 0x0d: // br, br_if
			// The function's own label is nesting; a label past it is
			// invalid, and would name a label instrument adds.
			if l := r.u32(); l > nesting {
				r.fail("branch to label %d of %d at %d", l, nesting, at)
			}
		case op == 0x10: // call
			calls = true
			r.u32()
		case op == 0xd2 || op >= 0x20 && op <= 0x26:
			r.u32()
		case op == 0x0e: // br_table
			for k := uint64(r.u32()) + 1; k > 0 && r.err == nil; k-- {
				if l := r.u32(); l > nesting {
					r.fail("branch to label %d of %d at %d", l, nesting, at)
				}
			}
		case op == 0x11: // call_indirect
			calls = true
			if t := r.u32(); t >= code.types {
				r.fail("call_indirect of type %d, past the module's %d types", t, code.types)
			}
			r.u32()
		case op == 0x1c: // select t*
			for k := r.u32(); k > 0 && r.err == nil; k-- {
				r.byte()
			}
		default:
			r.plainImmediates(op, r.i-1)
		}
	}
	if r.err != nil {
		return nil, false, r.err
	}
	return nil, false, errors.New("no end")
}

// plainImmediates reads the immediates of op, read at offset at, an
// instruction that neither branches, calls nor opens a block: loads and
// stores, memory.size and memory.grow, constants, numeric instructions,
// ref.null and the 0xfc, 0xfd and 0xfe prefixes. Any other opcode fails r.
// The instrumenter and the compile-cost walk (branches.go) share it.
func (r *reader) plainImmediates(op byte, at int) {
	switch {
	case op >= 0x28 && op <= 0x3e:
		r.memarg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41:
		r.s33() // i32.const: an s32 reads as an s33
	case op == 0x42:
		r.s64()
	case op == 0x43:
		r.take(4)
	case op == 0x44:
		r.take(8)
	case op >= 0x45 && op <= 0xc4:
		// numeric, no immediate
	case op == 0xd0: // ref.null
		r.s33()
	case op == 0xfc:
		r.prefixFC()
	case op == 0xfd:
		r.prefixFD()
	case op == 0xfe:
		r.prefixFE()
	default:
		r.fail("opcode %#x at %d", op, at)
	}
}

// funcType is an entry of the type section, its value types as bytes.
type funcType struct{ params, results []byte }

// parseTypes reads the type section. Only the number types, v128 and the
// two reference types are known: a typed reference (function references,
// GC) makes the module uninstrumentable.
func parseTypes(body []byte) ([]funcType, error) {
	r := reader{b: body}
	valtypes := func() []byte {
		n := r.u32()
		vs := r.take(int(n))
		for _, v := range vs {
			if !(v >= 0x7b && v <= 0x7f || v == 0x70 || v == 0x6f) {
				r.fail("value type %#x", v)
			}
		}
		return vs
	}
	var types []funcType
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		if form := r.byte(); form != 0x60 {
			r.fail("type form %#x", form)
			break
		}
		p := valtypes()
		types = append(types, funcType{params: p, results: valtypes()})
	}
	if r.err == nil && r.i != len(r.b) {
		r.err = fmt.Errorf("%d bytes after the last type", len(r.b)-r.i)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: type section: %v", errUninstrumentable, r.err)
	}
	return types, nil
}

func (r *reader) prefixFC() {
	switch sub := r.u32(); {
	case sub <= 7: // trunc_sat
	case sub == 8: // memory.init
		r.u32()
		r.u32()
	case sub == 9 || sub == 11 || sub == 13 || sub >= 15 && sub <= 17:
		r.u32()
	case sub == 10 || sub == 12 || sub == 14:
		r.u32()
		r.u32()
	default:
		r.fail("opcode 0xfc %d", sub)
	}
}

func (r *reader) prefixFD() {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, stores
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.take(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		r.memarg()
		r.byte()
	case sub <= 255:
	default:
		r.fail("opcode 0xfd %d", sub)
	}
}

func (r *reader) prefixFE() {
	switch sub := r.u32(); {
	case sub == 3: // atomic.fence
		r.byte()
	case sub <= 2 || sub >= 0x10 && sub <= 0x4e:
		r.memarg()
	default:
		r.fail("opcode 0xfe %d", sub)
	}
}

// reader decodes the binary format; the first error sticks.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.i = len(r.b)
}

func (r *reader) byte() byte {
	if r.i >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b)-r.i {
		r.fail("unexpected end")
		return nil
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

// leb skips an LEB128 number of at most max bytes and returns its low 64
// bits, unsigned.
func (r *reader) leb(max int) uint64 {
	var v uint64
	for k := 0; k < max; k++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if k < 10 {
			v |= uint64(c&0x7f) << (7 * k)
		}
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 too long")
	return 0
}

func (r *reader) u32() uint32 { return uint32(r.leb(5)) }
func (r *reader) s33()        { r.leb(5) }

// constExpr reads a constant expression up to its end: the constant
// instructions, global.get, ref.null, ref.func and extended-const
// arithmetic.
func (r *reader) constExpr() {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b:
			return
		case 0x41:
			r.s33()
		case 0x42:
			r.s64()
		case 0x43:
			r.take(4)
		case 0x44:
			r.take(8)
		case 0x23, 0xd2:
			r.u32()
		case 0xd0:
			r.byte()
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e:
		case 0xfd:
			if r.u32() != 12 {
				r.fail("constant expression opcode 0xfd")
				return
			}
			r.take(16)
		default:
			r.fail("constant expression opcode %#x", op)
			return
		}
	}
}

// blockType reads a block type: the empty type or a value type (one byte,
// negative as an s33), or a type index (a non-negative s33), which it
// returns with ok.
func (r *reader) blockType() (index uint32, ok bool) {
	var v uint64
	for k := 0; k < 5; k++ {
		c := r.byte()
		if r.err != nil {
			return 0, false
		}
		v |= uint64(c&0x7f) << (7 * k)
		if c&0x80 == 0 {
			if c&0x40 != 0 { // negative: a value type or empty
				return 0, false
			}
			return uint32(v), true
		}
	}
	r.fail("LEB128 too long")
	return 0, false
}
func (r *reader) s64() { r.leb(10) }

func (r *reader) memarg() {
	if align := r.u32(); align&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.leb(10) // offset (u64 with memory64)
}

func (r *reader) limits() {
	flags := r.byte()
	r.leb(10)
	if flags&0x01 != 0 {
		r.leb(10)
	}
}

func appendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}

// importsExtism reports whether a module imports from the Extism kernel,
// so it runs on the Extism transport and is not instrumented. A binary it
// cannot read is not Extism; the compiler reports what is wrong with it.
func importsExtism(wasm []byte) bool {
	if len(wasm) < 8 {
		return false
	}
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b) && r.err == nil; {
		id := r.byte()
		body := r.take(int(r.u32()))
		if id != secImport {
			continue
		}
		s := reader{b: body}
		for n := s.u32(); n > 0 && s.err == nil; n-- {
			mod := string(s.take(int(s.u32())))
			if mod == abi.ExtismEnvModule {
				return true
			}
			s.take(int(s.u32()))
			switch s.byte() {
			case 0x00:
				s.u32()
			case 0x01:
				s.byte()
				s.limits()
			case 0x02:
				s.limits()
			case 0x03:
				s.byte()
				s.byte()
			case 0x04:
				s.byte()
				s.u32()
			default:
				return false
			}
		}
		return false
	}
	return false
}

// errInvalid wraps wazero's reason when validate refuses a module.
var errInvalid = errors.New("invalid module")

// instrumented returns instrument(wasm) after validating wasm unmodified
// (validate.go), and keeps it under CacheDir when there is one
// (rewritecache.go): only validated modules are ever rewritten and cached.
func (r *Runtime) instrumented(ctx context.Context, digest string, wasm []byte) ([]byte, error) {
	r.rewrites.Add(1)
	if err := r.validator.validate(ctx, wasm); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalid, err)
	}
	b, err := instrument(wasm)
	if err != nil {
		return nil, err
	}
	r.storeRewrite(digest, b)
	return b, nil
}

// interrupter stops one instrumented instance: fire sets its interrupt
// global, from a timer at the call's deadline or when the caller's context
// ends. The timer is made once per instance and reset per call.
type interrupter struct {
	global api.MutableGlobal
	timer  *time.Timer
	unhook func() bool // context.AfterFunc's stop, during a call

	mu           sync.Mutex
	armed, fired bool
}

func newInterrupter(g api.MutableGlobal) *interrupter {
	in := &interrupter{global: g}
	in.timer = time.AfterFunc(time.Hour, in.fire)
	in.timer.Stop()
	return in
}

func (in *interrupter) fire() {
	in.mu.Lock()
	if in.armed && !in.fired {
		in.fired = true
		in.global.Set(1)
	}
	in.mu.Unlock()
}

func (in *interrupter) arm(ctx context.Context, d time.Duration) {
	in.mu.Lock()
	in.armed = true
	in.mu.Unlock()
	in.timer.Reset(d)
	if ctx.Done() != nil {
		in.unhook = context.AfterFunc(ctx, in.fire)
	}
}

// disarm reports whether fire stopped the guest; the global then stays
// set, and the instance is of no further use.
func (in *interrupter) disarm() bool {
	in.timer.Stop()
	if in.unhook != nil {
		in.unhook()
		in.unhook = nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.armed = false
	return in.fired
}

func (in *interrupter) close() { in.timer.Stop() }
