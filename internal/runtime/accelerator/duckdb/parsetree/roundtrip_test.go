//go:build duckdb_arrow

package parsetree_test

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"os"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus.json from DuckDB")

// mustDB opens an in-memory DuckDB with one connection.
func mustDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

// serialize returns DuckDB's parse tree of query as JSON.
func serialize(tb testing.TB, db *sql.DB, query string) []byte {
	tb.Helper()
	var js string
	if err := db.QueryRowContext(context.Background(), `SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`, query).Scan(&js); err != nil {
		tb.Fatalf("json_serialize_sql: %v", err)
	}
	return []byte(js)
}

// deserialize returns the SQL text DuckDB prints for a serialized tree, or
// DuckDB's error.
func deserialize(db *sql.DB, js []byte) (string, error) {
	var s string
	err := db.QueryRowContext(context.Background(), `SELECT json_deserialize_sql(?::VARCHAR::JSON)`, string(js)).Scan(&s)
	return s, err
}

// printed is what DuckDB prints for a serialized tree: its SQL text, or its
// error. (DuckDB 1.5 cannot read back the Infinity it writes for 1e400.)
func printed(db *sql.DB, js []byte) string {
	s, err := deserialize(db, js)
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// TestCorpusRoundTrip decodes DuckDB's tree of every corpus statement and
// encodes it again: the JSON must be the same bytes, and DuckDB must print
// the same SQL from both. It also checks that testdata/corpus.json, which
// the tests without DuckDB use, is what this DuckDB serializes.
func TestCorpusRoundTrip(t *testing.T) {
	db := mustDB(t)
	stmts := corpusStatements(t)
	if got, want := len(stmts), 100; got < want {
		t.Fatalf("corpus has %d statements, want at least %d", got, want)
	}
	var golden bytes.Buffer
	refused := 0
	for i, q := range stmts {
		js := serialize(t, db, q)
		golden.Write(js)
		golden.WriteByte('\n')
		s := mustDecode(t, js)
		enc := mustEncode(t, s)
		if !bytes.Equal(enc, js) {
			t.Errorf("statement %d: encoded tree differs from DuckDB's:%s\nquery: %s", i, firstDiff(enc, js), q)
			continue
		}
		got, want := printed(db, enc), printed(db, js)
		if got != want {
			t.Errorf("statement %d: printed %q, want %q", i, got, want)
		}
		if strings.HasPrefix(want, "error: ") {
			refused++
			t.Logf("statement %d: DuckDB prints neither tree: %s", i, want)
		}
	}
	t.Logf("%d statements, %d printed back as SQL", len(stmts), len(stmts)-refused)
	if *update {
		if err := os.WriteFile(corpusJSON, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old, err := os.ReadFile(corpusJSON); err != nil || !bytes.Equal(old, golden.Bytes()) {
		t.Errorf("%s is not what DuckDB serializes now (%v): run this test with -update", corpusJSON, err)
	}
}
