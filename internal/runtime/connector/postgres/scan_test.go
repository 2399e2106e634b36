package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

const ordersDDL = `CREATE TABLE orders (
	id int8 PRIMARY KEY,
	product text,
	qty int4 NOT NULL,
	created timestamptz NOT NULL
)`

// ordersRows inserts orders 1..10; order i has qty i and was created i hours
// after 2024-01-01 00:00 UTC.
const ordersRows = `INSERT INTO orders
SELECT i, 'p' || (i % 3), i, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour'
FROM generate_series(1, 10) i`

func TestScan(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, ordersDDL, ordersRows, `CREATE TABLE empty (id int4, name text)`)
	src := mustSource(t, dsnParams(dsn), "public.orders")

	t.Run("All", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{})
		if got, want := len(got.rows), 10; got != want {
			t.Fatalf("rows=%d, want %d", got, want)
		}
		if got, want := fieldNames(got.schema), []string{"id", "product", "qty", "created"}; !slices.Equal(got, want) {
			t.Fatalf("fields=%v, want %v", got, want)
		}
		// NOT NULL in the table shows as a non-nullable field.
		for _, f := range got.schema.Fields() {
			if got, want := f.Nullable, f.Name == "product"; got != want {
				t.Errorf("field %s nullable=%v, want %v", f.Name, got, want)
			}
		}
	})
	t.Run("Where", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{Where: "qty > 7 OR product = 'p0'"})
		// qty 8, 9, 10, plus 3 and 6 (i % 3 = 0).
		if got, want := len(got.rows), 5; got != want {
			t.Fatalf("rows=%d, want %d", got, want)
		}
	})
	t.Run("SinceTime", func(t *testing.T) {
		since := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
		got := mustScan(t, src, engine.ScanRequest{Since: &engine.Bound{Column: "created", Value: since}})
		if got, want := len(got.rows), 3; got != want { // 8, 9, 10: the bound is inclusive
			t.Fatalf("rows=%d, want %d", got, want)
		}
	})
	t.Run("SinceString", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{Since: &engine.Bound{Column: "created", Value: "2024-01-01 09:00:00+00"}})
		if got, want := len(got.rows), 2; got != want {
			t.Fatalf("rows=%d, want %d", got, want)
		}
	})
	t.Run("SinceInt", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{Since: &engine.Bound{Column: "id", Value: int64(4)}})
		if got, want := len(got.rows), 7; got != want {
			t.Fatalf("rows=%d, want %d", got, want)
		}
	})
	t.Run("Columns", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{Columns: []string{"qty", "id"}, Where: "id = 2"})
		if got, want := fieldNames(got.schema), []string{"qty", "id"}; !slices.Equal(got, want) {
			t.Fatalf("fields=%v, want %v", got, want)
		}
		if got, want := got.rows, [][]string{{"2", "2"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("rows=%v, want %v", got, want)
		}
	})
	t.Run("WhereSinceColumns", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{
			Where:   "product <> 'p1'",
			Since:   &engine.Bound{Column: "id", Value: int64(5)},
			Columns: []string{"id"},
		})
		var ids []string
		for _, r := range got.rows {
			ids = append(ids, r[0])
		}
		slices.Sort(ids)
		if got, want := ids, []string{"5", "6", "8", "9"}; !slices.Equal(got, want) {
			t.Fatalf("ids=%v, want %v", got, want)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		empty := mustSource(t, dsnParams(dsn), "empty")
		got := mustScan(t, empty, engine.ScanRequest{})
		if got, want := fieldNames(got.schema), []string{"id", "name"}; !slices.Equal(got, want) {
			t.Fatalf("fields=%v, want %v", got, want)
		}
		if len(got.rows) != 0 || len(got.batches) != 0 {
			t.Fatalf("rows=%d batches=%d, want none", len(got.rows), len(got.batches))
		}
		if got.pos.IsZero() {
			t.Fatal("position is zero for an empty table")
		}
	})
	t.Run("WhereWithParameter", func(t *testing.T) {
		_, err := scan(context.Background(), src, engine.ScanRequest{Where: "id = $1"})
		if err == nil || !strings.Contains(err.Error(), "query parameter") {
			t.Fatalf("err=%v, want one about the query parameter", err)
		}
	})
	t.Run("SinceWrongType", func(t *testing.T) {
		_, err := scan(context.Background(), src, engine.ScanRequest{Since: &engine.Bound{Column: "id", Value: time.Now()}})
		if err == nil || !strings.Contains(err.Error(), `since bound on column "id"`) {
			t.Fatalf("err=%v, want one naming the since column", err)
		}
	})
	t.Run("UnknownColumn", func(t *testing.T) {
		_, err := scan(context.Background(), src, engine.ScanRequest{Columns: []string{"nope"}})
		if err == nil || !strings.Contains(err.Error(), "refresh_sql") {
			t.Fatalf("err=%v, want one pointing at refresh_sql's select list", err)
		}
	})
}

func TestScanBatches(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TABLE big AS SELECT i AS id, md5(i::text) AS h FROM generate_series(1, 150000) i`)
	src := mustSource(t, dsnParams(dsn), "big")

	got := mustScan(t, src, engine.ScanRequest{})
	if got, want := got.batches, []int{65536, 65536, 18928}; !slices.Equal(got, want) {
		t.Fatalf("batches=%v, want %v", got, want)
	}
	if got, want := got.rows[149999][0], "150000"; got != want {
		t.Fatalf("last id=%s, want %s", got, want)
	}

	// A byte bound ends a batch before the row bound: 36 bytes of values per row
	// (int4 and a 32-character md5).
	src.BatchBytes = 36 * 1000
	got = mustScan(t, src, engine.ScanRequest{Where: "id <= 2500"})
	if got, want := got.batches, []int{1000, 1000, 500}; !slices.Equal(got, want) {
		t.Fatalf("batches=%v, want %v", got, want)
	}
}

func TestScanPosition(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, ordersDDL)
	src := mustSource(t, dsnParams(dsn), "orders")

	// A writer's token: the WAL position read after its commit returned.
	mustExec(t, dsn, `INSERT INTO orders VALUES (1, 'a', 1, now())`)
	token := mustCurrentLSN(t, dsn)

	got := mustScan(t, src, engine.ScanRequest{})
	after := mustCurrentLSN(t, dsn)
	if got.pos.IsZero() {
		t.Fatal("position is zero")
	}
	if got.pos < token {
		t.Fatalf("position %s is before the token %s of a write that had committed", got.pos, token)
	}
	if got.pos > after {
		t.Fatalf("position %s is after pg_current_wal_lsn() %s read after the scan", got.pos, after)
	}
	if got, want := len(got.rows), 1; got != want {
		t.Fatalf("rows=%d, want %d", got, want)
	}
}

func TestScanUnsupportedType(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn,
		`CREATE TABLE places (id int4, loc point, wide numeric(50,2), span interval, grid int4[][])`,
		`INSERT INTO places VALUES (1, point(1, 2), 1.5, '1 day', '{{1,2},{3,4}}')`)
	src := mustSource(t, dsnParams(dsn), "places")

	for _, tc := range []struct {
		column string
		want   []string
	}{
		{"loc", []string{`column "loc"`, "point", "view", "select list"}},
		{"wide", []string{`column "wide"`, "numeric(50,2)", "precision up to 38"}},
		{"span", []string{`column "span"`, "interval"}},
	} {
		_, err := scan(context.Background(), src, engine.ScanRequest{Columns: []string{"id", tc.column}})
		if !errors.Is(err, postgres.ErrUnsupportedType) {
			t.Fatalf("%s: err=%v, want ErrUnsupportedType", tc.column, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err=%q, want it to mention %q", tc.column, err, w)
			}
		}
	}

	// A two-dimensional value in an array column fails when it arrives.
	_, err := scan(context.Background(), src, engine.ScanRequest{Columns: []string{"grid"}})
	if !errors.Is(err, postgres.ErrValue) || !strings.Contains(err.Error(), `column "grid"`) {
		t.Fatalf("grid: err=%v, want ErrValue naming the column", err)
	}

	// Leaving the columns out works, on the same pool.
	got := mustScan(t, src, engine.ScanRequest{Columns: []string{"id"}})
	if got, want := len(got.rows), 1; got != want {
		t.Fatalf("rows=%d, want %d", got, want)
	}
}

func TestScanStopsEarly(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TABLE big AS SELECT i AS id FROM generate_series(1, 200000) i`)
	src := mustSource(t, dsnParams(dsn), "big")

	t.Run("fn returns nil after one batch", func(t *testing.T) {
		err := src.Scan(context.Background(), engine.ScanRequest{}, func(snap engine.Snapshot) error {
			snap.Reader.Next()
			return nil
		})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
	})
	t.Run("fn fails", func(t *testing.T) {
		boom := errors.New("boom")
		err := src.Scan(context.Background(), engine.ScanRequest{}, func(snap engine.Snapshot) error {
			snap.Reader.Next()
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err=%v, want fn's error", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var readerErr error
		err := src.Scan(ctx, engine.ScanRequest{}, func(snap engine.Snapshot) error {
			snap.Reader.Next()
			cancel()
			for snap.Reader.Next() {
			}
			readerErr = snap.Reader.Err()
			return nil // even if fn ignores the reader's error, Scan reports it
		})
		if !errors.Is(readerErr, context.Canceled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("reader err=%v, Scan err=%v, want context.Canceled", readerErr, err)
		}
	})
	t.Run("pool recovers", func(t *testing.T) {
		got := mustScan(t, src, engine.ScanRequest{Where: "id <= 3"})
		if got, want := len(got.rows), 3; got != want {
			t.Fatalf("rows=%d, want %d", got, want)
		}
	})
}
