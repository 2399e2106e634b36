package orders_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
)

// BenchmarkStore_Create measures one write with its token against a real
// Postgres, one at a time, and reports this process's CPU per write (cpu-us/op:
// user and system time from getrusage; Postgres's own is not in it). "two round
// trips" is the way the store wrote before, for comparison: the insert, then
// pg_current_wal_lsn() once the insert has returned.
func BenchmarkStore_Create(b *testing.B) {
	s, pool := MustStore(b, 2)
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		write func() error
	}{
		{"pipeline", func() error {
			_, _, err := s.Create(ctx, orders.NewOrder{ProductID: 1, Count: 1})
			return err
		}},
		{"two round trips", func() error { return twoRoundTrips(ctx, pool) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			before := cpuTime()
			for b.Loop() {
				if err := bc.write(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

func twoRoundTrips(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var o orders.Order
	if err := conn.QueryRow(ctx, `INSERT INTO orders (product_id, count) VALUES ($1, $2)
RETURNING id, product_id, count, created_at`, 1, 1).Scan(&o.ID, &o.ProductID, &o.Count, &o.CreatedAt); err != nil {
		return err
	}
	var lsn string
	return conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn)
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
