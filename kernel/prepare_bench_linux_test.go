//go:build linux && !rukh_portable

package kernel

import "testing"

// BenchmarkPrepare is what preparing the machine-code init's steps costs
// a confined call in rukh's own process (the bench's template: its
// release read, a scratch directory written, no network namespace asked
// of the pool).
func BenchmarkPrepare(b *testing.B) {
	if !machineConfines(&Confine{}) {
		b.Skip("no machine-code confining init here")
	}
	dir, scratch := b.TempDir(), b.TempDir()
	spec := InitSpec{Template: "bench", Confine: Confine{Read: []string{dir}, Write: []string{scratch}}}
	b.ReportAllocs()
	for b.Loop() {
		p, err := prepare(spec, false)
		if err != nil {
			b.Fatal(err)
		}
		p.close()
	}
}
