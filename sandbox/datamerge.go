package sandbox

import (
	"cmp"
	"slices"
)

// mergeGap is the largest run of zero bytes mergeData fills to join two
// data segments.
const mergeGap = 128

// mergeData returns a data section with its active segments joined where
// only a few zero bytes separate them, or body unchanged if it cannot.
//
// Why: the Go linker starts a new segment after every run of zero bytes, so
// a Go guest has tens of thousands of segments of about 25 bytes (42,825 in
// the 3.9 MB weather example). wazero validates each segment's offset
// expression when it compiles the module and evaluates it again at every
// instantiation: about 10 ms of a cold start and several of each new
// instance. Joined, the same example has 5 segments and 0.4 MB more bytes
// to copy, which takes far less.
//
// The result writes the same bytes to memory: the segments are all active,
// at constant offsets into memory 0, and do not overlap, so the gaps, which
// nothing else writes, are zero in both. Modules with a data count section
// are left alone, since memory.init and data.drop name segments by index.
func mergeData(body []byte) []byte {
	type segment struct {
		off  uint32
		data []byte
	}
	r := reader{b: body}
	n := r.u32()
	if r.err != nil || n < 2 || uint64(n) > uint64(len(body)) {
		return body
	}
	segs := make([]segment, 0, n)
	for range n {
		if flag := r.u32(); flag != 0 || r.byte() != 0x41 { // active, memory 0, i32.const
			return body
		}
		off, ok := r.s32()
		if !ok || off < 0 || r.byte() != 0x0b { // end
			return body
		}
		data := r.take(int(r.u32()))
		if r.err != nil {
			return body
		}
		segs = append(segs, segment{uint32(off), data})
	}
	if r.i != len(body) {
		return body
	}
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.off, b.off) })
	var out []byte
	count := 0
	for i := 0; i < len(segs); {
		start := segs[i].off
		end := uint64(start) + uint64(len(segs[i].data))
		j := i + 1
		for ; j < len(segs); j++ {
			next := uint64(segs[j].off)
			if next < end {
				return body // overlap: order would matter
			}
			if next-end > mergeGap {
				break
			}
			end = next + uint64(len(segs[j].data))
		}
		if end > 1<<32 {
			return body
		}
		out = append(out, 0x00, 0x41)
		out = appendS32(out, int32(start))
		out = append(out, 0x0b)
		out = appendU32(out, uint32(end-uint64(start)))
		base := len(out)
		out = append(out, make([]byte, end-uint64(start))...)
		for _, s := range segs[i:j] {
			copy(out[base+int(s.off-start):], s.data)
		}
		count++
		i = j
	}
	return append(appendU32(make([]byte, 0, len(out)+5), uint32(count)), out...)
}

// s32 reads a signed LEB128 i32.
func (r *reader) s32() (int32, bool) {
	var v int64
	var shift uint
	for k := 0; k < 5; k++ {
		c := r.byte()
		if r.err != nil {
			return 0, false
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << shift // sign-extend
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, false
			}
			return int32(v), true
		}
	}
	return 0, false
}

// appendS32 appends v as a signed LEB128.
func appendS32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
