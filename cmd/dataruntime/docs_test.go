//go:build duckdb_arrow

package main

import (
	"io"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// TestDocs fails when docs/configuration.md's tables of dataruntime's flags and
// variables differ from what --help prints; DOCS_UPDATE=1 (make docs) rewrites
// them. The defaults are those of an empty environment.
func TestDocs(t *testing.T) {
	cfg, err := envConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var mem memoryLimitFlag
	var url, caFile string
	var drop dropSlotsArgs
	blocks := map[string]string{
		"dataruntime-flags":             docgen.FlagTable(runtimeFlags(&cfg, &mem, io.Discard)),
		"dataruntime-env":               docgen.VarTable(runtimeEnv),
		"dataruntime-healthcheck-flags": docgen.FlagTable(healthcheckFlags(&url, &caFile, io.Discard)),
		"dataruntime-drop-slots-flags":  docgen.FlagTable(dropSlotsFlags(&drop, func(string) string { return "" }, io.Discard)),
	}
	if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
		t.Fatal(err)
	}
}
