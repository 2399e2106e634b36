//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

var rankingSchema = arrow.NewSchema([]arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "count", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// rankingRows returns one batch of (name, count) rows.
func rankingRows(mem memory.Allocator, rows ...any) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, rankingSchema)
	defer b.Release()
	for i := 0; i < len(rows); i += 2 {
		b.Field(0).(*array.StringBuilder).Append(rows[i].(string))
		b.Field(1).(*array.Int64Builder).Append(int64(rows[i+1].(int)))
	}
	return b.NewRecordBatch()
}

// cpuTime is the process's user and system CPU time so far (DuckDB's threads
// included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApplyDiffEvents applies what runtime 2 receives for each order of
// the recipe: the ranking's row of one product retracted and inserted again
// with a count one higher, with the watermark, one store transaction per
// event (events=1) or per batch of events, each event its own ApplyDiff or
// (netted) the batch as the one diff the feed's netting makes of it (the
// first count retracted, the last inserted). It reports the CPU per event.
func BenchmarkApplyDiffEvents(b *testing.B) {
	for _, c := range []struct {
		batch  int
		netted bool
	}{{1, false}, {16, false}, {16, true}} {
		batch := c.batch
		b.Run(fmt.Sprintf("events=%d/netted=%v", batch, c.netted), func(b *testing.B) {
			ctx := context.Background()
			mem := memory.NewGoAllocator()
			db := MustOpen(b, "")
			start := rankingRows(mem, "a", 0, "b", 0, "c", 0, "d", 0, "e", 0)
			write(b, db, func(tx *duckdb.Tx) error {
				rd, err := array.NewRecordReader(rankingSchema, []arrow.RecordBatch{start})
				if err != nil {
					return err
				}
				defer rd.Release()
				_, err = tx.Replace("rankings", rd)
				return err
			})
			start.Release()
			count := 0
			cpu := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var diffs []engine.Diff
				if c.netted {
					diffs = []engine.Diff{{Schema: rankingSchema,
						Delete: []arrow.RecordBatch{rankingRows(mem, "a", count)},
						Insert: []arrow.RecordBatch{rankingRows(mem, "a", count+batch)}}}
					count += batch
				}
				for ; len(diffs) < batch && !c.netted; count++ {
					diffs = append(diffs, engine.Diff{Schema: rankingSchema,
						Delete: []arrow.RecordBatch{rankingRows(mem, "a", count)},
						Insert: []arrow.RecordBatch{rankingRows(mem, "a", count+1)}})
				}
				err := db.Update(ctx, func(tx engine.StoreTx) error {
					for _, d := range diffs {
						if err := applyOne(tx, d); err != nil {
							return err
						}
					}
					return tx.SetWatermark(position.LSN(count), "rankings")
				})
				for _, d := range diffs {
					d.Release()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N*batch), "cpu-us/event")
		})
	}
}

func applyOne(tx engine.StoreTx, d engine.Diff) error {
	del, err := array.NewRecordReader(d.Schema, d.Delete)
	if err != nil {
		return err
	}
	defer del.Release()
	ins, err := array.NewRecordReader(d.Schema, d.Insert)
	if err != nil {
		return err
	}
	defer ins.Release()
	return tx.ApplyDiff("rankings", del, ins)
}
