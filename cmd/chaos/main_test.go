package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
	"github.com/cqrs-spice/cqrs/internal/docgen"
)

func TestUpdateDocs(t *testing.T) {
	const page = "# Chaos\n\n<!-- generated:chaos begin -->\nold\n<!-- generated:chaos end -->\n"
	path := filepath.Join(t.TempDir(), "chaos.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := chaos.Report{Started: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	updateDocs(path, rep, "# Chaos run 2026-12-03 12:00 UTC\n\n| Fault |\n", io.Discard)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if strings.Contains(got, "\nold\n") || !strings.Contains(got, "Run of 2026-12-03 12:00 UTC") || strings.Contains(got, "# Chaos run") || !strings.Contains(got, "_Generated 2026-12-03 12:00 UTC") {
		t.Fatalf("block not replaced by the stamped run:\n%s", got)
	}
}

func TestParse(t *testing.T) {
	c, err := parse([]string{"--quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range c.opts.Faults {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), strings.Join(QuickFaults, ","); got != want || c.partition != 10*time.Second {
		t.Fatalf("quick: faults %s partition %s; want %s and 10s", got, c.partition, want)
	}
	c, err = parse(nil, io.Discard)
	if err != nil || len(c.opts.Faults) != len(chaos.Catalog(chaos.Settings{})) {
		t.Fatalf("every fault: %d faults, %v", len(c.opts.Faults), err)
	}
	if _, err := parse([]string{"--faults", "kill-everything"}, io.Discard); err == nil || !strings.Contains(err.Error(), "choose from") {
		t.Fatalf("unknown fault: %v", err)
	}
}

// TestDocs fails when docs/configuration.md's table of chaos's flags differs
// from what --help prints; DOCS_UPDATE=1 (make docs) rewrites it.
func TestDocs(t *testing.T) {
	blocks := map[string]string{"chaos-flags": docgen.FlagTable(flags(&config{}))}
	if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
		t.Fatal(err)
	}
}
