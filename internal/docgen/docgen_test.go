package docgen_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

var stamp = docgen.Stamp{Time: time.Date(2026, 12, 3, 12, 5, 0, 0, time.UTC), Commit: "abc1234"}

func TestReplace(t *testing.T) {
	const gen = "<!-- generated:t begin -->\n\n_Generated 2026-12-03 12:05 UTC from commit abc1234._\n\n| a |\n\n<!-- generated:t end -->"
	for _, tc := range []struct {
		name, text, want string
		err              error
	}{
		{"empty block", "# Page\n\n<!-- generated:t begin -->\n<!-- generated:t end -->\n\nafter\n",
			"# Page\n\n" + gen + "\n\nafter\n", nil},
		{"old content replaced", "x\n<!-- generated:t begin -->\nold\ntable\n<!-- generated:t end -->\ny",
			"x\n" + gen + "\ny", nil},
		{"two blocks", "<!-- generated:t begin --><!-- generated:t end -->|<!-- generated:t begin -->z<!-- generated:t end -->",
			gen + "|" + gen, nil},
		{"other name untouched", "<!-- generated:u begin -->keep<!-- generated:u end -->\n<!-- generated:t begin --><!-- generated:t end -->",
			"<!-- generated:u begin -->keep<!-- generated:u end -->\n" + gen, nil},
		{"no markers", "plain text", "plain text", docgen.ErrNoMarkers},
		{"other name only", "<!-- generated:u begin --><!-- generated:u end -->", "<!-- generated:u begin --><!-- generated:u end -->", docgen.ErrNoMarkers},
		{"unclosed", "<!-- generated:t begin -->\nrest", "<!-- generated:t begin -->\nrest", docgen.ErrUnclosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := docgen.Replace(tc.text, "t", "\n| a |\n", stamp)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err=%v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestReplaceIsIdempotent(t *testing.T) {
	text := "a\n<!-- generated:t begin -->\n<!-- generated:t end -->\nb\n"
	once, err := docgen.Replace(text, "t", "body", stamp)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := docgen.Replace(once, "t", "body", stamp)
	if err != nil {
		t.Fatal(err)
	}
	if once != twice {
		t.Fatalf("second replace changed the text:\n%q\n%q", once, twice)
	}
}

func TestStampString(t *testing.T) {
	for _, tc := range []struct {
		s    docgen.Stamp
		want string
	}{
		{stamp, "Generated 2026-12-03 12:05 UTC from commit abc1234."},
		{docgen.Stamp{Time: stamp.Time}, "Generated 2026-12-03 12:05 UTC."},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String()=%q, want %q", got, tc.want)
		}
	}
}

func TestUpdateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "page.md")
	if err := os.WriteFile(path, []byte("# P\n<!-- generated:t begin -->\n<!-- generated:t end -->\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := docgen.UpdateFile(path, "t", "row", stamp); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# P\n<!-- generated:t begin -->\n\n_" + stamp.String() + "_\n\nrow\n\n<!-- generated:t end -->\n"
	if string(data) != want {
		t.Fatalf("file=%q, want %q", data, want)
	}
	if err := docgen.UpdateFile(path, "other", "row", stamp); !errors.Is(err, docgen.ErrNoMarkers) {
		t.Fatalf("other block: err=%v, want ErrNoMarkers", err)
	}
	if err := docgen.UpdateFile(filepath.Join(dir, "missing.md"), "t", "row", stamp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err=%v, want ErrNotExist", err)
	}
}

func TestCommitWithoutGit(t *testing.T) {
	// A directory outside any repository (or a machine without git) gives no
	// commit rather than an error.
	if got := docgen.Commit(t.Context(), t.TempDir()); got != "" {
		t.Fatalf("Commit outside a repository=%q, want empty", got)
	}
}

func TestFlagTable(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("url", "http://localhost:9999", "base URL of the `api`")
	fs.Int("c", 100, "connections")
	fs.Bool("quick", false, "a smoke run | short")
	fs.Duration("timeout", 3*time.Second, "how long\n  to wait")
	fs.String("key", "", "the key")
	want := "| Flag | Default | |\n|---|---|---|\n" +
		"| `-c` | `100` | connections |\n" +
		"| `--key` |  | the key |\n" +
		"| `--quick` | `false` | a smoke run \\| short |\n" +
		"| `--timeout` | `3s` | how long to wait |\n" +
		"| `--url` | `http://localhost:9999` | base URL of the api |\n"
	if got := docgen.FlagTable(fs); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestVarTableAndPrintVars(t *testing.T) {
	vars := []docgen.Var{{Name: "API_ADDR", Default: ":9999", Usage: "address"}, {Name: "API_WRITE_KEY", Usage: "key; off when empty"}}
	want := "| Variable | Default | |\n|---|---|---|\n| `API_ADDR` | `:9999` | address |\n| `API_WRITE_KEY` |  | key; off when empty |\n"
	if got := docgen.VarTable(vars); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	var b strings.Builder
	docgen.PrintVars(&b, vars)
	if got := b.String(); !strings.Contains(got, "API_ADDR") || !strings.Contains(got, "default: :9999") || !strings.Contains(got, "default: none") {
		t.Fatalf("help text lacks a variable or default:\n%s", got)
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	page := "# P\n<!-- generated:a begin -->\nold\n<!-- generated:a end -->\nprose\n<!-- generated:b begin -->\nsame\n<!-- generated:b end -->\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{"a": "new", "b": "same"}
	err := docgen.Check(path, blocks, false)
	if !errors.Is(err, docgen.ErrStale) || !strings.Contains(err.Error(), "make docs") || !strings.Contains(err.Error(), "old") {
		t.Fatalf("stale page: err=%v, want ErrStale naming make docs and the old text", err)
	}
	if err := docgen.Check(path, blocks, true); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := docgen.Check(path, blocks, false); err != nil {
		t.Fatalf("after update: %v", err)
	}
	data, _ := os.ReadFile(path)
	if want := "# P\n<!-- generated:a begin -->\n\nnew\n\n<!-- generated:a end -->\nprose\n<!-- generated:b begin -->\nsame\n<!-- generated:b end -->\n"; string(data) != want {
		t.Fatalf("page=%q, want %q", data, want)
	}
	if err := docgen.Check(path, map[string]string{"c": "x"}, true); !errors.Is(err, docgen.ErrNoMarkers) {
		t.Fatalf("missing block: err=%v, want ErrNoMarkers", err)
	}
}

func TestBlock(t *testing.T) {
	got, err := docgen.Block("x\n<!-- generated:t begin -->\n\n body \n<!-- generated:t end -->", "t")
	if err != nil || got != "body" {
		t.Fatalf("Block=%q, %v; want body", got, err)
	}
	if _, err := docgen.Block("<!-- generated:t begin -->", "t"); !errors.Is(err, docgen.ErrUnclosed) {
		t.Fatalf("unclosed: err=%v", err)
	}
}
