package home

import "testing"

// BenchmarkSettingValues is what a call of a package with settings adds
// before its program starts: one read of the store and, for a sensitive
// value, opening it (docs/performance.md).
func BenchmarkSettingValues(b *testing.B) {
	for _, bc := range []struct {
		name      string
		sensitive bool
	}{{"plain", false}, {"sensitive", true}} {
		b.Run(bc.name, func(b *testing.B) {
			h := settingsHome(b, nil)
			mustSet(b, h, "acme.notes", "region", "", "eu")
			if bc.sensitive {
				mustSet(b, h, "acme.notes", "apiKey", "", "k-0123456789abcdef")
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.SettingValues("acme.notes", "tenant-a", []string{"apiKey", "url", "region", "retries"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
