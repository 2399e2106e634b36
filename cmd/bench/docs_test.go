package main

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// TestDocs fails when docs/configuration.md's tables of bench's flags differ
// from what --help prints; DOCS_UPDATE=1 (make docs) rewrites them.
func TestDocs(t *testing.T) {
	blocks := map[string]string{
		"bench-flags":          docgen.FlagTable(scaleFlags(&scaleOptions{})),
		"bench-writes-flags":   docgen.FlagTable(writesFlags(&writesOptions{})),
		"bench-heavy-flags":    docgen.FlagTable(heavyFlags(&heavyOptions{})),
		"bench-failover-flags": docgen.FlagTable(failoverFlags(&failoverOptions{})),
		"bench-restart-flags":  docgen.FlagTable(restartFlags(&restartOptions{})),
	}
	if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
		t.Fatal(err)
	}
}
