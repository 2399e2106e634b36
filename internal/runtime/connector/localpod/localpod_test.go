//go:build duckdb_arrow

package localpod_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/localpod"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// The children come before their parent in the file, as upstream allows; none
// has a refresh_check_interval, so only the parent's changes refresh them.
const pod = `version: v1
kind: Spicepod
name: tiers
datasets:
  - from: localpod:orders
    name: big_orders
    acceleration:
      enabled: true
      refresh_sql: SELECT id, count FROM big_orders WHERE count >= 20
  - from: localpod:orders
    name: orders_log
    time_column: id
    acceleration: {enabled: true, refresh_mode: append, primary_key: id}
  - from: localpod:big_orders
    name: grandchild
    acceleration: {enabled: true}
  - from: test:orders
    name: orders
    acceleration: {enabled: true}
`

// lazy lets the sources hold the engine before it exists.
type lazy struct{ *engine.Engine }

func count(t *testing.T, e *engine.Engine, sql string) string {
	t.Helper()
	res, err := e.Query(context.Background(), engine.Query{SQL: sql, NoCache: true})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	return fmt.Sprintf("%s@%s", res.Records[0].Column(0).ValueStr(0), res.Position)
}

func TestChildrenFollowTheirParent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	_, orders := runtimetest.RecipeSources(t, mem, 100)
	l := &lazy{}
	e := runtimetest.NewEngine(t, pod, map[string]engine.Source{
		"orders":     orders,
		"big_orders": localpod.NewSource(l, "orders"),
		"orders_log": localpod.NewSource(l, "orders"),
		"grandchild": localpod.NewSource(l, "big_orders"),
	}, func(e *engine.Engine) { l.Engine = e })
	runtimetest.WaitReady(t, e)
	for sql, want := range map[string]string{
		"SELECT count(*) FROM big_orders": "2@0/64", // refresh_sql: count >= 20
		"SELECT count(*) FROM orders_log": "3@0/64",
		"SELECT count(*) FROM grandchild": "2@0/64",
	} {
		if got := count(t, e, sql); got != want {
			t.Errorf("%s = %s, want %s", sql, got, want)
		}
	}

	// The parent changes: every child follows at the parent's position, with no
	// interval of its own.
	orders.Set(t, 200, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30}, []any{4, 1, 40})
	if err := e.Refresh("orders"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"big_orders", "orders_log", "grandchild"} {
		runtimetest.WaitWatermark(t, e, name, position.LSN(200))
	}
	for sql, want := range map[string]string{
		"SELECT count(*) FROM big_orders":                    "3@0/C8",
		"SELECT count(*) FROM orders_log":                    "4@0/C8",
		"SELECT count(*) FROM grandchild":                    "3@0/C8",
		"SELECT count(DISTINCT id) FROM orders_log":          "4@0/C8", // append overlap kept once
		"SELECT count(*) FROM big_orders WHERE product_id=1": "",       // not selected by refresh_sql
	} {
		if want == "" {
			if _, err := e.Query(context.Background(), engine.Query{SQL: sql, NoCache: true}); err == nil {
				t.Errorf("%s: answered, want an error (column not in the child)", sql)
			}
			continue
		}
		if got := count(t, e, sql); got != want {
			t.Errorf("%s = %s, want %s", sql, got, want)
		}
	}
}

// A child of a parent that does not exist fails its load with the engine's error.
func TestUnknownParent(t *testing.T) {
	l := &lazy{}
	e := runtimetest.NewEngine(t, `version: v1
kind: Spicepod
name: orphan
datasets:
  - from: localpod:nope
    name: child
`, map[string]engine.Source{"child": localpod.NewSource(l, "nope")}, func(e *engine.Engine) { l.Engine = e })
	_, err := e.Query(context.Background(), engine.Query{SQL: "SELECT * FROM child"})
	if err == nil {
		t.Fatal("query of a child without a parent answered")
	}
}
