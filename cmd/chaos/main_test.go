package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
	"github.com/cqrs-spice/cqrs/internal/docgen"
)

func TestParse(t *testing.T) {
	c, err := parse([]string{"--quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range c.opts.Faults {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), strings.Join(QuickFaults, ","); got != want || c.set.Partition != 10*time.Second {
		t.Fatalf("quick: faults %s partition %s; want %s and 10s", got, c.set.Partition, want)
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
