package docs_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// Defaults are the values the repository gives its settings: Makefile
// variables (NAME ?= value), compose variables (${NAME:-value}) and the flags
// of every program, as the generated tables of docs/configuration.md hold them
// (each program's TestDocs keeps those equal to its code).
type Defaults struct {
	Vars  map[string]string
	Flags map[string][]string // a flag name may belong to several programs
}

var (
	makeDefaultRe    = regexp.MustCompile(`(?m)^(?:export\s+)?([A-Z][A-Z0-9_]+)\s*\?=[ \t]*(.*?)\s*$`)
	composeDefaultRe = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+):-([^}]*)\}`)
	flagRowRe        = regexp.MustCompile("(?m)^\\| `-{1,2}([a-z][a-z0-9-]*)` \\| `?([^|`]*)`? \\|")
	generatedRe      = regexp.MustCompile(`(?s)<!-- generated:([a-z0-9-]+) begin -->.*?<!-- generated:[a-z0-9-]+ end -->`)
)

// RepositoryDefaults reads the defaults; the first definition of a variable in
// the Makefile wins, as make's ?= does.
func RepositoryDefaults(t *testing.T) Defaults {
	t.Helper()
	d := Defaults{Vars: map[string]string{}, Flags: map[string][]string{}}
	for _, m := range composeDefaultRe.FindAllStringSubmatch(read(t, "docker-compose.yml"), -1) {
		d.Vars[m[1]] = m[2]
	}
	for _, m := range makeDefaultRe.FindAllStringSubmatch(read(t, "Makefile"), -1) {
		if _, ok := d.Vars[m[1]]; !ok || !strings.Contains(m[2], "$") {
			d.Vars[m[1]] = m[2]
		}
	}
	for _, block := range generatedRe.FindAllString(read(t, "docs/configuration.md"), -1) {
		for _, m := range flagRowRe.FindAllStringSubmatch(block, -1) {
			d.Flags[m[1]] = append(d.Flags[m[1]], strings.TrimSpace(m[2]))
		}
	}
	return d
}

var (
	// A table row naming variables and their defaults, both in code spans:
	// | `A`, `B` | `1`, `2` | ...   (values split by ", " or "; ")
	varRowRe  = regexp.MustCompile("(?m)^\\| ((?:`[A-Z][A-Z0-9_]+`(?:, )?)+) \\| ((?:`[^`]*`(?:[,;] )?)+) \\|")
	codeRe    = regexp.MustCompile("`([^`]*)`")
	flagValRe = regexp.MustCompile("(?m)`--([a-z][a-z0-9-]*)`(?: \\((?:default )?| \\| )([0-9][0-9.,]*(?:, [0-9][0-9.,]*)*(?: ?(?:[KMG]iB|ms|s|min|m|h))?)(?:[,;)|]|\\s*[(|]|\\s*$)")
)

// CheckValues returns the defaults a page states that the repository does
// not have: a variable's default in a table row, and a number given for a flag
// in prose (`--drain` (2 s)) or in the cell after it (| `--query-timeout` | 30 s).
func CheckValues(file, text string, d Defaults) []Problem {
	var ps []Problem
	for _, m := range varRowRe.FindAllStringSubmatch(text, -1) {
		names, values := codeRe.FindAllStringSubmatch(m[1], -1), codeRe.FindAllStringSubmatch(m[2], -1)
		if len(values) != 1 && len(values) != len(names) {
			continue
		}
		for i, n := range names {
			want, ok := d.Vars[n[1]]
			got := values[min(i, len(values)-1)][1]
			if ok && !strings.Contains(want, "$") && got != want {
				ps = append(ps, Problem{file, fmt.Sprintf("%s: the page says default %q, the repository %q", n[1], got, want)})
			}
		}
	}
	for _, m := range flagValRe.FindAllStringSubmatch(generatedRe.ReplaceAllString(text, ""), -1) {
		defs, ok := d.Flags[m[1]]
		if !ok || sameValue(m[2], defs) {
			continue
		}
		ps = append(ps, Problem{file, fmt.Sprintf("--%s: the page says %q, the programs' default is %s", m[1], m[2], strings.Join(defs, " or "))})
	}
	return ps
}

// sameValue reports whether a value written in prose (30 s, 1 MiB, 64)
// equals one of defs as Go prints flag defaults (30s, 1048576, 64).
func sameValue(v string, defs []string) bool {
	if strings.Contains(v, ", ") { // a list: 100, 250, 1,000 is 100,250,1000
		parts := strings.Split(v, ", ")
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(p, ",", "")
		}
		v = strings.Join(parts, ",")
	}
	for _, def := range defs {
		if v == def {
			return true
		}
		if a, err := time.ParseDuration(strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), "min", "m")); err == nil {
			if b, err := time.ParseDuration(def); err == nil && a == b {
				return true
			}
		}
		if a, ok := bytes(v); ok {
			if b, err := strconv.ParseFloat(def, 64); err == nil && a == b {
				return true
			}
		}
	}
	return false
}

// bytes reads a number with an optional binary unit: "1 MiB", "64", "1,000".
func bytes(v string) (float64, bool) {
	num, unit, _ := strings.Cut(strings.ReplaceAll(v, ",", ""), " ")
	if unit == "" {
		for _, u := range []string{"KiB", "MiB", "GiB"} {
			if s, ok := strings.CutSuffix(num, u); ok {
				num, unit = s, u
			}
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	switch unit {
	case "":
		return n, true
	case "KiB":
		return n * (1 << 10), true
	case "MiB":
		return n * (1 << 20), true
	case "GiB":
		return n * (1 << 30), true
	}
	return 0, false
}

// TestCheckValues runs CheckValues on pages with one wrong default each.
func TestCheckValues(t *testing.T) {
	d := Defaults{
		Vars:  map[string]string{"WAIT_TIMEOUT": "300", "API_PORT": "9999", "SIZES": "10k,1M", "SCALE_ARGS": "-c 100"},
		Flags: map[string][]string{"drain": {"2s"}, "max-query-bytes": {"1048576"}, "settle": {"10s", "2s"}, "query-slots": {"0"}, "rates": {"100,1000"}},
	}
	for _, tc := range []struct {
		name, text, want string // want "": no problem
	}{
		{"fine", "| `WAIT_TIMEOUT` | `300` | x |\n| `SIZES`, `SCALE_ARGS` | `10k,1M`; `-c 100` | y |\n" +
			"drains for `--drain` (2 s); `--settle` (default 2s); `--rates` (default 100, 1,000), `--step`\n| Query text | `--max-query-bytes` | 1 MiB (`413`) |\n" +
			"| Slots | `--query-slots` | 2 per core, at least 4 |\n| `API_PORT` | a free port | z |\n", ""},
		{"variable", "| `WAIT_TIMEOUT` | `600` | x |\n", `WAIT_TIMEOUT: the page says default "600"`},
		{"one of a list", "| `SIZES`, `SCALE_ARGS` | `10k,1M`; `-c 50` | y |\n", `SCALE_ARGS: the page says default "-c 50"`},
		{"flag in prose", "for `--drain` (5 s), then", `--drain: the page says "5 s"`},
		{"flag in a table", "| Query text | `--max-query-bytes` | 2 MiB (`413`) |\n", `--max-query-bytes: the page says "2 MiB"`},
		{"generated block", docgen.Begin("x") + "\n| `--drain` | `9s` | d |\n" + docgen.End("x") + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := CheckValues("docs/a.md", tc.text, d)
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

// TestDocsStateTheDefaults fails on every default that README.md or a
// docs/*.md page states and the repository does not have.
func TestDocsStateTheDefaults(t *testing.T) {
	d := RepositoryDefaults(t)
	if len(d.Flags) == 0 || len(d.Vars) == 0 {
		t.Fatalf("no defaults read (%d flags, %d variables): the check would check nothing", len(d.Flags), len(d.Vars))
	}
	for _, p := range pages(t) {
		for _, pr := range CheckValues(p, read(t, p), d) {
			t.Errorf("%s: %s", pr.File, pr.What)
		}
	}
}
