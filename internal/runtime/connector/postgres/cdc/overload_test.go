//go:build duckdb_arrow

package cdc_test

import (
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
)

// Past the rate a runtime applies, the backlog waits in Postgres's slot, not in
// the runtime's heap: writers outpace a feed held to small, spaced store
// transactions; meanwhile the lag shows in the metrics, the slot's confirmed
// position falls behind the server's, and the heap stays within a small bound;
// once the writers stop, the runtime catches up and equals Postgres.
func TestOverloadBacklogStaysInTheSlot(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	r := startRuntime(t, pod(dsn, "memory"), "", func(f *cdc.Feed) {
		f.MaxBatchChanges = 50                  // at most 50 changes per store transaction,
		f.ApplyShare = 0.01                     // and a long pause after each,
		f.MaxApplyWait = 100 * time.Millisecond // pacing it while it keeps up
		f.HeartbeatInterval = 100 * time.Millisecond
	})
	r.wait(t, currentLSN(t, dsn))
	goruntime.GC()
	var base goruntime.MemStats
	goruntime.ReadMemStats(&base)

	var (
		mu                sync.Mutex
		peakHeap          uint64
		maxLag, maxBehind float64
		stopSampling      = make(chan struct{})
		sampled           sync.WaitGroup
	)
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			var ms goruntime.MemStats
			goruntime.ReadMemStats(&ms)
			lag := gauge(t, r.reg, "cdc_lag_bytes", "dataset", "orders")
			mu.Lock()
			peakHeap = max(peakHeap, ms.HeapInuse)
			maxLag = max(maxLag, lag)
			mu.Unlock()
		}
	}()

	// Random changes from two writers, and a burst of 60,000 one-row
	// transactions (tens of megabytes if the runtime held them) that Postgres
	// commits far faster than the feed may apply.
	w := startWriters(t, dsn, 2)
	mustExec(t, dsn, `DO $$ BEGIN PERFORM set_config('synchronous_commit', 'off', false); FOR i IN 1..60000 LOOP
		INSERT INTO orders (product_id, count, price) VALUES (1 + i % 3, 1 + i % 7, 1.5); COMMIT;
	END LOOP; END $$`)
	for range 3 {
		cur := currentLSN(t, dsn)
		if confirmed := slotOf(t, dsn, r.cfg.Slot).confirmed; confirmed < cur {
			mu.Lock()
			maxBehind = max(maxBehind, float64(cur-confirmed))
			mu.Unlock()
		}
		w.waitOps(t, 100)
	}
	end := w.stop(t, dsn)
	r.wait(t, end)
	close(stopSampling)
	sampled.Wait()

	mustMatchRecipe(t, r, dsn)
	if got := resnapshots(t, r.reg); len(got) != 0 {
		t.Errorf("resnapshots=%v, want none", got)
	}
	const backlog = 64 << 10 // WAL bytes: some hundreds of changes
	if maxLag < backlog {
		t.Errorf("largest cdc_lag_bytes seen=%.0f, want at least %d: the backlog did not show", maxLag, backlog)
	}
	if maxBehind < backlog {
		t.Errorf("the slot's confirmed position was at most %.0f bytes behind the server, want at least %d: the backlog did not wait in the slot", maxBehind, backlog)
	}
	// The burst is over 10 MB of WAL; the runtime holds at most a batch and a
	// bounded queue of decoded messages at once.
	const heapBound = 16 << 20
	if grew := int64(peakHeap) - int64(base.HeapInuse); grew > heapBound {
		t.Errorf("heap grew by %d bytes under the backlog, want at most %d", grew, heapBound)
	}
	t.Logf("largest lag %.0f bytes, slot behind by up to %.0f bytes, heap %d -> peak %d bytes; caught up at %s",
		maxLag, maxBehind, base.HeapInuse, peakHeap, position.LSN(end))
}
