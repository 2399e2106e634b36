package bench_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestDocsSummary(t *testing.T) {
	r := &bench.Report{
		Header: bench.Header{Started: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC),
			Machine: bench.Machine{Cores: 2, CPU: "AMD EPYC", GoVersion: "go1.26.8", Docker: "20.10"}},
		Settings: bench.Settings{Concurrency: 100, WriteRate: 100},
		Sizes:    []bench.SizeResult{{Orders: 10000}, {Orders: 1000000}},
	}
	got := bench.DocsSummary(r)
	for _, want := range []string{
		"Run of 2026-12-03 12:00 UTC: 2 cores (AMD EPYC)",
		"### requests/sec and p99 by size",
		"### freshness from watermarks",
		"| 10,000 orders |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\n## ") {
		t.Errorf("summary has a second-level heading:\n%s", got)
	}
}

// UpdateDocs replaces a page's block with the body, stamped.
func TestUpdateDocs(t *testing.T) {
	const page = "# Chaos\n\n<!-- generated:chaos begin -->\nold\n<!-- generated:chaos end -->\n"
	path := filepath.Join(t.TempDir(), "chaos.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	bench.UpdateDocs(path, "chaos", "Run of 2026-12-03 12:00 UTC\n\n| Fault |\n", time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), io.Discard)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if strings.Contains(got, "\nold\n") || !strings.Contains(got, "Run of 2026-12-03 12:00 UTC") || strings.Contains(got, "# Chaos run") || !strings.Contains(got, "_Generated 2026-12-03 12:00 UTC") {
		t.Fatalf("block not replaced by the stamped run:\n%s", got)
	}
}
