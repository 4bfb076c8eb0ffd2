package kernel

import (
	"strings"
	"sync"
	"testing"
)

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limit   int
		writes  []string
		kept    string
		dropped int64
		str     string
	}{
		{"under", 10, []string{"abc", "def"}, "abcdef", 0, "abcdef"},
		{"exact", 6, []string{"abc", "def"}, "abcdef", 0, "abcdef"},
		{"split write", 4, []string{"abc", "def"}, "abcd", 2, "abcd\n[dropped 2 bytes]\n"},
		{"after full", 3, []string{"abc\n", "xyz"}, "abc", 4, "abc\n[dropped 4 bytes]\n"},
		{"ends in newline", 4, []string{"abc\n", "xyz"}, "abc\n", 3, "abc\n[dropped 3 bytes]\n"},
		{"empty", 4, nil, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := NewDiagnostics(tt.limit)
			for _, w := range tt.writes {
				if n, err := d.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := string(d.Bytes()); got != tt.kept {
				t.Errorf("Bytes %q, want %q", got, tt.kept)
			}
			if got := d.Dropped(); got != tt.dropped {
				t.Errorf("Dropped %d, want %d", got, tt.dropped)
			}
			if got := d.String(); got != tt.str {
				t.Errorf("String %q, want %q", got, tt.str)
			}
		})
	}
}

func TestDiagnosticsDefaultAndConcurrent(t *testing.T) {
	t.Parallel()
	d := NewDiagnostics(0)
	var wg sync.WaitGroup
	chunk := []byte(strings.Repeat("z", 1000))
	for range 8 {
		wg.Go(func() {
			for range 100 {
				d.Write(chunk)
			}
		})
	}
	wg.Wait()
	if n := len(d.Bytes()); n != DefaultDiagnosticsBytes {
		t.Errorf("kept %d, want %d", n, DefaultDiagnosticsBytes)
	}
	if got, want := d.Dropped(), int64(800_000-DefaultDiagnosticsBytes); got != want {
		t.Errorf("dropped %d, want %d", got, want)
	}
	// The zero value works too, with the default limit.
	var z Diagnostics
	z.Write(make([]byte, DefaultDiagnosticsBytes+5))
	if z.Dropped() != 5 {
		t.Errorf("zero value dropped %d, want 5", z.Dropped())
	}
}
