package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestUpdateDocs(t *testing.T) {
	const page = "# Benchmarks\n\n<!-- generated:bench begin -->\nold\n<!-- generated:bench end -->\n"
	for _, tc := range []struct {
		name    string
		quick   bool
		changed bool
	}{
		{"full run", false, true},
		{"quick run", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "benchmarks.md")
			if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := &bench.Report{Started: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC),
				Settings: bench.Settings{Quick: tc.quick}, Sizes: []bench.SizeResult{{Orders: 10000}}}
			updateDocs(path, rep, io.Discard)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := string(data)
			if changed := !strings.Contains(got, "\nold\n"); changed != tc.changed {
				t.Fatalf("changed=%v, want %v:\n%s", changed, tc.changed, got)
			}
			if tc.changed && !strings.Contains(got, "Generated 2026-12-03 12:00 UTC") {
				t.Fatalf("no stamp:\n%s", got)
			}
		})
	}
}
