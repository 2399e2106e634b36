//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

var (
	ivmProducts = fields(
		arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true})
	ivmOrders = fields(
		arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "product_id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true})
	ivmKey  = fields(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
	ivmPKey = fields(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int32})
)

// ivmQueries are maintained in TestMaintainedQueriesMatchFromScratch; mode is
// the prefix of the Mode each must report.
var ivmQueries = []struct {
	name, sql, mode string
}{
	{"recipe ranking", runtimetest.RankingsSQL, "incremental"},
	{"every aggregate by group", `SELECT product_id, count(*) AS n, sum(count) AS total, avg(count) AS mean, min(count) AS lo,
		max(count) AS hi, count(price) AS priced, sum(price) AS revenue, min(price) AS cheapest FROM orders GROUP BY product_id`, "incremental"},
	{"whole-table aggregate", `SELECT sum(count) AS total, count(*) AS n, max(price) AS top, avg(price) AS mean FROM orders`, "incremental"},
	{"join, filter and expressions", `SELECT p.name, o.count % 3 AS bucket, sum(o.count * 2) AS twice, count(o.price) AS priced
		FROM orders o JOIN products p ON o.product_id = p.id WHERE o.count > 2 GROUP BY p.name, o.count % 3`, "incremental"},
	{"subquery with left join and limit", `SELECT p.name, s.total FROM products p LEFT JOIN
		(SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id) s ON s.product_id = p.id
		ORDER BY s.total DESC NULLS LAST, p.name LIMIT 3`, "incremental"},
	{"having falls back", `SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id HAVING sum(count) > 10`, "recompute: an aggregate has HAVING"},
	{"rows of one table", `SELECT id, count, price * 2 AS double, count::HUGEINT AS wide FROM orders WHERE count > 5`, "incremental: the table's changed rows"},
	{"a join of rows falls back", `SELECT o.id, p.name FROM orders o JOIN products p ON o.product_id = p.id`, "recompute: it has no GROUP BY aggregate"},
}

// TestMaintainedQueriesMatchFromScratch runs random sequences of inserts,
// deletes, updates, truncations and product changes through maintained
// queries and checks, after every transaction, that the previous result with
// the reported diff applied, and the maintained result, both equal the query
// evaluated from scratch.
func TestMaintainedQueriesMatchFromScratch(t *testing.T) {
	for _, q := range ivmQueries {
		t.Run(q.name, func(t *testing.T) {
			// Seeds 1 and 2 write 1-3 changes per transaction; seed 3
			// writes batches of 5-15, as a change feed's group commit does
			// under load (many source transactions, netted per key, in one
			// store transaction): inserts of rows that a later change of the
			// same batch deletes or updates, truncations amid them.
			for seed := uint64(1); seed <= 3; seed++ {
				runIVM(t, q.sql, q.mode, seed)
			}
		})
	}
}

func runIVM(t *testing.T, query, mode string, seed uint64) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	db := MustOpen(t, "")
	rng := rand.New(rand.NewPCG(seed, 42))
	products := map[int32]bool{}
	orderIDs := map[int64]bool{}
	var nextOrder int64
	productRows := func(ids ...int32) string {
		var rows []string
		for _, id := range ids {
			name := fmt.Sprintf(`"p%d-%d"`, id, rng.IntN(1000))
			if rng.IntN(10) == 0 {
				name = "null"
			}
			rows = append(rows, fmt.Sprintf(`{"id": %d, "name": %s}`, id, name))
		}
		return "[" + strings.Join(rows, ",") + "]"
	}
	orderRows := func(ids ...int64) string {
		var rows []string
		for _, id := range ids {
			pid, count, price := fmt.Sprint(rng.IntN(8)), fmt.Sprint(rng.IntN(20)-3), fmt.Sprintf(`"%d.%02d"`, rng.IntN(100), rng.IntN(100))
			if rng.IntN(12) == 0 {
				pid = "null"
			}
			if rng.IntN(10) == 0 {
				count = "null"
			}
			if rng.IntN(8) == 0 {
				price = "null"
			}
			rows = append(rows, fmt.Sprintf(`{"id": %d, "product_id": %s, "count": %s, "price": %s}`, id, pid, count, price))
		}
		return "[" + strings.Join(rows, ",") + "]"
	}
	keys := func(ids []int64) string {
		var rows []string
		for _, id := range ids {
			rows = append(rows, fmt.Sprintf(`{"id": %d}`, id))
		}
		return "[" + strings.Join(rows, ",") + "]"
	}
	pick := func(n int) []int64 {
		var all []int64
		for id := range orderIDs {
			all = append(all, id)
		}
		slices.Sort(all)
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		return all[:min(n, len(all))]
	}
	newOrders := func(n int) []int64 {
		var ids []int64
		for range n {
			nextOrder++
			ids = append(ids, nextOrder)
			orderIDs[nextOrder] = true
		}
		return ids
	}
	write(t, db, func(tx *duckdb.Tx) error {
		var pids []int32
		for id := int32(0); id < 6; id++ {
			pids = append(pids, id)
			products[id] = true
		}
		if _, err := tx.Replace("products", rowsOf(t, mem, ivmProducts, productRows(pids...))); err != nil {
			return err
		}
		_, err := tx.Replace("orders", rowsOf(t, mem, ivmOrders, orderRows(newOrders(20)...)))
		return err
	})

	var m engine.Maintained
	var prev []string
	write(t, db, func(tx *duckdb.Tx) error {
		var res *engine.Result
		var err error
		m, res, err = db.Maintain(tx, query)
		if err != nil {
			return err
		}
		prev = rowStrings(res.Records)
		checkSchema(t, db, query, res.Schema)
		res.Release()
		return nil
	})
	defer m.Close(ctx)
	if !strings.HasPrefix(m.Mode(), mode) {
		t.Fatalf("mode %q, want it to start with %q", m.Mode(), mode)
	}
	want := fromScratch(t, db, query)
	if !sameRows(prev, want) {
		t.Fatalf("seed %d: first result\n%v\nwant\n%v", seed, prev, want)
	}
	for step := 0; step < 30; step++ {
		if step%7 == 3 {
			// A transaction that rolls back after Update changes nothing.
			tx, err := db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.ApplyChanges("orders", engine.Changes{Insert: rowsOf(t, mem, ivmOrders, orderRows(1_000_000+int64(step)))}); err != nil {
				t.Fatal(err)
			}
			d, err := m.Update(tx)
			if err != nil {
				t.Fatal(err)
			}
			d.Release()
			tx.Rollback()
			m.Committed(false)
		}
		var did []string
		var diff engine.Diff
		resync := false
		write(t, db, func(tx *duckdb.Tx) error {
			ops := 1 + rng.IntN(3)
			if seed == 3 {
				ops = 5 + rng.IntN(11)
			}
			for op := 0; op < ops; op++ {
				var c engine.Changes
				table := "orders"
				switch r := rng.IntN(20); {
				case r < 8:
					did = append(did, "insert")
					c.Insert = rowsOf(t, mem, ivmOrders, orderRows(newOrders(1+rng.IntN(4))...))
				case r < 12:
					ids := pick(1 + rng.IntN(3))
					for _, id := range ids {
						delete(orderIDs, id)
					}
					did = append(did, "delete")
					c.Delete = rowsOf(t, mem, ivmKey, keys(ids))
				case r < 17:
					ids := pick(1 + rng.IntN(3))
					did = append(did, "update")
					c.Delete = rowsOf(t, mem, ivmKey, keys(ids))
					c.Insert = rowsOf(t, mem, ivmOrders, orderRows(ids...))
				case r < 19:
					table = "products"
					id := int32(rng.IntN(9))
					did = append(did, "product")
					c.Delete = rowsOf(t, mem, ivmPKey, fmt.Sprintf(`[{"id": %d}]`, id))
					if rng.IntN(3) > 0 {
						c.Insert = rowsOf(t, mem, ivmProducts, productRows(id))
					}
				default:
					did = append(did, "truncate")
					c.Truncate = true
					clear(orderIDs)
					c.Insert = rowsOf(t, mem, ivmOrders, orderRows(newOrders(5)...))
				}
				if err := tx.ApplyChanges(table, c); err != nil {
					return err
				}
			}
			var err error
			diff, err = m.Update(tx)
			if errors.Is(err, engine.ErrResync) {
				resync = true
				return nil
			}
			return err
		})
		m.Committed(true)
		if resync { // a subscriber takes a new snapshot
			rows, err := m.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			prev = rowStrings(rows.Records)
			rows.Release()
			if want := fromScratch(t, db, query); !sameRows(prev, want) {
				t.Fatalf("seed %d step %d (%v): new snapshot\n%v\nwant\n%v", seed, step, did, prev, want)
			}
			continue
		}
		if !diff.Empty() {
			checkSchema(t, db, query, diff.Schema)
		}
		got := applyDiff(t, prev, diff)
		diff.Release()
		want := fromScratch(t, db, query)
		if !sameRows(got, want) {
			t.Fatalf("seed %d step %d (%v): result with the diff applied\n%v\nwant\n%v", seed, step, did, got, want)
		}
		rows, err := m.Rows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kept := rowStrings(rows.Records); !sameRows(kept, want) {
			t.Fatalf("seed %d step %d (%v): maintained rows\n%v\nwant\n%v", seed, step, did, kept, want)
		}
		rows.Release()
		prev = got
	}
}

// sameRows compares two sorted multisets of rendered rows; cells that are
// floating point numbers may differ in their last digits (AVG of a DECIMAL is
// a DOUBLE, rounded once more when kept as a sum and a count).
func sameRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ca, cb := strings.Split(a[i], "|"), strings.Split(b[i], "|")
		if len(ca) != len(cb) {
			return false
		}
		for j := range ca {
			if ca[j] == cb[j] {
				continue
			}
			x, err1 := strconv.ParseFloat(ca[j], 64)
			y, err2 := strconv.ParseFloat(cb[j], 64)
			if err1 != nil || err2 != nil || math.Abs(x-y) > 1e-12*math.Max(math.Abs(x), math.Abs(y)) {
				return false
			}
		}
	}
	return true
}

func fromScratch(t *testing.T, db *duckdb.DB, query string) []string {
	t.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: query})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer res.Release()
	return rowStrings(res.Records)
}

// checkSchema fails unless the maintained result has the query's own schema.
func checkSchema(t *testing.T, db *duckdb.DB, query string, got *arrow.Schema) {
	t.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: query})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if len(got.Fields()) != len(res.Schema.Fields()) {
		t.Fatalf("maintained schema %v, query's %v", got, res.Schema)
	}
	for i, f := range res.Schema.Fields() {
		if g := got.Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			t.Fatalf("maintained column %d is %s %s, the query's %s %s", i, g.Name, g.Type, f.Name, f.Type)
		}
	}
}

// rowStrings renders rows as sorted strings: a multiset.
func rowStrings(recs []arrow.RecordBatch) []string {
	var out []string
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			var cells []string
			for _, col := range rec.Columns() {
				cells = append(cells, strings.Clone(col.ValueStr(i)))
			}
			out = append(out, strings.Join(cells, "|"))
		}
	}
	sort.Strings(out)
	return out
}

// applyDiff removes one row per deleted row (failing when it is absent) and
// adds the inserted ones.
func applyDiff(t *testing.T, rows []string, d engine.Diff) []string {
	t.Helper()
	out := slices.Clone(rows)
	for _, del := range rowStrings(d.Delete) {
		i := slices.Index(out, del)
		if i < 0 {
			t.Fatalf("the diff deletes %q, which the result does not hold: %v", del, rows)
		}
		out = slices.Delete(out, i, i+1)
	}
	out = append(out, rowStrings(d.Insert)...)
	sort.Strings(out)
	return out
}

// BenchmarkMaintainedRanking is one order inserted (or one updated) and the
// recipe's ranking brought up to date, in one transaction, over tables of
// different sizes.
func BenchmarkMaintainedRanking(b *testing.B) {
	for _, size := range []int{10_000, 1_000_000} {
		for _, c := range []struct {
			maintained, update bool
		}{{false, false}, {true, false}, {true, true}} {
			maintained := c.maintained
			b.Run(fmt.Sprintf("orders=%d/maintained=%v/update=%v", size, c.maintained, c.update), func(b *testing.B) {
				ctx := context.Background()
				mem := memory.NewGoAllocator()
				db := MustOpen(b, "")
				write(b, db, func(tx *duckdb.Tx) error {
					if _, err := tx.Replace("products", rowsOf(b, mem, ivmProducts, `[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]`)); err != nil {
						return err
					}
					if _, err := tx.Replace("orders", rowsOf(b, mem, ivmOrders, `[{"id":0,"product_id":1,"count":1,"price":"1.00"}]`)); err != nil {
						return err
					}
					return nil
				})
				if _, err := db.Query(ctx, engine.StoreQuery{SQL: "SELECT 1"}); err != nil {
					b.Fatal(err)
				}
				write(b, db, func(tx *duckdb.Tx) error {
					_, err := tx.Materialize("orders", fmt.Sprintf(`SELECT i::BIGINT AS id, (i %% 3 + 1)::INTEGER AS product_id, 1::INTEGER AS count, 1.00::DECIMAL(10,2) AS price FROM range(%d) t(i)`, size))
					return err
				})
				var m engine.Maintained
				if maintained {
					write(b, db, func(tx *duckdb.Tx) error {
						var res *engine.Result
						var err error
						m, res, err = db.Maintain(tx, runtimetest.RankingsSQL)
						if err == nil {
							res.Release()
						}
						return err
					})
					defer m.Close(ctx)
				}
				var before, after syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					id := size + i
					var del array.RecordReader
					if c.update {
						id = (i * 7919) % size
						del = rowsOf(b, mem, ivmKey, fmt.Sprintf(`[{"id":%d}]`, id))
					}
					write(b, db, func(tx *duckdb.Tx) error {
						err := tx.ApplyChanges("orders", engine.Changes{Delete: del, Insert: rowsOf(b, mem, ivmOrders, fmt.Sprintf(`[{"id":%d,"product_id":2,"count":3,"price":"1.00"}]`, id))})
						if err != nil || m == nil {
							return err
						}
						d, err := m.Update(tx)
						d.Release()
						return err
					})
					if m != nil {
						m.Committed(true)
					}
				}
				b.StopTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
			})
		}
	}
}
