package serve

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestExeMappings(t *testing.T) {
	const smaps = `00400000-00a93000 r-xp 00000000 fe:00 99 /opt/rukh
Rss:                6084 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
VmFlags: rd ex mr mw me
00a93000-01128000 r--p 00693000 fe:00 99 /opt/rukh
Rss:                5972 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
01128000-0118c000 rw-p 00d28000 fe:00 99 /opt/rukh
Anonymous:             0 kB
0118c000-0118d000 r--p 00d8c000 fe:00 99 /opt/rukh
Anonymous:             4 kB
0118d000-0118e000 r--p 00d8d000 fe:00 99 /opt/rukh
Swap:                  4 kB
01190000-01191000 r-xp 00000000 fe:00 99 /opt/rukh
Private_Dirty:         4 kB
Anonymous:             0 kB
0118e000-0118f000 r--p 00000000 fe:00 98 /opt/other
Anonymous:             0 kB
0118f000-01190000 r--p 00000000 fe:00 99 /opt/rukh (deleted)
Anonymous:             0 kB
3da2a3c00000-3da2a4800000 rw-p 00000000 00:00 0
Anonymous:          5732 kB
`
	got := exeMappings([]byte(smaps), "/opt/rukh")
	want := []mapping{{0x400000, 0xa93000}, {0xa93000, 0x1128000}, {0x1190000, 0x1191000}}
	if len(got) != len(want) {
		t.Fatalf("exeMappings = %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %x, want %x", i, got[i], want[i])
		}
	}
}

// Dropping the test binary's own pages leaves it running, with fewer of
// them resident.
func TestDropStartupPages(t *testing.T) {
	before := rssFile(t)
	dropStartupPages()
	after := rssFile(t)
	if after >= before {
		t.Errorf("RssFile %d kB before, %d kB after: nothing was dropped", before, after)
	}
	if got := strings.Repeat("x", 3); got != "xxx" {
		t.Fatal("the code after the drop did not run as before")
	}
}

func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
