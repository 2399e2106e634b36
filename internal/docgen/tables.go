package docgen

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// UpdateEnv is the environment variable that makes Check write the blocks
// instead of comparing them: `DOCS_UPDATE=1 go test -run Docs ./...` (make docs).
const UpdateEnv = "DOCS_UPDATE"

// ErrStale: a page's generated block differs from what the code generates.
var ErrStale = errors.New("generated block differs from the code")

// Var is an environment variable a program reads, declared in code so that
// --help and the docs print the same table.
type Var struct {
	Name    string
	Default string // as the program takes it when unset; "" for none
	Usage   string
}

// FlagTable renders fs's flags as a Markdown table of flag, default and usage,
// in name order, as `--help` (flag.PrintDefaults) lists them: a flag of one
// letter is written -c, others --name; the default is the flag's DefValue,
// verbatim, empty when it is the empty string.
func FlagTable(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| Flag | Default | |\n|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		_, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, code(f.DefValue), cell(usage))
	})
	return b.String()
}

// VarTable renders vars as a Markdown table of variable, default and usage, in
// the order given.
func VarTable(vars []Var) string {
	var b strings.Builder
	b.WriteString("| Variable | Default | |\n|---|---|---|\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, code(v.Default), cell(v.Usage))
	}
	return b.String()
}

// PrintVars writes vars for a --help text, one variable and its usage a line,
// its default on the next.
func PrintVars(w io.Writer, vars []Var) {
	for _, v := range vars {
		def := v.Default
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  %-25s %s\n  %-25s default: %s\n", v.Name, v.Usage, "", def)
	}
}

// Check compares each block of blocks (name to body) with the block of that
// name in the page at path, and returns an error wrapping ErrStale that names
// every block that differs, with what to run. With update it writes the blocks
// into the page instead. A block missing from the page is an error either way.
func Check(path string, blocks map[string]string, update bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	text := string(data)
	var stale []string
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		got, err := Block(text, name)
		if err != nil {
			return fmt.Errorf("check %s: %w", path, err)
		}
		want := strings.TrimSpace(blocks[name])
		if got == want {
			continue
		}
		if !update {
			stale = append(stale, fmt.Sprintf("%s:\n--- page\n%s\n--- code\n%s", name, got, want))
			continue
		}
		if text, err = ReplaceBlock(text, name, want); err != nil {
			return fmt.Errorf("update %s: %w", path, err)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%s: %w: run `make docs` to rewrite it (%s=1 go test -run Docs)\n%s",
			path, ErrStale, UpdateEnv, strings.Join(stale, "\n"))
	}
	if update && text != string(data) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fmt.Errorf("update %s: %w", path, err)
		}
	}
	return nil
}

// Updating reports whether UpdateEnv asks Check to write.
func Updating() bool { return os.Getenv(UpdateEnv) != "" }

// code is a value in a code span, or nothing when it is empty.
func code(v string) string {
	if v == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(v, "|", `\|`) + "`"
}

// cell is text fit for one table cell: one line, pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}
