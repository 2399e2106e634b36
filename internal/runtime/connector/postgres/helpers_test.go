package postgres_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// mustExec runs statements, in order, on the database at dsn.
func mustExec(tb testing.TB, dsn string, stmts ...string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			tb.Fatalf("exec %q: %v", s, err)
		}
	}
}

// mustCurrentLSN reads pg_current_wal_lsn() on the database at dsn.
func mustCurrentLSN(tb testing.TB, dsn string) position.LSN {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&s); err != nil {
		tb.Fatalf("read lsn: %v", err)
	}
	lsn, err := position.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// mustConfig parses params, failing the test on error.
func mustConfig(tb testing.TB, params map[string]string) postgres.Config {
	tb.Helper()
	cfg, err := postgres.ParseParams(params)
	if err != nil {
		tb.Fatalf("ParseParams: %v", err)
	}
	return cfg
}

// mustSource opens a Source on table whose Arrow memory must all be released by
// the end of the test.
func mustSource(tb testing.TB, params map[string]string, table string) *postgres.Source {
	tb.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	src := postgres.NewSource(mustConfig(tb, params), table)
	src.Allocator = mem
	if err := src.Open(context.Background()); err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		src.Close()
		mem.AssertSize(tb, 0)
	})
	return src
}

// dsnParams are the params of a dataset pointing at dsn.
func dsnParams(dsn string) map[string]string {
	return map[string]string{postgres.ParamConnectionString: dsn}
}

// scanned is what one scan yielded, copied out of Arrow.
type scanned struct {
	schema  *arrow.Schema
	rows    [][]string // ValueStr of each value, "(null)" for NULL
	batches []int      // rows per batch
	pos     position.LSN
}

func scan(ctx context.Context, src *postgres.Source, req engine.ScanRequest) (scanned, error) {
	var got scanned
	err := src.Scan(ctx, req, func(snap engine.Snapshot) error {
		got.schema, got.pos = snap.Reader.Schema(), snap.Position
		for snap.Reader.Next() {
			rec := snap.Reader.RecordBatch()
			got.batches = append(got.batches, int(rec.NumRows()))
			for i := range int(rec.NumRows()) {
				row := make([]string, rec.NumCols())
				for j, col := range rec.Columns() {
					row[j] = col.ValueStr(i)
				}
				got.rows = append(got.rows, row)
			}
		}
		return snap.Reader.Err()
	})
	return got, err
}

func mustScan(tb testing.TB, src *postgres.Source, req engine.ScanRequest) scanned {
	tb.Helper()
	got, err := scan(context.Background(), src, req)
	if err != nil {
		tb.Fatalf("Scan: %v", err)
	}
	return got
}

func fieldNames(s *arrow.Schema) []string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return names
}
