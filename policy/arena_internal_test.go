package policy

import (
	"bytes"
	"fmt"
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
