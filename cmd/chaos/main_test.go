package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
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

// TestConfigurationDocsEveryFlag fails when docs/configuration.md's chaos
// table lacks a flag, names one chaos does not have, or gives another default
// or text than --help does.
func TestConfigurationDocsEveryFlag(t *testing.T) {
	page, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(page)[strings.Index(string(page), "\n## chaos\n"):]
	table = table[strings.Index(table, "| Flag |"):]
	table = strings.TrimSpace(table[:strings.Index(table, "\n\n")])
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n")[2:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `--"), "`")
		rows[name] = line
	}
	flags(&config{}).VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = "`" + f.DefValue + "`"
		}
		if got, want := rows[f.Name], fmt.Sprintf("| `--%s` | %s | %s |", f.Name, def, f.Usage); got != want {
			t.Errorf("docs row\n%s\nwant\n%s", got, want)
		}
		delete(rows, f.Name)
	})
	for name := range rows {
		t.Errorf("docs name --%s, which chaos does not have", name)
	}
}
