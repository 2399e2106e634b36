package main

import (
	"io"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// TestDocs fails when docs/configuration.md's table of devcerts' flags differs
// from what --help prints; DOCS_UPDATE=1 (make docs) rewrites it.
func TestDocs(t *testing.T) {
	var dir, services string
	blocks := map[string]string{"devcerts-flags": docgen.FlagTable(flags(&dir, &services, io.Discard))}
	if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
		t.Fatal(err)
	}
}
