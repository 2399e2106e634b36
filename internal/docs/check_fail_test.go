package docs_test

import (
	"strings"
	"testing"
)

// TestCheck runs Check on pages with one broken name or link each: a check that
// cannot fail would let the docs drift.
func TestCheck(t *testing.T) {
	k := Known{
		Targets: set("test", "bench"),
		Flags:   set("memory-limit", "url", "quick"),
		Env:     set("API_WRITE_KEY", "RUNTIME_PROTOCOL", "BENCH_ARGS"),
		Exists:  func(p string) bool { return p == "docs/a.md" || p == "README.md" || p == "docs/img" },
		Anchors: func(p string) map[string]bool { return Slugs("# Run it\n## API keys and TLS\n## Run it\n") },
	}
	for _, tc := range []struct {
		name, text, want string // want "": no problem
	}{
		{"fine", "Run `make test`, `make BENCH_ARGS=--quick bench`, `--memory-limit 2GiB`, `API_WRITE_KEY`, `RUNTIME_PROTOCOL=flightsql`; see [a](a.md#run-it), [k](a.md#api-keys-and-tls), [again](a.md#run-it-1), [up](../README.md), [web](https://example.com/x).\n```sh\nmake bench   # measure\nmake\ncurl localhost\nbin/x --url http://h\n```\nSELECT words: `SELECT`, `HIT`, `NOT_SERVING`; prose make sense.", ""},
		{"unknown target", "`make benchh`", `make target "benchh"`},
		{"unknown target in a block", "```sh\nmake test\nmake chaos-quick\n```", `make target "chaos-quick"`},
		{"unknown flag", "`bin/dataruntime --memory-limt 2GiB`", "flag --memory-limt"},
		{"unknown variable", "set `API_WRITE_KEYS`", "environment variable API_WRITE_KEYS"},
		{"unknown assignment", "```sh\nRUNTIME_PROTOCOLL=flightsql bin/api\n```", "environment variable RUNTIME_PROTOCOLL"},
		{"missing file", "[b](b.md)", "b.md does not exist"},
		{"missing anchor", "[a](a.md#run-it-2)", "no heading with anchor #run-it-2"},
		{"missing own anchor", "[here](#nowhere)", "no heading with anchor #nowhere"},
		{"missing image", "![live](img/live.png)", "docs/img/live.png does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := Check("docs/a.md", tc.text, k)
			if tc.want == "" {
				if len(ps) > 0 {
					t.Fatalf("problems in a correct page: %v", ps)
				}
				return
			}
			if len(ps) != 1 || !strings.Contains(ps[0].What, tc.want) {
				t.Fatalf("problems=%v, want one with %q", ps, tc.want)
			}
		})
	}
}

func TestSlugs(t *testing.T) {
	got := Slugs("# CQRS, in Go\n## `refresh_mode: changes` (Postgres)\n## Run it\n## Run it\n```\n# not a heading\n```\n")
	for _, want := range []string{"cqrs-in-go", "refresh_mode-changes-postgres", "run-it", "run-it-1"} {
		if !got[want] {
			t.Errorf("no slug %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block became a heading")
	}
}
