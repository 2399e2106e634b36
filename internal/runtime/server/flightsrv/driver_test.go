//go:build duckdb_arrow

package flightsrv_test

import (
	"database/sql"
	"fmt"
	"testing"

	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
)

// TestDriver is the recipe's client: database/sql with the Arrow Flight SQL driver.
func TestDriver(t *testing.T) {
	r := newRecipe(t, nil, nil)
	db, err := sql.Open("flightsql", "flightsql://"+r.srv.Addr()+"?timeout=20s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := testContext(t)

	rs, err := db.QueryContext(ctx, "select name, count from rankings order by count desc limit 5")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rs.Next() {
		var name string
		var count int64
		if err := rs.Scan(&name, &count); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s|%d", name, count))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	rs.Close()
	if !equal(got, wantRankings) {
		t.Errorf("rows=%q, want %q", got, wantRankings)
	}

	// With an argument the driver prepares the statement and binds it.
	var name string
	if err := db.QueryRowContext(ctx, "SELECT name FROM products WHERE id = ?", int64(3)).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if got, want := name, "nintendo"; got != want {
		t.Errorf("name=%q, want %q", got, want)
	}

	// A query with no rows is no rows, not an error.
	if err := db.QueryRowContext(ctx, "SELECT name FROM products WHERE id = -1").Scan(&name); err != sql.ErrNoRows {
		t.Errorf("err=%v, want sql.ErrNoRows", err)
	}
}
