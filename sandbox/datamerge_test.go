package sandbox

import (
	"bytes"
	"testing"
)

// dataSection encodes active segments at i32.const offsets into memory 0.
func dataSection(segs ...struct {
	off  int32
	data string
}) []byte {
	b := appendU32(nil, uint32(len(segs)))
	for _, s := range segs {
		b = append(b, 0x00, 0x41)
		b = appendS32(b, s.off)
		b = append(b, 0x0b)
		b = appendU32(b, uint32(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}

// applyData writes a data section's active segments into a fresh memory,
// as instantiation does, and returns it and the segment count; nil if the
// section is not one this test understands.
func applyData(t *testing.T, body []byte) ([]byte, int) {
	t.Helper()
	mem := make([]byte, 1<<16)
	r := reader{b: body}
	n := int(r.u32())
	for range n {
		if r.u32() != 0 || r.byte() != 0x41 {
			return nil, 0
		}
		off, ok := r.s32()
		if !ok || r.byte() != 0x0b {
			t.Fatalf("bad offset expression")
		}
		data := r.take(int(r.u32()))
		if r.err != nil {
			t.Fatal(r.err)
		}
		copy(mem[off:], data)
	}
	if r.i != len(body) {
		t.Fatalf("%d trailing bytes", len(body)-r.i)
	}
	return mem, n
}

type seg = struct {
	off  int32
	data string
}

func TestMergeData(t *testing.T) {
	for _, tc := range []struct {
		name string
		segs []seg
		want int // segments after merging; 0: unchanged
	}{
		{"small gaps", []seg{{16, "abc"}, {20, "de"}, {100, "f"}, {120, "ghi"}}, 1},
		{"unsorted", []seg{{120, "ghi"}, {16, "abc"}, {100, "f"}, {20, "de"}}, 1},
		{"large gap", []seg{{16, "abc"}, {20, "d"}, {4000, "x"}, {4010, "y"}}, 2},
		{"adjacent", []seg{{0, "ab"}, {2, "cd"}}, 1},
		{"negative offset", []seg{{-1, "ab"}, {2, "cd"}}, 0},
		{"overlap", []seg{{0, "abcd"}, {2, "XY"}}, 0},
		{"one segment", []seg{{8, "abc"}}, 0},
		{"large offset", []seg{{1000, "a"}, {1 << 20, "b"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := dataSection(tc.segs...)
			merged := mergeData(body)
			if tc.want == 0 {
				if !bytes.Equal(merged, body) {
					t.Fatalf("changed a section it should leave alone")
				}
				return
			}
			if tc.segs[len(tc.segs)-1].off >= 1<<16 {
				// Beyond the test memory: count only.
				if n := int((&reader{b: merged}).u32()); n != tc.want {
					t.Fatalf("%d segments, want %d", n, tc.want)
				}
				return
			}
			want, _ := applyData(t, body)
			got, n := applyData(t, merged)
			if n != tc.want {
				t.Errorf("%d segments, want %d", n, tc.want)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("memory differs after merging")
			}
		})
	}
	// Passive segments are left alone.
	passive := append(appendU32(nil, 2), 0x01, 0x01, 'a', 0x01, 0x01, 'b')
	if !bytes.Equal(mergeData(passive), passive) {
		t.Error("changed passive segments")
	}
}
