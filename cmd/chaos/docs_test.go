package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

func TestUpdateDocs(t *testing.T) {
	const page = "# Chaos\n\n<!-- generated:chaos begin -->\nold\n<!-- generated:chaos end -->\n"
	rep := chaos.Report{Started: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	md := "# Chaos run 2026-12-03 12:00 UTC\n\n| Fault |\n"
	for _, tc := range []struct {
		name    string
		all     bool
		changed bool
	}{
		{"every fault", true, true},
		{"some faults", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chaos.md")
			if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			updateDocs(path, tc.all, rep, md, io.Discard)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := string(data)
			if changed := !strings.Contains(got, "\nold\n"); changed != tc.changed {
				t.Fatalf("changed=%v, want %v:\n%s", changed, tc.changed, got)
			}
			if tc.changed && (!strings.Contains(got, "Run of 2026-12-03 12:00 UTC") || strings.Contains(got, "# Chaos run")) {
				t.Fatalf("block lacks the run line or keeps the report's title:\n%s", got)
			}
		})
	}
}
