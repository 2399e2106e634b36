//go:build duckdb_arrow

package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// viewsPod has the recipe's query-time view and an accelerated view, both
// reading products and orders.
var viewsPod = `version: v1
kind: Spicepod
name: views
datasets:
  - from: test:products
    name: products
    acceleration: {enabled: true}
  - from: test:orders
    name: orders
    acceleration: {enabled: true}
views:
  - name: rankings
    sql: |
      ` + strings.ReplaceAll(runtimetest.RankingsSQL, "\n", " ") + `
  - name: totals
    sql: SELECT products.name, sum(count) AS total FROM orders JOIN products ON orders.product_id = products.id GROUP BY products.name ORDER BY products.name
    acceleration: {enabled: true}
`

// TestViewFollowsItsInputs holds the first load of orders: a view is not ready
// while an input is not, names that input, and once ready reflects the least
// of its inputs' watermarks, for query-time and accelerated views alike.
func TestViewFollowsItsInputs(t *testing.T) {
	for _, tc := range []struct {
		view        string
		sql         string
		first, next []string // before and after products change
	}{
		{
			view:  "rankings",
			sql:   "SELECT name, count FROM rankings",
			first: []string{"nintendo|30", "the most delicious chocalate|20", "the most beautiful flower|10"},
			next:  []string{"switch|30", "chocolate|20", "rose|10"},
		},
		{
			view:  "totals",
			sql:   "SELECT name, total FROM totals ORDER BY name",
			first: []string{"nintendo|30", "the most beautiful flower|10", "the most delicious chocalate|20"},
			next:  []string{"chocolate|20", "rose|10", "switch|30"},
		},
	} {
		t.Run(tc.view, func(t *testing.T) {
			mem := checkedMem(t)
			products, orders := runtimetest.RecipeSources(t, mem, 100)
			orders.Set(t, 200, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30})
			release := orders.BlockNext(t, 1)
			e := runtimetest.NewEngine(t, viewsPod, map[string]engine.Source{"products": products, "orders": orders}, nil)
			runtimetest.WaitWatermark(t, e, "products", 100)
			runtimetest.WaitFor(t, e, "the first load of orders to start", func() bool { return orders.Blocked() == 1 })

			if e.Ready() {
				t.Fatal("Ready() while orders loads, want false")
			}
			if st := status(t, e, tc.view); st.Ready {
				t.Fatalf("%s ready while orders loads", tc.view)
			}
			_, err := e.Query(testContext(t), engine.Query{SQL: tc.sql})
			var nr *engine.NotReadyError
			if !errors.As(err, &nr) || nr.Dataset != "orders" {
				t.Fatalf("query of %s while orders loads: err = %v, want a NotReadyError naming orders", tc.view, err)
			}

			release()
			runtimetest.WaitReady(t, e)
			if wm, err := e.Watermark(tc.view); err != nil || wm != 100 {
				t.Fatalf("watermark of %s = %s, %v; want the least of its inputs, 0/64", tc.view, wm, err)
			}
			if got, pos := mustQuery(t, e, tc.sql); !equal(got, tc.first) || pos != 100 {
				t.Fatalf("%s = %q at %s, want %q at 0/64", tc.view, got, pos, tc.first)
			}

			// products moves past orders: the view now lags with orders.
			products.Set(t, 300, []any{1, "rose"}, []any{2, "chocolate"}, []any{3, "switch"})
			if err := e.Refresh("products"); err != nil {
				t.Fatal(err)
			}
			runtimetest.WaitWatermark(t, e, tc.view, 200)
			if wm, _ := e.Watermark(tc.view); wm != 200 {
				t.Fatalf("watermark of %s = %s, want the least of its inputs, %s", tc.view, wm, position.LSN(200))
			}
			if got, pos := mustQuery(t, e, tc.sql); !equal(got, tc.next) || pos != 200 {
				t.Fatalf("%s = %q at %s, want %q at 0/C8", tc.view, got, pos, tc.next)
			}
		})
	}
}
