package sandbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// branchy is a module of one function, (i32) -> (), whose body is expr
// (after the locals, before the final end), with types: type 0 is the
// function's, type 1 () -> (1,000 i32) for multi-value blocks.
func branchy(expr []byte) []byte { return branchyLocals(append([]byte{0x00}, expr...)) }

// branchyLocals is branchy with body (locals, then expr) given whole.
func branchyLocals(body []byte) []byte {
	results := appendU32(nil, 1000)
	results = append(results, bytes.Repeat([]byte{0x7f}, 1000)...)
	code := append(body, 0x0b)
	return wasmModule(
		section(secType, vec([]byte{0x60, 0x01, 0x7f, 0x00}, append([]byte{0x60, 0x00}, results...))),
		section(secFunction, vec([]byte{0x00})),
		section(secCode, vec(append(appendU32(nil, uint32(len(code))), code...))),
	)
}

// brTable is block (local.get 0, br_table with n entries to the block) end.
func brTable(n int) []byte {
	b := []byte{0x02, 0x40, 0x20, 0x00, 0x0e}
	b = appendU32(b, uint32(n-1))
	b = append(b, bytes.Repeat([]byte{0x00}, n)...)
	return append(b, 0x0b)
}

// brIfs is block (local.get 0, br_if 0) x n end.
func brIfs(n int) []byte {
	b := []byte{0x02, 0x40}
	b = append(b, bytes.Repeat([]byte{0x20, 0x00, 0x0d, 0x00}, n)...)
	return append(b, 0x0b)
}

// seqIfs is (local.get 0, if, end) x n: a chain of n blocks, each
// dominated by the one before.
func seqIfs(n int) []byte {
	return bytes.Repeat([]byte{0x20, 0x00, 0x04, 0x40, 0x0b}, n)
}

// nestedBlocks is n blocks one inside the other, each end followed by
// local.get 0, drop: a chain of n blocks, nothing branching.
func nestedBlocks(n int) []byte {
	b := bytes.Repeat([]byte{0x02, 0x40}, n)
	return append(b, bytes.Repeat([]byte{0x0b, 0x20, 0x00, 0x1a}, n)...)
}

// loopReads is depth loops one inside the other and, innermost, locals
// 1..reads read; the function declares reads locals.
func loopReads(depth, reads int) []byte {
	b := appendU32(appendU32(nil, 1), uint32(reads))
	b = append(b, 0x7f)
	b = append(b, bytes.Repeat([]byte{0x03, 0x40}, depth)...)
	for k := 1; k <= reads; k++ {
		b = append(appendU32(append(b, 0x20), uint32(k)), 0x1a)
	}
	return append(b, bytes.Repeat([]byte{0x0b}, depth)...)
}

// fanIn is block ((local.get 0, if, i32.const k, local.set 1, br 1, end)
// x n) end, then locals 1..reads read: each read looks for its definition
// through n branches down a chain n blocks long. The function declares
// reads locals.
func fanIn(n, reads int) []byte {
	b := appendU32(nil, 1)
	b = appendU32(b, uint32(reads))
	b = append(b, 0x7f)
	b = append(b, 0x02, 0x40)
	for k := range n {
		b = append(b, 0x20, 0x00, 0x04, 0x40, 0x41, byte(k&0x3f), 0x21, 0x01, 0x0c, 0x01, 0x0b)
	}
	b = append(b, 0x0b)
	for k := 1; k <= reads; k++ {
		b = appendU32(append(b, 0x20), uint32(k))
		b = append(b, 0x1a)
	}
	return b
}

// multiValue is block of type 1 (1,000 i32 results): 1,000 constants,
// then one br_table of n entries to it, end, and the results dropped;
// times k.
func multiValue(n, k int) []byte {
	var one []byte
	one = append(one, 0x02, 0x01)
	one = append(one, bytes.Repeat([]byte{0x41, 0x00}, 1000)...)
	one = append(one, 0x20, 0x00, 0x0e)
	one = appendU32(one, uint32(n-1))
	one = append(one, bytes.Repeat([]byte{0x00}, n)...)
	one = append(one, 0x0b)
	one = append(one, bytes.Repeat([]byte{0x1a}, 1000)...)
	return bytes.Repeat(one, k)
}

// TestBranchesBounded: bodies whose branches wazero's optimizing compiler
// takes superlinear time or memory over are refused before compiling
// (ErrTooComplex), the bound they pass named; shapes of the same kind at a
// real guest's scale pass and are valid. Before the bounds, one br_table
// of a million entries took 7 min 40 s and 2.3 GB to compile, 50,000
// br_ifs to one label 3 min 12 s, 20,000 ifs in a row 19.5 s, 5,000 ifs
// branching out of a block with ten locals read after it 8.6 s, 20,000
// nested blocks each followed by a read 10 s, 1,000 locals read in 2,000
// nested loops 6.1 s.
func TestBranchesBounded(t *testing.T) {
	ctx := context.Background()
	var v validator
	defer v.close(ctx)
	c := Complexity{}.WithDefaults()
	for _, tc := range []struct {
		name string
		expr []byte
		want string // "" passes
		// body holds the locals and expr when set, instead of expr
		body []byte
	}{
		{"1,000 ifs branching out, 10 locals read after", nil, "", fanIn(1_000, 10)},
		{"5,000 ifs branching out, 10 locals read after", nil, "control flow nests too deep", fanIn(5_000, 10)},
		{"1,000 ifs branching out, 2,000 locals read after", nil, "control flow nests too deep", fanIn(1_000, 2_000)},
		{"br_table of 20,000 entries", brTable(20_000), "", nil},
		{"br_table of a million entries", brTable(1_000_000), "br_table instructions have more than 100000 entries", nil},
		{"br_table of 45,000 entries", brTable(45_000), "more than 40000 branches to one label", nil},
		{"two labels of 35,000 branches", append(brTable(35_000), brTable(35_000)...), "sum over labels of their branches squared", nil},
		{"5,000 br_ifs to one label", brIfs(5_000), "", nil},
		{"20,000 br_ifs to one label", brIfs(20_000), "control flow nests too deep", nil},
		{"5,000 ifs in a row", seqIfs(5_000), "", nil},
		{"2,000 nested blocks", nestedBlocks(2_000), "", nil},
		{"20,000 nested blocks", nestedBlocks(20_000), "control flow nests too deep", nil},
		{"100 locals read in 100 nested loops", nil, "", loopReads(100, 100)},
		{"1,000 locals read in 2,000 nested loops", nil, "control flow nests too deep", loopReads(2_000, 1_000)},
		{"20,000 ifs in a row", seqIfs(20_000), "control flow nests too deep", nil},
		{"100 branches carrying 1,000 values", multiValue(100, 1), "", nil},
		{"1,500 branches carrying 1,000 values", multiValue(1_500, 1), "branches carry more than 1000000 values", nil},
		{"many small multi-value tables", multiValue(100, 12), "branches carry more than 1000000 values", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := branchy(tc.expr)
			if tc.body != nil {
				wasm = branchyLocals(tc.body)
			}
			_, err := checkShape(wasm, c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := v.validate(ctx, wasm); err != nil {
					t.Fatalf("the test's module is invalid: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrTooComplex saying %q", err, tc.want)
			}
		})
	}
}

// TestBranchBombRefusedByLoad: Load refuses such a module with
// ErrTooComplex before compiling it (it compiled it, 19.5 s for this one).
func TestBranchBombRefusedByLoad(t *testing.T) {
	ctx := context.Background()
	r, err := New(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if _, err := r.Load(ctx, branchy(seqIfs(20_000))); !errors.Is(err, ErrTooComplex) {
		t.Fatalf("Load: %v, want ErrTooComplex", err)
	}
}

// TestUnreadableBodyIsInvalid: a body the branch walk cannot read is one
// wazero refuses too, and the refusal is ErrCompile.
func TestUnreadableBodyIsInvalid(t *testing.T) {
	ctx := context.Background()
	var v validator
	defer v.close(ctx)
	for _, expr := range [][]byte{{0x02, 0x40}, {0xff}, {0x0b, 0x01}, {0x0e, 0x05, 0x00}} {
		wasm := branchy(expr)
		_, err := checkShape(wasm, Complexity{}.WithDefaults())
		if !errors.Is(err, ErrCompile) || !errors.Is(err, errUnreadBody) {
			t.Errorf("% x: %v, want ErrCompile", expr, err)
		}
		if v.validate(ctx, wasm) == nil {
			t.Errorf("% x: wazero finds it valid", expr)
		}
	}
}
