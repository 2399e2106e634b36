package parsetree_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// corpusSQL is the corpus of SELECT texts; corpusJSON holds, line by line,
// what DuckDB's json_serialize_sql made of each (TestCorpusRoundTrip checks
// it, and rewrites it with -update).
const (
	corpusSQL  = "testdata/corpus.sql"
	corpusJSON = "testdata/corpus.json"
)

// entry is one statement of the corpus and its serialized parse tree.
type entry struct {
	sql  string
	json []byte
}

// corpusStatements reads the statements of the corpus: each ends with a
// semicolon at the end of a line; lines starting with -- are comments.
func corpusStatements(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile(corpusSQL)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "--") || (len(cur) == 0 && strings.TrimSpace(line) == "") {
			continue
		}
		cur = append(cur, line)
		if strings.HasSuffix(line, ";") {
			out = append(out, strings.TrimSuffix(strings.Join(cur, "\n"), ";"))
			cur = nil
		}
	}
	if len(cur) > 0 {
		tb.Fatalf("%s: the last statement has no semicolon", corpusSQL)
	}
	return out
}

// mustCorpus returns the corpus with its serialized trees.
func mustCorpus(tb testing.TB) []entry {
	tb.Helper()
	stmts := corpusStatements(tb)
	data, err := os.ReadFile(corpusJSON)
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != len(stmts) {
		tb.Fatalf("%s has %d trees for %d statements of %s: run go test -tags duckdb_arrow -run TestCorpusRoundTrip -update",
			corpusJSON, len(lines), len(stmts), corpusSQL)
	}
	out := make([]entry, len(stmts))
	for i := range stmts {
		out[i] = entry{sql: stmts[i], json: lines[i]}
	}
	return out
}

// mustDecode decodes a document of one statement.
func mustDecode(tb testing.TB, js []byte) *parsetree.SelectStatement {
	tb.Helper()
	doc, err := parsetree.Decode(js)
	if err != nil {
		tb.Fatalf("decode: %v", err)
	}
	s, err := doc.Select()
	if err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return s
}

// mustEncode encodes a document of one statement.
func mustEncode(tb testing.TB, s *parsetree.SelectStatement) []byte {
	tb.Helper()
	js, err := parsetree.Encode(&parsetree.Document{Statements: []*parsetree.SelectStatement{s}})
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return js
}

// firstDiff shows where two byte strings part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-60)
	return "\n got: ..." + string(a[from:min(len(a), i+60)]) + "\nwant: ..." + string(b[from:min(len(b), i+60)])
}
