//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// rankingsDB holds rankings in the order diffs leave rows in, not the
// ranking's.
func rankingsDB(t *testing.T, columns string) *duckdb.DB {
	t.Helper()
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.Exec(`CREATE OR REPLACE TABLE rankings AS SELECT * FROM (VALUES ('nintendo', 30), ('flower', 10), ('none', NULL), ('chocalate', 70)) AS v(` + columns + `)`)
	})
	return db
}

func TestOrderedDatasetAnswersInItsOrder(t *testing.T) {
	db := rankingsDB(t, "name, count")
	db.SetOrder("rankings", []wire.OrderKey{{Column: "count", Descending: true, NullsFirst: true}})
	for _, tc := range []struct {
		sql  string
		want string
	}{
		{"SELECT * FROM rankings", "none|NULL chocalate|70 nintendo|30 flower|10"},
		{"select name from rankings limit 2", "none chocalate"},
		{"SELECT name, count FROM spice.public.rankings r WHERE count > 5", "chocalate|70 nintendo|30 flower|10"},
		{"SELECT * FROM rankings ORDER BY name", "chocalate|70 flower|10 nintendo|30 none|NULL"},
		{"SELECT count(*) FROM rankings", "4"},
	} {
		if got := strings.Join(userRows(t, db, tc.sql), " "); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.sql, got, tc.want)
		}
	}
	db.SetOrder("rankings", nil)
	if got, want := strings.Join(userRows(t, db, "SELECT name FROM rankings"), " "), "nintendo flower none chocalate"; got != want {
		t.Errorf("without an ordering = %s, want the stored order %s", got, want)
	}
}

// A new subscription may state an ordering on columns its snapshot brings:
// until the table has them, reads answer unordered instead of failing.
func TestOrderOnColumnsNotThereYet(t *testing.T) {
	db := rankingsDB(t, "name, count")
	db.SetOrder("rankings", []wire.OrderKey{{Column: "total"}})
	if got, want := strings.Join(userRows(t, db, "SELECT name FROM rankings"), " "), "nintendo flower none chocalate"; got != want {
		t.Fatalf("before the column exists = %s, want %s", got, want)
	}
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.Exec(`CREATE OR REPLACE TABLE rankings AS SELECT * FROM (VALUES ('nintendo', 30), ('flower', 10)) AS v(name, total)`)
	})
	if got, want := strings.Join(userRows(t, db, "SELECT name FROM rankings"), " "), "flower nintendo"; got != want {
		t.Fatalf("once the column exists = %s, want %s", got, want)
	}
}

func TestOutputOrder(t *testing.T) {
	db := rankingsDB(t, "name, count")
	for _, tc := range []struct {
		sql  string
		want []duckdb.OrderKey
	}{
		{"select name, count from rankings order by count desc limit 5", []duckdb.OrderKey{{Index: 1, Descending: true, NullsFirst: true}}},
		{"select name, count as c from rankings order by c, name desc nulls last", []duckdb.OrderKey{{Index: 1}, {Index: 0, Descending: true}}},
		{"select * from rankings order by 2 nulls first", []duckdb.OrderKey{{Index: 1, NullsFirst: true}}},
		{"select name, sum(count) from rankings group by name order by sum(count) desc", []duckdb.OrderKey{{Index: 1, Descending: true, NullsFirst: true}}},
		{"select name from rankings order by count", nil},
		{"select name, count from rankings", nil},
	} {
		got, err := db.OutputOrder(context.Background(), tc.sql)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("OutputOrder(%s) = %+v, %v; want %+v", tc.sql, got, err, tc.want)
		}
	}
}
