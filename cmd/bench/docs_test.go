package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// flagSets are every command's flag set, by the heading docs/configuration.md
// gives its table.
func flagSets() map[string]*flag.FlagSet {
	return map[string]*flag.FlagSet{
		"`go run ./cmd/bench [flags]`": scaleFlags(&scaleOptions{}),
		"`bench writes`":               writesFlags(&writesOptions{}),
		"`bench heavy`":                heavyFlags(&heavyOptions{}),
		"`bench failover`":             failoverFlags(&failoverOptions{}),
		"`bench restart`":              restartFlags(&restartOptions{}),
	}
}

// TestConfigurationDocsEveryFlag fails when docs/configuration.md's table of a
// command lacks one of its flags, names one it does not have, or gives another
// default or text than --help does.
func TestConfigurationDocsEveryFlag(t *testing.T) {
	page, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(page)[strings.Index(string(page), "\n## bench\n"):]
	section = section[:strings.Index(section, "\n## chaos\n")]
	for heading, fs := range flagSets() {
		i := strings.Index(section, heading)
		if i < 0 {
			t.Errorf("docs/configuration.md has no table after %s", heading)
			continue
		}
		table := section[i:]
		table = table[strings.Index(table, "| Flag |"):]
		if end := strings.Index(table, "\n\n"); end >= 0 {
			table = table[:end]
		}
		rows := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			rows[strings.TrimLeft(name, "-")] = line
		}
		fs.VisitAll(func(f *flag.Flag) {
			if got, want := rows[f.Name], docRow(f); got != want {
				t.Errorf("%s: docs row\n%s\nwant\n%s", heading, got, want)
			}
			delete(rows, f.Name)
		})
		for name := range rows {
			t.Errorf("%s: docs name --%s, which the command does not have", heading, name)
		}
	}
}

// docRow is a flag's row as the configuration page writes it.
func docRow(f *flag.Flag) string {
	dash, def := "--", ""
	if len(f.Name) == 1 {
		dash = "-"
	}
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
		def = "`" + f.DefValue + "`"
	}
	return fmt.Sprintf("| `%s%s` | %s | %s |", dash, f.Name, def, f.Usage)
}
