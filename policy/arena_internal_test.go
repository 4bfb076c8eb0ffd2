package policy

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// What an arena holds stays as it was added, across blocks and beside
// records larger than a block, until its release gives it back; blocks
// given back are reused.
func TestArena(t *testing.T) {
	bd := &builder{}
	p := &prepared{}
	var want [][]byte
	var got [][]byte
	for i := range 3000 {
		rec := bytes.Repeat([]byte(fmt.Sprintf("%d;", i)), 1+i%300)
		if i == 1234 {
			rec = bytes.Repeat([]byte("x"), arenaBlock+1)
		}
		want = append(want, rec)
		got = append(got, p.arena.add(bd, rec))
	}
	_ = append(got[0], "grown"...) // must not write over got[1]
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d changed", i)
		}
	}
	if len(p.arena.blocks) < 3 {
		t.Fatalf("%d blocks, want several", len(p.arena.blocks))
	}
	first := &p.arena.blocks[0][:1][0]
	bd.giveBack(p)
	if len(bd.blocks) == 0 || len(bd.blocks) > keptBlocks {
		t.Fatalf("%d blocks kept", len(bd.blocks))
	}
	for _, b := range bd.blocks {
		if cap(b) != arenaBlock {
			t.Errorf("a block of %d bytes was kept", cap(b))
		}
	}
	reused := false
	for range len(bd.blocks) {
		if b := bd.takeBlock(10); &b[:1][0] == first {
			reused = true
		}
	}
	if !reused {
		t.Error("a block given back was not reused")
	}
}

// grow ends near the size releases of the same size need, and never far
// over what releases of other sizes need.
func TestGrow(t *testing.T) {
	for _, c := range []struct {
		name   string
		sizes  []int // commands per release
		hinted bool  // the count is known
		maxCap int   // the most the final capacity may be
	}{
		{"same sizes", slices.Repeat([]int{100}, 1000), true, 102_000}, // rounded up to an allocation size
		{"same sizes, no count", slices.Repeat([]int{100}, 1000), false, 2 * 100_000},
		{"a large first", append([]int{10_000}, slices.Repeat([]int{1}, 999)...), true, 2 * 10_999},
		{"a large last", append(slices.Repeat([]int{1}, 999), 10_000), true, 2 * 10_999},
		{"empty releases", slices.Repeat([]int{0}, 10), true, 0},
	} {
		var s []int
		count := 0
		if c.hinted {
			count = len(c.sizes)
		}
		for i, n := range c.sizes {
			s = grow(s, n, i+1, count)
			if cap(s)-len(s) < n {
				t.Fatalf("%s: no room for %d more at %d/%d", c.name, n, len(s), cap(s))
			}
			s = s[:len(s)+n]
		}
		if cap(s) > c.maxCap {
			t.Errorf("%s: capacity %d for %d, want at most %d", c.name, cap(s), len(s), c.maxCap)
		}
	}
}
