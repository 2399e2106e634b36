//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// differentialShapes are maintained in TestMaintainedDifferential. Their
// orders are total (ties broken by unique columns), so that the first rows
// are the same whichever way they are computed.
var differentialShapes = []struct{ name, sql string }{
	{"recipe ranking", runtimetest.RankingsSQL},
	{"aggregate ordered and limited", `SELECT product_id, count(*) AS n, sum(count) AS total, min(count) AS lo, max(price) AS hi
		FROM orders GROUP BY product_id ORDER BY total DESC NULLS LAST, product_id LIMIT 7`},
	{"expressions read in SQL", `SELECT p.name, o.count % 3 AS bucket, sum(o.count * 2) AS twice, count(o.price) AS priced
		FROM orders o JOIN products p ON o.product_id = p.id WHERE o.count > 2 GROUP BY p.name, o.count % 3`},
	{"two aggregates left-joined", `SELECT p.id, p.name, s.total, m.top FROM products p
		LEFT JOIN (SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id) s ON s.product_id = p.id
		LEFT JOIN (SELECT product_id, max(price) AS top FROM orders GROUP BY product_id) m ON m.product_id = p.id
		ORDER BY s.total NULLS FIRST, p.id LIMIT 11 OFFSET 2`},
	{"the default order of NULLs", `SELECT p.id, s.total FROM products p
		LEFT JOIN (SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id) s ON s.product_id = p.id
		ORDER BY s.total DESC, p.id LIMIT 9`},
	{"NULLs ascending by default", `SELECT product_id, max(price) AS top FROM orders GROUP BY product_id ORDER BY top, product_id LIMIT 6`},
}

// TestMaintainedDifferential applies 100,000 random changes (10,000 with
// -short or -race; make test runs it once more without -race, whole) to the
// tables of each shape, in store transactions of 1 to 40
// changes (inserts, deletes, updates of orders; products added, renamed and
// removed; now and then a truncation or a transaction rolled back after the
// maintained query applied it), and after every transaction checks the
// result with the reported diff applied against the query evaluated by
// DuckDB from scratch. Results with a LIMIT keep only 3 rows past it, so that
// rows leaving the first ones often send them back to the whole result.
func TestMaintainedDifferential(t *testing.T) {
	total := 100_000
	if testing.Short() || raceDetector {
		total = 10_000
	}
	for i, shape := range differentialShapes {
		t.Run(shape.name, func(t *testing.T) {
			d := newDifferential(t, uint64(i+1))
			d.run(t, shape.sql, total/len(differentialShapes))
		})
	}
}

// differential holds the tables' rows as the test wrote them.
type differential struct {
	db       *duckdb.DB
	mem      memory.Allocator
	rng      *rand.Rand
	products map[int32]int // id -> version of its name
	orders   map[int64]bool
	next     int64
}

func newDifferential(t *testing.T, seed uint64) *differential {
	d := &differential{db: MustOpen(t, ""), mem: memory.NewGoAllocator(), rng: rand.New(rand.NewPCG(seed, 7)),
		products: map[int32]int{}, orders: map[int64]bool{}}
	d.db.SetLimitBuffer(3)
	write(t, d.db, func(tx *duckdb.Tx) error {
		var ids []int32
		for id := int32(1); id <= 150; id++ {
			ids = append(ids, id)
			d.products[id] = 0
		}
		if _, err := tx.Replace("products", d.productRows(ids...)); err != nil {
			return err
		}
		_, err := tx.Replace("orders", d.orderRows(d.newOrders(500)...))
		return err
	})
	return d
}

func (d *differential) productRows(ids ...int32) array.RecordReader {
	b := array.NewRecordBuilder(d.mem, ivmProducts)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int32Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%03d-%d", id, d.products[id]))
	}
	return reader(b)
}

func (d *differential) orderRows(ids ...int64) array.RecordReader {
	b := array.NewRecordBuilder(d.mem, ivmOrders)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		if d.rng.IntN(40) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(1 + d.rng.IntN(160))) // some products do not exist
		}
		if d.rng.IntN(30) == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append(int32(1 + d.rng.IntN(50)))
		}
		if d.rng.IntN(20) == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(d.rng.IntN(100_000))))
		}
	}
	return reader(b)
}

func (d *differential) keys(ids []int64) array.RecordReader {
	b := array.NewRecordBuilder(d.mem, ivmKey)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
	}
	return reader(b)
}

func reader(b *array.RecordBuilder) array.RecordReader {
	rec := b.NewRecordBatch()
	defer rec.Release()
	rd, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rd
}

func (d *differential) newOrders(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		d.next++
		ids[i] = d.next
		d.orders[d.next] = true
	}
	return ids
}

// pick returns n orders that exist.
func (d *differential) pick(n int) []int64 {
	var out []int64
	for id := range d.orders { // map order: random enough, seeded or not
		if len(out) == n {
			break
		}
		out = append(out, id)
	}
	return out
}

// change writes one random change; it returns how many rows it touched.
func (d *differential) change(tx *duckdb.Tx) (int, error) {
	release := func(rds ...array.RecordReader) {
		for _, rd := range rds {
			if rd != nil {
				rd.Release()
			}
		}
	}
	switch r := d.rng.IntN(1000); {
	case r < 600:
		ids := d.newOrders(1 + d.rng.IntN(3))
		rd := d.orderRows(ids...)
		defer release(rd)
		return len(ids), tx.ApplyChanges("orders", engine.Changes{Insert: rd})
	case r < 760:
		ids := d.pick(1 + d.rng.IntN(2))
		for _, id := range ids {
			delete(d.orders, id)
		}
		rd := d.keys(ids)
		defer release(rd)
		return len(ids), tx.ApplyChanges("orders", engine.Changes{Delete: rd})
	case r < 960:
		ids := d.pick(1 + d.rng.IntN(2))
		del, ins := d.keys(ids), d.orderRows(ids...)
		defer release(del, ins)
		return 2 * len(ids), tx.ApplyChanges("orders", engine.Changes{Delete: del, Insert: ins})
	case r < 999:
		id := int32(1 + d.rng.IntN(160))
		var ins array.RecordReader
		if _, ok := d.products[id]; ok && d.rng.IntN(3) == 0 {
			delete(d.products, id)
		} else {
			d.products[id]++
			ins = d.productRows(id)
		}
		del := d.productKeys(id)
		defer release(del, ins)
		return 2, tx.ApplyChanges("products", engine.Changes{Delete: del, Insert: ins})
	default:
		clear(d.orders)
		rd := d.orderRows(d.newOrders(300)...)
		defer release(rd)
		return 300, tx.ApplyChanges("orders", engine.Changes{Truncate: true, Insert: rd})
	}
}

func (d *differential) productKeys(id int32) array.RecordReader {
	b := array.NewRecordBuilder(d.mem, ivmPKey)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).Append(id)
	return reader(b)
}

func (d *differential) run(t *testing.T, query string, changes int) {
	ctx := context.Background()
	var m engine.Maintained
	var prev []string
	write(t, d.db, func(tx *duckdb.Tx) error {
		var res *engine.Result
		var err error
		if m, res, err = d.db.Maintain(tx, query); err != nil {
			return err
		}
		prev = rowStrings(res.Records)
		res.Release()
		return nil
	})
	defer m.Close(ctx)
	if want := fromScratch(t, d.db, query); !sameRows(prev, want) {
		t.Fatalf("first result\n%v\nwant\n%v", prev, want)
	}
	for done, batch := 0, 0; done < changes; batch++ {
		if d.rng.IntN(200) == 0 {
			d.rolledBack(t, m)
		}
		var diff engine.Diff
		resync := false
		write(t, d.db, func(tx *duckdb.Tx) error {
			for n := 1 + d.rng.IntN(40); n > 0; n-- {
				k, err := d.change(tx)
				if err != nil {
					return err
				}
				done += k
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
		want := fromScratch(t, d.db, query)
		if resync {
			rows, err := m.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			prev = rowStrings(rows.Records)
			rows.Release()
		} else {
			prev = applyDiff(t, prev, diff)
			diff.Release()
		}
		if !sameRows(prev, want) {
			t.Fatalf("batch %d (%d changes so far): result\n%v\nwant\n%v", batch, done, prev, want)
		}
	}
}

// rolledBack applies a change to the maintained query in a transaction that
// then rolls back, as a failed store transaction does.
func (d *differential) rolledBack(t *testing.T, m engine.Maintained) {
	tx, err := d.db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rd := d.orderRows(1_000_000_000 + d.next)
	defer rd.Release()
	if err := tx.ApplyChanges("orders", engine.Changes{Insert: rd}); err != nil {
		t.Fatal(err)
	}
	diff, err := m.Update(tx)
	if err != nil && !errors.Is(err, engine.ErrResync) {
		t.Fatal(err)
	}
	diff.Release()
	tx.Rollback()
	m.Committed(false)
}
