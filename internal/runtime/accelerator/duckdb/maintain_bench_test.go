//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// recipeOrders are the columns of the recipe's orders.
var recipeOrders = fields(
	arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	arrow.Field{Name: "product_id", Type: arrow.PrimitiveTypes.Int32},
	arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int32},
	arrow.Field{Name: "created_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}})

// BenchmarkMaintainedOrders is runtime 1's store transaction for new orders
// of the recipe: batch orders inserted into a table of 100,000, the watermark
// set, and the recipe's view maintained, one transaction per batch. It
// reports the process's CPU per order and per transaction.
func BenchmarkMaintainedOrders(b *testing.B) {
	for _, batch := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("orders=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			mem := memory.NewGoAllocator()
			db := MustOpen(b, "")
			write(b, db, func(tx *duckdb.Tx) error {
				if _, err := tx.Replace("products", rowsOf(b, mem, ivmProducts, `[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]`)); err != nil {
					return err
				}
				_, err := tx.Materialize("orders", `SELECT i::BIGINT AS id, (i % 3 + 1)::INTEGER AS product_id, 1::INTEGER AS count, now() AS created_at FROM range(100000) t(i)`)
				return err
			})
			var m engine.Maintained
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
			next := int64(1_000_000)
			cpu, wall := cpuTime(), time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				json := "["
				for j := 0; j < batch; j++ {
					if j > 0 {
						json += ","
					}
					next++
					json += fmt.Sprintf(`{"id": %d, "product_id": %d, "count": 1, "created_at": "2026-12-04T12:00:00Z"}`, next, next%3+1)
				}
				rows := rowsOf(b, mem, recipeOrders, json+"]")
				write(b, db, func(tx *duckdb.Tx) error {
					if err := tx.ApplyChanges("orders", engine.Changes{Insert: rows}); err != nil {
						return err
					}
					if err := tx.SetWatermark(position.LSN(next), "orders", "products"); err != nil {
						return err
					}
					d, err := m.Update(tx)
					d.Release()
					return err
				})
				m.Committed(true)
				rows.Release()
			}
			b.StopTimer()
			used := cpuTime() - cpu
			b.ReportMetric(float64(used.Microseconds())/float64(b.N*batch), "cpu-us/order")
			b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-us/tx")
			b.ReportMetric(float64(time.Since(wall).Microseconds())/float64(b.N), "wall-us/tx")
		})
	}
}
