package sandbox

import (
	"bytes"
	"testing"
)

// The first allocation of a memory of 1 MiB or more leaves room for a
// small growth, which then keeps the memory where it is instead of copying
// it; growth past the room doubles; nothing passes the limit.
func TestLinearMemoryHeadroom(t *testing.T) {
	const page = 1 << 16
	m := (&linearLimit{max: 1024 * page}).Allocate(0, 0).(*linearMemory)
	b := m.Reallocate(47 * page) // a Go guest's initial memory
	if len(b) != 47*page || cap(b) <= 48*page {
		t.Fatalf("first allocation: len %d cap %d, want len %d and room for a page more", len(b), cap(b), 47*page)
	}
	b[0] = 1
	g := m.Reallocate(48 * page)
	if len(g) != 48*page || &g[0] != &b[0] {
		t.Fatalf("growing by a page within the room moved or resized the memory (len %d)", len(g))
	}
	big := m.Reallocate(uint64(cap(g)) + page)
	if &big[0] == &g[0] || big[0] != 1 || cap(big) < 2*cap(g) {
		t.Fatalf("growing past the room: cap %d, first byte %d; want a doubled copy", cap(big), big[0])
	}

	// The room is at most 1 MiB, and within the limit.
	m = (&linearLimit{max: 1024 * page}).Allocate(0, 0).(*linearMemory)
	if b := m.Reallocate(512 * page); cap(b) != 512*page+firstHeadroomMax {
		t.Fatalf("first allocation of 32 MiB: cap %d, want 1 MiB of room", cap(b))
	}
	m = (&linearLimit{max: 20 * page}).Allocate(0, 0).(*linearMemory)
	if b := m.Reallocate(18 * page); cap(b) != 20*page {
		t.Fatalf("first allocation near the limit: cap %d, want the limit, %d", cap(b), 20*page)
	}
	if m.Reallocate(21*page) != nil || !m.limit.refused.Load() {
		t.Fatal("growth past the limit was not refused")
	}

	// A small memory is allocated at its size.
	m = (&linearLimit{max: 1024 * page}).Allocate(0, 0).(*linearMemory)
	if b := m.Reallocate(2 * page); cap(b) != 2*page {
		t.Fatalf("first allocation of 2 pages: cap %d, want %d", cap(b), 2*page)
	}
}

// fakeRand, random_get without the random capability, gives every
// instance the same bytes and differing bytes within one, for reads of
// any length.
func TestFakeRand(t *testing.T) {
	read := func(r *fakeRand, n int) []byte {
		b := make([]byte, n)
		if k, err := r.Read(b); k != n || err != nil {
			t.Fatalf("Read(%d) = %d, %v", n, k, err)
		}
		return b
	}
	a, b := &fakeRand{}, &fakeRand{}
	for _, n := range []int{0, 1, 7, 8, 9, 32, 100} {
		x, y := read(a, n), read(b, n)
		if !bytes.Equal(x, y) {
			t.Fatalf("two instances read %x and %x", x, y)
		}
	}
	first, second := read(&fakeRand{}, 32), read(a, 32)
	if bytes.Equal(first, second) || bytes.Equal(first[:16], first[16:]) || bytes.Equal(first, make([]byte, 32)) {
		t.Fatalf("reads repeat: %x then %x", first, second)
	}
}
