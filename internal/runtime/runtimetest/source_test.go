//go:build duckdb_arrow

package runtimetest_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

var eventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "ts", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String},
}, nil)

// scan runs one scan and returns its position and row count.
func scan(ctx context.Context, s *runtimetest.Source, req engine.ScanRequest) (position.LSN, int64, error) {
	var pos position.LSN
	var n int64
	err := s.Scan(ctx, req, func(snap engine.Snapshot) error {
		pos = snap.Position
		for snap.Reader.Next() {
			n += snap.Reader.RecordBatch().NumRows()
		}
		return snap.Reader.Err()
	})
	return pos, n, err
}

func TestSourceServesFailsAndHolds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx := context.Background()
	s := runtimetest.NewSource(t, mem, eventsSchema)
	s.Set(t, 100, []any{100, "a"}, []any{200, "b"}, []any{300, "c"})

	if pos, n, err := scan(ctx, s, engine.ScanRequest{}); err != nil || pos != 100 || n != 3 {
		t.Fatalf("scan = %s, %d rows, %v; want 0/64, 3 rows", pos, n, err)
	}
	if _, n, err := scan(ctx, s, engine.ScanRequest{Since: &engine.Bound{Column: "ts", Value: int64(200)}}); err != nil || n != 2 {
		t.Fatalf("scan since 200 = %d rows, %v; want 2 (the bound included)", n, err)
	}

	refused := errors.New("connection refused")
	s.FailNext(2, refused)
	for i := 0; i < 2; i++ {
		if _, _, err := scan(ctx, s, engine.ScanRequest{}); !errors.Is(err, refused) {
			t.Fatalf("scan %d after FailNext(2) = %v, want %v", i+1, err, refused)
		}
	}
	if _, _, err := scan(ctx, s, engine.ScanRequest{}); err != nil {
		t.Fatalf("third scan after FailNext(2): %v", err)
	}

	release := s.BlockNext(t, 1)
	done := make(chan int64)
	go func() {
		_, n, _ := scan(ctx, s, engine.ScanRequest{})
		done <- n
	}()
	for s.Blocked() != 1 {
		select {
		case n := <-done:
			t.Fatalf("held scan returned %d rows before release", n)
		default:
			runtime.Gosched()
		}
	}
	s.Set(t, 200, []any{400, "d"}) // a held scan serves what is set when released
	release()
	if got := <-done; got != 1 {
		t.Fatalf("held scan served %d rows, want the 1 set before its release", got)
	}

	cancelled, cancel := context.WithCancel(ctx)
	s.BlockNext(t, 1)
	cancel()
	if _, _, err := scan(cancelled, s, engine.ScanRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("held scan with its context cancelled = %v, want context.Canceled", err)
	}
	if got, want := s.Scans(), 7; got != want {
		t.Fatalf("Scans() = %d, want %d", got, want)
	}
}
