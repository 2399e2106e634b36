package main

import (
	"io"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// TestDocs fails when docs/configuration.md's tables of the api's variables and
// of `api healthcheck`'s flags differ from what --help prints; DOCS_UPDATE=1
// (make docs) rewrites them. The defaults are those of an empty environment.
func TestDocs(t *testing.T) {
	var url string
	var timeout time.Duration
	blocks := map[string]string{
		"api-env":               docgen.VarTable(envDocs()),
		"api-healthcheck-flags": docgen.FlagTable(healthcheckFlags(&url, &timeout, func(string) string { return "" }, io.Discard)),
	}
	if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
		t.Fatal(err)
	}
}
