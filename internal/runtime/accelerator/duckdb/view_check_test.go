//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// guardCases are view and query texts for the read-only guard: a second
// statement after a view's SELECT and its neighbours, and views that would
// read what users' queries may not. FuzzGuard starts from them.
var guardCases = []struct {
	name, sql string
	readOnly  bool // refused with ErrReadOnly
	fails     bool // refused with another error (syntax)
}{
	{"select", "select 1 as a", false, false},
	{"select from a table not loaded yet", "select count(*) from orders_not_loaded", false, false},
	{"missing column", "select nope from orders_not_loaded", false, false},
	{"internal table", "select * from _spice.watermarks", true, false},
	{"internal table, missing column", "select nope from _spice.watermarks", true, false},
	{"settings", "select * from duckdb_settings()", true, false},
	{"database file path", "select * from pragma_database_list", true, false},
	{"file function", "select * from read_text('/etc/hostname')", true, false},
	{"transaction counter", "select txid_current()", true, false},
	{"random seed", "select setseed(0.5)", true, false},
	{"cte", "with a as (select 1 as x) select x from a", false, false},
	{"create after a select", "select 1 as a; create table pwn as select 42 as y", true, false},
	{"two selects", "select 1; select 2", true, false},
	{"drop after select", "select 1; drop table _spice.watermarks", true, false},
	{"trailing semicolon", "select 1;", false, false},
	{"pragma read (DuckDB rewrites it to a SELECT)", "pragma version", true, false},
	{"copy to a file", "copy (select 1) to 'x.csv'", true, false},
	{"set", "set threads = 1", true, false},
	{"attach", "attach ':memory:' as other", true, false},
	{"create", "create table pwn as select 1", true, false},
	{"syntax error", "selec 1", false, true},
}

func TestCheckView(t *testing.T) {
	db := MustOpen(t, "")
	ctx := context.Background()
	for _, tt := range guardCases {
		t.Run(tt.name, func(t *testing.T) {
			err := db.CheckView(ctx, tt.sql)
			switch {
			case tt.readOnly && !errors.Is(err, duckdb.ErrReadOnly):
				t.Fatalf("CheckView(%q) = %v, want ErrReadOnly", tt.sql, err)
			case tt.fails && (err == nil || errors.Is(err, duckdb.ErrReadOnly)):
				t.Fatalf("CheckView(%q) = %v, want a syntax error", tt.sql, err)
			case !tt.readOnly && !tt.fails && err != nil:
				t.Fatalf("CheckView(%q) = %v, want nil", tt.sql, err)
			}
			if ok, err := db.TableExists(ctx, "pwn"); err != nil || ok {
				t.Fatalf("table pwn exists=%v (%v) after CheckView(%q)", ok, err, tt.sql)
			}
		})
	}
	err := db.CheckView(ctx, "select 1 as a; create table pwn as select 42 as y")
	if want := "more than one statement"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v does not say %q", err, want)
	}
}

// FuzzGuard: whatever the text, CheckView and Query change nothing in the
// database: no table, view or row appears or disappears. Needs the
// duckdb_arrow tag: `go test -tags duckdb_arrow -fuzz=FuzzGuard ./internal/runtime/accelerator/duckdb/`.
func FuzzGuard(f *testing.F) {
	for _, tt := range guardCases {
		f.Add(tt.sql)
	}
	f.Add("select * from t")
	f.Add("insert into t values (2)")
	f.Add("delete from t")
	f.Add("copy t to 'x.csv'")
	f.Add("set threads = 1")
	f.Add("select 1; insert into t values (3)")
	f.Add("begin; insert into t values (3); commit")
	db := duckdb.New("")
	db.QueryTimeout = 2 * time.Second
	if err := db.Open(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := db.Update(ctx, func(tx engine.StoreTx) error { return tx.(*duckdb.Tx).Exec("create table t as select 1 as x") }); err != nil {
		f.Fatal(err)
	}
	const catalog = "select (select count(*) from duckdb_tables()) || '/' || (select count(*) from duckdb_views() where not internal) || '/' || (select count(*) from t) || '/' || (select count(*) from duckdb_databases())"
	before := scalar(f, db, catalog)
	f.Fuzz(func(t *testing.T, sql string) {
		_ = db.CheckView(ctx, sql)
		if res, err := db.Query(ctx, engine.StoreQuery{SQL: sql}); err == nil {
			res.Release()
		}
		if after := scalar(t, db, catalog); after != before {
			t.Fatalf("%q changed tables/views/rows/databases from %s to %s", sql, before, after)
		}
	})
}
