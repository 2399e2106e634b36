//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

var netSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "body", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// netRow is one row of netSchema; nil fields are NULL.
type netRow struct {
	id   *int64
	body *string
	x    *float64
}

func (r netRow) String() string {
	s := func(p any) string {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *string:
			if v != nil {
				return *v
			}
		case *float64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "NULL"
	}
	return s(r.id) + ":" + s(r.body) + ":" + s(r.x)
}

// randomRow draws from a small domain, so that batches repeat rows, with
// NULLs and both zeros.
func randomRow(rng *rand.Rand) netRow {
	var r netRow
	if n := rng.IntN(3); n > 0 {
		id := int64(n)
		r.id = &id
	}
	if rng.IntN(3) > 0 {
		b := []string{"a", "b"}[rng.IntN(2)]
		r.body = &b
	}
	if rng.IntN(3) > 0 {
		x := []float64{0, math.Copysign(0, -1), 1.5}[rng.IntN(3)]
		r.x = &x
	}
	return r
}

func netBatch(mem memory.Allocator, rows []netRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, netSchema)
	defer b.Release()
	for _, r := range rows {
		if r.id == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(*r.id)
		}
		if r.body == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.body)
		}
		if r.x == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(*r.x)
		}
	}
	return b.NewRecordBatch()
}

func reader(tb testing.TB, recs []arrow.RecordBatch) array.RecordReader {
	tb.Helper()
	if len(recs) == 0 {
		return nil
	}
	rd, err := array.NewRecordReader(netSchema, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return rd
}

func applyDiff(tb testing.TB, tx engine.StoreTx, d engine.Diff) error {
	del, ins := reader(tb, d.Delete), reader(tb, d.Insert)
	if del != nil {
		defer del.Release()
	}
	if ins != nil {
		defer ins.Release()
	}
	return tx.ApplyDiff("t", del, ins)
}

// netTable returns t's rows, sorted, duplicates kept ("-0" reads as "0").
func netTable(tb testing.TB, db *duckdb.DB) string {
	tb.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: `SELECT coalesce(id::VARCHAR, 'NULL') || ':' || coalesce(body, 'NULL') || ':' || coalesce((x + 0)::VARCHAR, 'NULL') AS r FROM t`})
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Release()
	var rows []string
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			rows = append(rows, strings.Clone(rec.Column(0).ValueStr(i)))
		}
	}
	sort.Strings(rows)
	return strings.Join(rows, " ")
}

// TestNetDiffsMatchesChangesOneByOne: a batch of changes applied as one net
// diff leaves the same rows as the changes applied one after the other, and
// fails exactly when they fail (a retraction without an equal local row),
// over random batches with duplicates, NULLs and rows inserted and retracted
// within the batch.
func TestNetDiffsMatchesChangesOneByOne(t *testing.T) {
	if !flightsqlsrc.Nettable(netSchema) {
		t.Fatal("the test's schema is not nettable")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx := context.Background()
	open := func() *duckdb.DB {
		db := duckdb.New("")
		if err := db.Open(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	oneByOne, netted := open(), open()
	var failed, passed int
	for seed := range uint64(120) {
		rng := rand.New(rand.NewPCG(seed, 19))
		var start, held []netRow
		for range rng.IntN(6) {
			start = append(start, randomRow(rng))
		}
		held = append(held, start...)
		var diffs []engine.Diff
		for range 1 + rng.IntN(6) {
			var del, ins []netRow
			for range rng.IntN(4) {
				if len(held) > 0 && rng.IntN(12) > 0 { // mostly rows that are held
					i := rng.IntN(len(held))
					del = append(del, held[i])
					held = append(held[:i], held[i+1:]...)
				} else {
					del = append(del, randomRow(rng))
				}
			}
			for range rng.IntN(4) {
				r := randomRow(rng)
				ins = append(ins, r)
				held = append(held, r)
			}
			d := engine.Diff{Schema: netSchema}
			if len(del) > 0 {
				d.Delete = []arrow.RecordBatch{netBatch(mem, del)}
			}
			if len(ins) > 0 {
				d.Insert = []arrow.RecordBatch{netBatch(mem, ins)}
			}
			diffs = append(diffs, d)
		}
		for _, db := range []*duckdb.DB{oneByOne, netted} {
			rec := netBatch(mem, start)
			rd := reader(t, []arrow.RecordBatch{rec})
			err := db.Update(ctx, func(tx engine.StoreTx) error { _, err := tx.Replace("t", rd); return err })
			rd.Release()
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		errOne := oneByOne.Update(ctx, func(tx engine.StoreTx) error {
			for _, d := range diffs {
				if err := applyDiff(t, tx, d); err != nil {
					return err
				}
			}
			return nil
		})
		net := flightsqlsrc.NetDiffs(netSchema, diffs)
		errNet := netted.Update(ctx, func(tx engine.StoreTx) error { return applyDiff(t, tx, net) })
		net.Release()
		for _, d := range diffs {
			d.Release()
		}
		if (errOne == nil) != (errNet == nil) {
			t.Fatalf("seed %d: one by one err=%v, netted err=%v; start %v", seed, errOne, errNet, start)
		}
		if errNet != nil {
			if !strings.Contains(errNet.Error(), "subscribe again") {
				t.Fatalf("seed %d: err=%v, want one saying to subscribe again", seed, errNet)
			}
			failed++
		} else {
			passed++
		}
		if a, b := netTable(t, oneByOne), netTable(t, netted); a != b {
			t.Fatalf("seed %d: one by one=%q, netted=%q; start %v", seed, a, b, start)
		}
	}
	if failed == 0 || passed == 0 {
		t.Fatalf("%d batches failed and %d passed: the test covers both", failed, passed)
	}
	t.Logf("%d batches failed, %d passed", failed, passed)
}
