package spicepod_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

func TestParseRefreshSQL(t *testing.T) {
	for _, tt := range []struct {
		sql       string
		wantCols  []string
		wantWhere string
		wantErr   string // substring; "" means success
	}{
		{"SELECT * FROM orders", nil, "", ""},
		{"select * from Orders;", nil, "", ""},
		{`SELECT * FROM "orders" WHERE id > 10`, nil, "id > 10", ""},
		{"SELECT id, Amount FROM orders WHERE created_at > now() - interval '1 day'", []string{"id", "amount"}, "created_at > now() - interval '1 day'", ""},
		{`SELECT "Id", "a""b" FROM orders`, []string{"Id", `a"b`}, "", ""},
		{"SELECT *\n  FROM orders\n  WHERE kind = 'FROM x GROUP BY' ;", nil, "kind = 'FROM x GROUP BY'", ""},
		{"SELECT * FROM orders WHERE id IN (SELECT id FROM vip ORDER BY id LIMIT 3)", nil, "id IN (SELECT id FROM vip ORDER BY id LIMIT 3)", ""},
		{"", nil, "", "must start with SELECT"},
		{"DELETE FROM orders", nil, "", "must start with SELECT"},
		{"SELECT *", nil, "", "must read FROM"},
		{"SELECT * FROM products", nil, "", "must read FROM this dataset, orders, not products"},
		{"SELECT * FROM public.orders", nil, "", "not public.orders"},
		{"SELECT * FROM orders o", nil, "", "only WHERE, ORDER BY and LIMIT may follow"},
		{"SELECT * FROM orders JOIN x ON true", nil, "", "only WHERE, ORDER BY and LIMIT may follow"},
		{"SELECT * FROM orders WHERE", nil, "", "WHERE has no condition"},
		{"SELECT * FROM orders WHERE a = 1 GROUP BY a", nil, "", "only WHERE, ORDER BY and LIMIT may follow"},
		{"SELECT * FROM orders WHERE a = 1 LIMIT 5 OFFSET 2", nil, "", "only WHERE, ORDER BY and LIMIT may follow"},
		{"SELECT * FROM orders LIMIT 5 ORDER BY a", nil, "", "ORDER BY must come before LIMIT"},
		{"SELECT * FROM orders LIMIT many", nil, "", "LIMIT must be a positive whole number"},
		{"SELECT * FROM orders LIMIT 0", nil, "", "LIMIT must be a positive whole number"},
		{"SELECT * FROM orders ORDER BY", nil, "", "ORDER BY has no columns"},
		{"SELECT * FROM orders WHERE a = 1; DROP TABLE orders", nil, "", "only WHERE, ORDER BY and LIMIT may follow"},
		{"SELECT sum(x) FROM orders", nil, "", "select list"},
		{"SELECT DISTINCT id FROM orders", nil, "", "select list"},
		{"SELECT id, FROM orders", nil, "", "select list"},
		{"SELECT o.id FROM orders", nil, "", "select list"},
		{"SELECT * FROM orders WHERE a = 'open", nil, "", "quote is not closed"},
		{"SELECT * FROM orders WHERE (a = 1", nil, "", "parenthesis is not closed"},
		{"SELECT * FROM orders -- all", nil, "", "comments"},
	} {
		cols, where, err := spicepod.ParseRefreshSQL(tt.sql, "orders")
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseRefreshSQL(%q): %v", tt.sql, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseRefreshSQL(%q) error = %v, want one containing %q", tt.sql, err, tt.wantErr)
		case tt.wantErr == "" && (!reflect.DeepEqual(cols, tt.wantCols) || where != tt.wantWhere):
			t.Errorf("ParseRefreshSQL(%q) = %q, %q, want %q, %q", tt.sql, cols, where, tt.wantCols, tt.wantWhere)
		}
	}
}

func TestParseRefreshQuery_OrderByAndLimit(t *testing.T) {
	for _, tt := range []struct {
		sql, dataset string
		want         spicepod.RefreshQuery
	}{
		{"SELECT * FROM orders WHERE a = 1 ORDER BY a", "orders", spicepod.RefreshQuery{Where: "a = 1", OrderBy: "a", Limit: -1}},
		{"SELECT * FROM orders WHERE a = 1 LIMIT 5", "orders", spicepod.RefreshQuery{Where: "a = 1", Limit: 5}},
		{"select id from orders order by created_at desc, id limit 100;", "orders", spicepod.RefreshQuery{Columns: []string{"id"}, OrderBy: "created_at desc, id", Limit: 100}},
		{"SELECT * FROM orders WHERE id IN (SELECT id FROM x LIMIT 3) ORDER BY (a + 1) DESC", "orders", spicepod.RefreshQuery{Where: "id IN (SELECT id FROM x LIMIT 3)", OrderBy: "(a + 1) DESC", Limit: -1}},
		{"SELECT * FROM spiceai.files LIMIT 10", "spiceai.files", spicepod.RefreshQuery{Limit: 10}},
		{`SELECT * FROM "Sales"."Customer" WHERE x > 1`, "Sales.Customer", spicepod.RefreshQuery{Where: "x > 1", Limit: -1}},
		{`SELECT * FROM sales . customer`, "Sales.Customer", spicepod.RefreshQuery{Limit: -1}},
	} {
		got, err := spicepod.ParseRefreshQuery(tt.sql, tt.dataset)
		if err != nil {
			t.Errorf("ParseRefreshQuery(%q): %v", tt.sql, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseRefreshQuery(%q) = %+v, want %+v", tt.sql, got, tt.want)
		}
	}
}

func TestAcceleration_RefreshFilterWithoutParse(t *testing.T) {
	a := &spicepod.Acceleration{RefreshSQL: "SELECT id FROM anything WHERE id > 3"}
	cols, where := a.RefreshFilter()
	if got, want := cols, []string{"id"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns=%q, want %q", got, want)
	}
	if got, want := where, "id > 3"; got != want {
		t.Errorf("where=%q, want %q", got, want)
	}
}
