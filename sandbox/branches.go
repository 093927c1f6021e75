package sandbox

import (
	"errors"
	"fmt"
)

// wazero's optimizing compiler does work that grows faster than the code,
// and compiles run in the server's process where nothing interrupts them:
//
//   - it adds a branch to its target block's predecessors after scanning
//     the ones it has (ssa basicBlock.addPred): a label P branches target
//     costs P²/2 steps, and each br_table entry gets a block of its own
//     (about 2 KB while its function compiles). One br_table of a million
//     entries, a 1 MB module, took 7 min 40 s of a core and 2.3 GB; the
//     8 MiB a body may hold would take days;
//   - its dominator and loop passes walk up the dominator tree from every
//     block, and it looks for a local's definition up the tree (and in
//     every enclosing loop's header): 20,000 ifs one after the other took
//     19.5 s, 50,000 br_ifs to one label 3 min 12 s;
//   - each branch copies the values its target takes.
//
// So before compiling, branchCount bounds the branches to one label (br,
// br_if, each br_table entry: Complexity.MaxBranchesPerLabel), the
// br_table entries of one function (MaxBranchTableEntries), the sum over
// a module's labels of their branches squared (maxBranchCost), what the
// walks up the trees cost, estimated (maxBlockDepths), and the values a
// module's branches carry (maxBranchValues). Real guests are far below.
// The Python runtime (CPython's eval loop) is the largest: 12,848 branches
// to one label, 14,691 br_table entries in one function, 1.7·10⁸ and
// 1.26·10⁷; a Go guest has 292, 965, 2·10⁶ and 2.7·10⁶, a Haskell one
// 1,421, 3,126, 2.7·10⁶ and 1·10⁶.

// maxBlockDepths bounds what the compiler's walks up the dominator trees
// of a module's functions cost, as branchCount estimates it: the depth of
// every basic block (its dominator and loop passes walk up from each), of
// every local.get (it looks for the local's definition up the tree,
// remembering what it found at joins only; see localGet for loops), and
// at each label the depth of its branches times the function's locals (a
// local read below a join is looked for through every branch to it). 20,000 ifs one after the other
// (4·10⁸) took 19.5 s to compile, 5,000 ifs branching out of one block
// and ten locals read after it (1.6·10⁸) 8.6 s. 4·10⁷ is about two
// seconds.
const maxBlockDepths = 40_000_000

// maxBranchValues bounds the values the branches of a module carry
// together: each branch copies its target's values, and its target
// block's parameters are merged over its branches, so a br_table of 1,500
// entries to a block of 1,000 results took 3.5 s (49,000 entries: 100 s
// and 520 MB). Real guests' blocks rarely take values.
const maxBranchValues = 1_000_000

// maxBranchCost bounds the sum over a module's labels of their branches
// squared: 2·10⁹ is about a second and a half of compiling (80,000
// branches to one label, 6.4·10⁹, took 2.9 s).
const maxBranchCost = 2_000_000_000

// errUnreadBody marks a function body branchCount cannot read: an
// invalid one (FuzzInstrumentValidity checks wazero refuses it too).
var errUnreadBody = errors.New("unreadable function body")

// branchCount sums what the branches of a module's bodies cost to compile.
type branchCount struct {
	c    Complexity
	cost uint64
	// entries counts the br_table entries of the function being walked.
	entries uint64
	// labels are the open labels, innermost last.
	labels []label
	// depth is the dominator tree depth of the current basic block, as
	// the walk estimates it; depths sums what the compiler's walks up the
	// tree cost the function (see maxBlockDepths), allDepths the module.
	depth, depths, allDepths uint64
	// locals is the function's number of declared locals, plus one.
	locals uint64
	// loops are the serial numbers of the open loops, innermost last;
	// serial numbers the module's loops; read holds, by local, the serial
	// of the innermost loop it was last read in.
	loops  []uint32
	serial uint32
	read   []uint32
	// arities are the module's types' parameters and results; args sums
	// the values the module's branches carry.
	arities [][2]uint32
	args    uint64
}

// label is an open block, loop or if: the branches to it and the depth of
// the basic block it opened in.
type label struct {
	branches uint32
	// values is the number of values a branch to it carries: a loop's
	// parameters, a block's or if's results.
	values uint32
	open   uint64
	// kind is the opcode that opened it: block, loop or if.
	kind byte
	// join sums, over the branches to it, their depth below open.
	join uint64
}

// body walks one function body's instructions (after its locals), counting
// the branches to each label. It reports an instruction it cannot read as
// ErrCompile, and the bounds passed as ErrTooComplex. i names the function.
func (b *branchCount) body(i uint32, locals uint64, fn []byte) error {
	r := reader{b: fn}
	b.labels = append(b.labels[:0], label{}) // the function's own label
	b.entries, b.depth, b.depths, b.locals = 0, 0, 0, locals+1
	b.loops = b.loops[:0]
	for len(b.labels) > 0 && r.err == nil {
		at := r.i
		switch op := r.byte(); {
		case op == 0x02: // block
			b.labels = append(b.labels, label{values: b.values(&r, false), open: b.depth, kind: op})
		case op == 0x03 || op == 0x04: // loop (its header), if (its then)
			b.labels = append(b.labels, label{values: b.values(&r, op == 0x03), open: b.depth, kind: op})
			b.block(b.depth + 1)
			if op == 0x03 {
				b.serial++
				b.loops = append(b.loops, b.serial)
			}
		case op == 0x05: // else
			b.block(b.labels[len(b.labels)-1].open + 1)
		case op == 0x0b: // end
			b.close()
		case op == 0x0c: // br
			if err := b.branch(i, at, r.u32()); err != nil {
				return err
			}
		case op == 0x0d: // br_if: the code after it is a block of its own
			if err := b.branch(i, at, r.u32()); err != nil {
				return err
			}
			b.block(b.depth + 1)
		case op == 0x0e: // br_table
			n := uint64(r.u32()) + 1
			if b.entries += n; b.entries > uint64(b.c.MaxBranchTableEntries) {
				return fmt.Errorf("%w: function %d: its br_table instructions have more than %d entries together", ErrTooComplex, i, b.c.MaxBranchTableEntries)
			}
			// Each entry jumps from a block of its own.
			b.depths += n * (b.depth + 1)
			for ; n > 0 && r.err == nil; n-- {
				if err := b.branch(i, at, r.u32()); err != nil {
					return err
				}
			}
		case op <= 0x01 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
			// no immediate
		case op == 0x10 || op == 0x12: // call, return_call
			r.u32()
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			for k := r.count(); k > 0 && r.err == nil; k-- {
				r.byte()
			}
		case op == 0x20: // local.get: the compiler looks for its definition up the tree
			b.localGet(r.u32())
		case op >= 0x21 && op <= 0x26 || op == 0xd2:
			r.u32()
		default:
			r.plainImmediates(op, at)
		}
	}
	if r.err != nil {
		return fmt.Errorf("%w: function %d: %w: %v", ErrCompile, i, errUnreadBody, r.err)
	}
	if len(b.labels) > 0 || r.i != len(r.b) {
		return fmt.Errorf("%w: function %d: %w: it does not end with its last end", ErrCompile, i, errUnreadBody)
	}
	if b.allDepths += b.depths; b.allDepths > maxBlockDepths {
		return fmt.Errorf("%w: the functions' control flow nests too deep to compile in time (about %d steps by function %d, at most %d): split long chains of if and br_if, or functions reading many locals after them, into smaller functions", ErrTooComplex, b.allDepths, i, uint64(maxBlockDepths))
	}
	return nil
}

// branch counts a branch at byte at to label l (0 the innermost).
func (b *branchCount) branch(i uint32, at int, l uint32) error {
	if uint64(l) >= uint64(len(b.labels)) {
		return nil // invalid: validation says so
	}
	t := &b.labels[len(b.labels)-1-int(l)]
	t.join += b.depth - t.open
	if t.branches++; t.branches > b.c.MaxBranchesPerLabel {
		return fmt.Errorf("%w: function %d: more than %d branches to one label (at byte %d of its body)", ErrTooComplex, i, b.c.MaxBranchesPerLabel, at)
	}
	if b.args += uint64(t.values); b.args > maxBranchValues {
		return fmt.Errorf("%w: the functions' branches carry more than %d values together (function %d, at byte %d of its body)", ErrTooComplex, maxBranchValues, i, at)
	}
	return nil
}

// values reads a block type and returns the number of values a branch to
// the block carries: its parameters for a loop, else its results.
func (b *branchCount) values(r *reader, loop bool) uint32 {
	at := r.i
	t, ok := r.blockType()
	switch {
	case ok && uint64(t) < uint64(len(b.arities)):
		if loop {
			return b.arities[t][0]
		}
		return b.arities[t][1]
	case ok: // an invalid type: validation says so
		return 0
	case !loop && r.err == nil && r.b[at] != 0x40: // a value type
		return 1
	}
	return 0
}

// block starts a basic block at dominator depth d.
func (b *branchCount) block(d uint64) {
	b.depth = d
	b.depths += d
}

// localGet counts a read of local v. The compiler looks for its
// definition up the tree, and the first read of v inside a loop, whose
// header is not complete until its end, leaves a placeholder in the header
// of every loop around it, later resolved into a block parameter: 1,000
// locals read inside 2,000 nested loops took 6.1 s and 310 MB to compile,
// about sixty times a tree step each.
func (b *branchCount) localGet(v uint32) {
	b.depths += b.depth
	if len(b.loops) == 0 || v >= 1<<20 {
		return // no loop; or an invalid index (a function has fewer)
	}
	if int(v) >= len(b.read) {
		b.read = append(b.read, make([]uint32, int(v)+1-len(b.read))...)
	}
	if in := b.loops[len(b.loops)-1]; b.read[v] != in {
		b.read[v] = in
		b.depths += loopReadWeight * uint64(len(b.loops))
	}
}

// loopReadWeight is what a placeholder costs the compiler, in tree steps.
const loopReadWeight = 64

// close ends the innermost label, adding its branches' cost. The code
// after it is a new block: a join, dominated by the block the label
// opened in, when branches lead to it (an if's false edge does); else
// the block it falls through from is its only predecessor, and the chain
// goes on (after a loop, or a block nothing branches to: 20,000 nested
// blocks, each end followed by a local read, took 10 s to compile).
func (b *branchCount) close() {
	l := b.labels[len(b.labels)-1]
	b.labels = b.labels[:len(b.labels)-1]
	if l.kind == 0x03 {
		b.loops = b.loops[:len(b.loops)-1]
	}
	k := uint64(l.branches)
	b.cost += k * k
	// A local read below the label looks for its definition through
	// each branch (the compiler remembers it at the join only).
	b.depths += l.join * b.locals
	switch {
	case len(b.labels) == 0:
	case l.kind == 0x03 || l.kind == 0x02 && l.branches == 0:
		b.block(b.depth + 1)
	default:
		b.block(l.open + 1)
	}
}

// check reports a module whose branches cost more than maxBranchCost.
func (b *branchCount) check() error {
	if b.cost > maxBranchCost {
		return fmt.Errorf("%w: the functions' branches would cost the compiler about %d steps (the sum over labels of their branches squared), at most %d: spread them over more labels", ErrTooComplex, b.cost, uint64(maxBranchCost))
	}
	return nil
}
