//go:build duckdb_arrow

package main

import (
	"bytes"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/version"
)

func TestVersionFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if got, want := stdout.String(), "dataruntime "+version.Version+"\n"; got != want {
		t.Fatalf("stdout=%q, want %q", got, want)
	}
}
