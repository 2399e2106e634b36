package main

import (
	"bytes"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/version"
)

func TestVersionArgument(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{arg}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, stderr.String())
		}
		if got, want := stdout.String(), "api "+version.Version+"\n"; got != want {
			t.Fatalf("%s: stdout=%q, want %q", arg, got, want)
		}
	}
}
