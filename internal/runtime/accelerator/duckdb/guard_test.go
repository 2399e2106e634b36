//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// The runtime's internals and the host are not readable through user SQL.
func TestQueryRefusesIntrospection(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 1, time.Now()}))
		return err
	})
	for _, tc := range []struct{ name, sql, want string }{
		{"bookkeeping schema", "SELECT * FROM _spice.watermarks", "_spice.watermarks"},
		{"bookkeeping in a subquery", "SELECT (SELECT count(*) FROM _spice.watermarks)", "_spice"},
		{"bookkeeping in a cte", "WITH w AS (SELECT * FROM _spice.watermarks) SELECT * FROM w", "_spice"},
		{"settings", "SELECT * FROM duckdb_settings()", "duckdb_settings"},
		{"secrets", "SELECT * FROM duckdb_secrets()", "duckdb_secrets"},
		{"extensions", "SELECT * FROM duckdb_extensions()", "duckdb_extensions"},
		{"tables", "SELECT * FROM duckdb_tables()", "duckdb_tables"},
		{"tables view", "SELECT * FROM duckdb_tables", "duckdb_tables"},
		{"information_schema not served", "SELECT * FROM information_schema.key_column_usage", "information_schema"},
		{"sqlite_master", "SELECT * FROM sqlite_master", "sqlite_master"},
		{"pg_catalog", "SELECT * FROM pg_catalog.pg_class", "pg_catalog"},
		{"pragma version", "PRAGMA version", "PRAGMA"},
		{"pragma table_info", "PRAGMA table_info('orders')", "PRAGMA"},
		{"pragma function", "SELECT * FROM pragma_version()", "pragma_version"},
		{"current_setting", "SELECT current_setting('temp_directory')", "current_setting"},
		{"getenv", "SELECT getenv('HOME')", "getenv"},
		{"version", "SELECT version()", "version"},
		{"query()", "SELECT * FROM query('SELECT * FROM _spice.watermarks')", "query"},
		{"show", "SHOW DATABASES", "SHOW"},
		{"summarize", "SUMMARIZE orders", "SUMMARIZE"},
		{"glob", "SELECT * FROM glob('/*')", "glob"},
		{"database file path", "SELECT * FROM pragma_database_list", "pragma_database_list"},
		{"transaction counter", "SELECT txid_current()", "txid_current"},
		{"query counter", "SELECT current_query_id()", "current_query_id"},
		{"random seed", "SELECT setseed(0.5)", "setseed"},
		{"sequence", "SELECT nextval('s')", "nextval"},
		{"log", "SELECT write_log('x')", "write_log"},
		{"plan of another text", "SELECT json_serialize_plan('SELECT * FROM _spice.watermarks')", "json_serialize_plan"},
		{"server start", "SELECT pg_postmaster_start_time()", "pg_postmaster_start_time"},
		{"copy to a file", "COPY (SELECT 1) TO 'out.csv'", "COPY"},
		{"copy after a comment", "/* x */ -- y\n COPY orders TO 'out.parquet'", "COPY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Query(context.Background(), engine.StoreQuery{SQL: tc.sql, User: true})
			if err == nil {
				res.Release()
				t.Fatalf("%s: answered, want a refusal", tc.sql)
			}
			if !errors.Is(err, duckdb.ErrReadOnly) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: error %q, want ErrReadOnly naming %q", tc.sql, err, tc.want)
			}
			if _, err := db.Parse(context.Background(), tc.sql); !errors.Is(err, duckdb.ErrReadOnly) {
				t.Fatalf("Parse(%s): error %v, want ErrReadOnly", tc.sql, err)
			}
		})
	}
	for _, sql := range []string{
		"SELECT * FROM orders",
		"WITH a AS (SELECT product_id, sum(count) AS n FROM orders GROUP BY 1) SELECT * FROM a",
		"SELECT sum(range) FROM range(10)",
		"SELECT * FROM orders WHERE id = ?",
		"SELECT pg_typeof(1), typeof(1)",
	} {
		var args []any
		if strings.Contains(sql, "?") {
			args = []any{int64(1)}
		}
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql, Args: args, User: true})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		res.Release()
	}
	// The runtime's own bookkeeping reads are not a user's.
	scalar(t, db, "SELECT count(*) FROM _spice.watermarks") // fails the test on error
}

func TestParseReportsTablesAndTableFunctions(t *testing.T) {
	db := MustOpen(t, "")
	p, err := db.Parse(context.Background(), "WITH a AS (SELECT * FROM orders) SELECT * FROM a JOIN products USING (id)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(p.Tables, ","), "orders,products"; got != want && got != "products,orders" {
		t.Fatalf("tables=%s, want %s (the CTE left out)", got, want)
	}
	if p.TableFunctions {
		t.Fatal("table functions reported for a query without any")
	}
	p, err = db.Parse(context.Background(), "SELECT o.* FROM orders o, range(10)")
	if err != nil {
		t.Fatal(err)
	}
	if !p.TableFunctions {
		t.Fatal("range() not reported")
	}
}

// DuckDB's "Did you mean" names only tables users can read.
func TestQueryErrorsSuggestOnlyUserTables(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 1, time.Now()}))
		return err
	})
	_, err := db.Query(context.Background(), engine.StoreQuery{SQL: "SELECT * FROM ordrs", User: true})
	if err == nil || !strings.Contains(err.Error(), `Did you mean "orders"`) {
		t.Fatalf("err=%v, want a suggestion of the user's table", err)
	}
	for _, sql := range []string{"SELECT * FROM temp_master", "SELECT * FROM attrdef", "SELECT * FROM watermark"} {
		_, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql, User: true})
		if err == nil {
			t.Fatalf("%s answered", sql)
		}
		for _, leak := range []string{"Did you mean", "sqlite", "pg_", "_spice", "watermarks"} {
			if strings.Contains(err.Error(), leak) {
				t.Fatalf("%s: error %q reveals %q", sql, err, leak)
			}
		}
	}
}

// A result over MaxResultBytes is stopped while DuckDB builds it, not after: a
// row past the cap would raise an error.
func TestQueryStopsLargeResultEarly(t *testing.T) {
	db := duckdb.New("")
	db.MemoryLimit = 256 << 20
	db.MaxResultBytes = 1 << 20
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: `SELECT range,
		CASE WHEN range > 20000000 THEN error('built past the cap') END AS x FROM range(200000000)`})
	if err == nil {
		res.Release()
		t.Fatal("a 1.6 GB result answered under a 1 MiB limit")
	}
	if !errors.Is(err, engine.ErrResultTooLarge) {
		t.Fatalf("err=%v, want ErrResultTooLarge", err)
	}
}

// The cache of inspected texts counts the texts in its bytes.
func TestInspectCacheStaysWithinItsBytes(t *testing.T) {
	db := duckdb.New("")
	db.InspectCacheBytes = 1 << 20
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for i := 0; i < 40; i++ {
		sql := "SELECT " + strings.Repeat(" ", 100<<10) + fmt.Sprint(i) + " AS x"
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql})
		if err != nil {
			t.Fatal(err)
		}
		res.Release()
	}
	if got := db.InspectedBytes(); got > 1<<20 || got == 0 {
		t.Fatalf("inspection cache holds %d bytes, want 0 < bytes <= %d", got, 1<<20)
	}
}
