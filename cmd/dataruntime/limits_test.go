//go:build duckdb_arrow

package main

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

func TestMemoryLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"auto", 0, true},
		{"2GiB", 2 << 30, true},
		{"512MiB", 512 << 20, true},
		{"1MiB", 0, false},
		{"lots", 0, false},
	} {
		var f memoryLimitFlag
		err := f.Set(tc.in)
		if (err == nil) != tc.ok || f.bytes != tc.want {
			t.Errorf("Set(%q)=%d, %v; want %d, ok=%v", tc.in, f.bytes, err, tc.want, tc.ok)
		}
	}
}

// Everything the runtime holds fits in the limit: DuckDB's share, the caches, and
// a full result per query slot.
func TestBudgetFitsTheLimit(t *testing.T) {
	const slots = 4
	for _, limit := range []int64{64 << 20, 2 << 30, 64 << 30} {
		b := newBudget(limit, "test", duckdb.DefaultMaxResultBytes)
		held := b.DuckDB + b.ResultsCache + b.Tickets + b.Prepared + b.PlanCache + b.InspectCache + slots*b.MaxResultBytes
		if held > limit {
			t.Errorf("limit %d: budget holds %d", limit, held)
		}
		if b.GoSoft+b.DuckDB > limit {
			t.Errorf("limit %d: Go soft limit %d and DuckDB %d exceed it", limit, b.GoSoft, b.DuckDB)
		}
	}
}

func TestDetectMemoryLimit(t *testing.T) {
	n, source := detectMemoryLimit()
	if n <= 0 || source == "" {
		t.Fatalf("detected %d from %q", n, source)
	}
	t.Logf("detected %d bytes from %s", n, source)
}
