//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "product_id", Type: arrow.PrimitiveTypes.Int32},
	{Name: "count", Type: arrow.PrimitiveTypes.Int32},
	{Name: "created_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

type order struct {
	id        int64
	product   int32
	count     int32
	createdAt time.Time
}

// MustOpen opens an in-memory DB (or a file DB when path is set) closed at cleanup.
func MustOpen(tb testing.TB, path string) *duckdb.DB {
	tb.Helper()
	db := duckdb.New(path)
	if err := db.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func orders(tb testing.TB, mem memory.Allocator, rows ...order) array.RecordReader {
	tb.Helper()
	b := array.NewRecordBuilder(mem, ordersSchema)
	defer b.Release()
	for _, o := range rows {
		b.Field(0).(*array.Int64Builder).Append(o.id)
		b.Field(1).(*array.Int32Builder).Append(o.product)
		b.Field(2).(*array.Int32Builder).Append(o.count)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(o.createdAt.UnixMicro()))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rd, err := array.NewRecordReader(ordersSchema, []arrow.RecordBatch{rec})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rd.Release)
	return rd
}

func write(tb testing.TB, db *duckdb.DB, fn func(tx *duckdb.Tx) error) {
	tb.Helper()
	tx, err := db.Begin(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func scalar(tb testing.TB, db *duckdb.DB, sql string) string {
	tb.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql})
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	if res.Rows != 1 {
		tb.Fatalf("%s: %d rows, want 1", sql, res.Rows)
	}
	// Arrow strings alias the record's buffers: copy before releasing.
	return strings.Clone(res.Records[0].Column(0).ValueStr(0))
}

func TestReplaceAndWatermarkCommitTogether(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // runs after the readers are released
	db := MustOpen(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(t, db, func(tx *duckdb.Tx) error {
		n, err := tx.Replace("orders", orders(t, mem, order{1, 1, 5, t0}, order{2, 2, 7, t0}))
		if got, want := n, int64(2); got != want {
			t.Errorf("replace rows=%d, want %d", got, want)
		}
		if err != nil {
			return err
		}
		return tx.SetWatermark(100, "orders")
	})
	// A rolled back replace leaves both data and watermark as they were.
	tx, err := db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Replace("orders", orders(t, mem, order{9, 1, 1, t0})); err != nil {
		t.Fatal(err)
	}
	if err := tx.SetWatermark(200, "orders"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if got, want := scalar(t, db, "SELECT sum(count) FROM orders"), "12"; got != want {
		t.Fatalf("sum=%s, want %s", got, want)
	}
	wm, err := db.Watermarks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wm["orders"], position.LSN(100); got != want {
		t.Fatalf("watermark=%s, want %s", got, want)
	}
}

func TestAppendOverlapKeepsBoundaryRowsOnce(t *testing.T) {
	db := MustOpen(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := memory.DefaultAllocator
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Append("orders", orders(t, mem, order{1, 1, 1, t0}, order{2, 1, 1, t0.Add(time.Second)}), engine.AppendOptions{})
		return err
	})
	// The source is read again from the boundary: row 2 comes back, row 3 is new
	// with the same timestamp as the boundary, row 4 is later.
	write(t, db, func(tx *duckdb.Tx) error {
		n, err := tx.Append("orders", orders(t, mem,
			order{2, 1, 1, t0.Add(time.Second)}, order{3, 1, 1, t0.Add(time.Second)}, order{4, 1, 1, t0.Add(2 * time.Second)}),
			engine.AppendOptions{Column: "created_at", Since: t0.Add(time.Second)})
		if got, want := n, int64(2); err == nil && got != want {
			t.Errorf("appended=%d, want %d", got, want)
		}
		return err
	})
	if got, want := scalar(t, db, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM orders"), "1,2,3,4"; got != want {
		t.Fatalf("ids=%s, want %s", got, want)
	}
	// With a key, rows already present are skipped.
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Append("orders", orders(t, mem, order{4, 1, 1, t0.Add(2 * time.Second)}, order{5, 1, 1, t0}), engine.AppendOptions{Key: []string{"id"}})
		return err
	})
	if got, want := scalar(t, db, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM orders"), "1,2,3,4,5"; got != want {
		t.Fatalf("ids=%s, want %s", got, want)
	}
}

func TestDeleteThenInsertIsAnUpsert(t *testing.T) {
	db := MustOpen(t, "")
	mem := memory.DefaultAllocator
	t0 := time.Now()
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, mem, order{1, 1, 1, t0}, order{2, 1, 1, t0}, order{3, 1, 1, t0}))
		return err
	})
	keySchema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	kb := array.NewRecordBuilder(mem, keySchema)
	kb.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	krec := kb.NewRecordBatch()
	kb.Release()
	keys, _ := array.NewRecordReader(keySchema, []arrow.RecordBatch{krec})
	krec.Release()
	defer keys.Release()
	write(t, db, func(tx *duckdb.Tx) error {
		if n, err := tx.Delete("orders", keys); err != nil || n != 2 {
			t.Errorf("deleted=%d err=%v, want 2", n, err)
		}
		_, err := tx.Insert("orders", orders(t, mem, order{2, 1, 40, t0}))
		return err
	})
	if got, want := scalar(t, db, "SELECT string_agg(id || ':' || count, ',' ORDER BY id) FROM orders"), "2:40,3:1"; got != want {
		t.Fatalf("rows=%s, want %s", got, want)
	}
}

func TestQueryRefusesEverythingButOneSelect(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 1, time.Now()}))
		return err
	})
	for _, tc := range []struct{ name, sql, want string }{
		{"insert", "INSERT INTO orders VALUES (2, 1, 1, now())", "INSERT"},
		{"update", "UPDATE orders SET count = 3", "UPDATE"},
		{"delete", "DELETE FROM orders", "DELETE"},
		{"create", "CREATE TABLE x (a INT)", "CREATE"},
		{"drop", "DROP TABLE orders", "DROP"},
		{"alter", "ALTER TABLE orders ADD COLUMN x INT", "ALTER"},
		{"attach", "ATTACH '/tmp/x.db' AS x", ""},
		{"copy", "COPY orders TO '/tmp/x.csv'", ""},
		{"pragma", "PRAGMA memory_limit='1GB'", "SET"},
		{"set", "SET threads = 1", "SET"},
		{"install", "INSTALL httpfs", ""},
		{"load", "LOAD httpfs", ""},
		{"call", "CALL checkpoint()", ""},
		{"two statements", "DROP TABLE orders; SELECT 1", ""},
		{"read_csv", "SELECT * FROM read_csv('/etc/passwd')", "read_csv"},
		{"read_text", "SELECT * FROM read_text('/etc/hostname')", "read_text"},
		{"http", "SELECT * FROM read_parquet('http://example.com/x.parquet')", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.Query(context.Background(), engine.StoreQuery{SQL: tc.sql, User: true})
			if err == nil {
				res.Release()
				t.Fatalf("%s: no error, want a refusal", tc.sql)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: error %q does not mention %q", tc.sql, err, tc.want)
			}
		})
	}
	// Nothing was changed by the refused statements.
	if got, want := scalar(t, db, "SELECT count(*) FROM orders"), "1"; got != want {
		t.Fatalf("rows=%s, want %s", got, want)
	}
}

func TestQueryNarrowsHugeintSums(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 5, time.Now()}, order{2, 1, 6, time.Now()}))
		return err
	})
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: "SELECT product_id, sum(count) AS count FROM orders GROUP BY 1"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if got, want := res.Schema.Field(1).Type.ID(), arrow.INT64; got != want {
		t.Fatalf("sum type=%s, want %s", got, want)
	}
	if got, want := res.Records[0].Column(1).(*array.Int64).Value(0), int64(11); got != want {
		t.Fatalf("sum=%d, want %d", got, want)
	}
}

func TestQueryLimitsResultSize(t *testing.T) {
	db := MustOpen(t, "")
	db.MaxResultBytes = 1 << 10
	_, err := db.Query(context.Background(), engine.StoreQuery{SQL: "SELECT range AS n FROM range(100000)"})
	if !errors.Is(err, duckdb.ErrResultTooLarge) {
		t.Fatalf("err=%v, want ErrResultTooLarge", err)
	}
}

func TestQueryTimesOut(t *testing.T) {
	db := MustOpen(t, "")
	db.QueryTimeout = 50 * time.Millisecond
	_, err := db.Query(context.Background(), engine.StoreQuery{SQL: "SELECT count(*) FROM range(100000000000) a"})
	if !errors.Is(err, duckdb.ErrQueryTimeout) {
		t.Fatalf("err=%v, want ErrQueryTimeout", err)
	}
}

func TestFileModeSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accel.duckdb")
	db := duckdb.New(path)
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	write(t, db, func(tx *duckdb.Tx) error {
		if _, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 5, time.Now()})); err != nil {
			return err
		}
		return tx.SetWatermark(42, "orders")
	})
	db.Close()
	db2 := MustOpen(t, path)
	if got, want := scalar(t, db2, "SELECT sum(count) FROM orders"), "5"; got != want {
		t.Fatalf("sum=%s, want %s", got, want)
	}
	wm, _ := db2.Watermarks(context.Background())
	if got, want := wm["orders"], position.LSN(42); got != want {
		t.Fatalf("watermark=%s, want %s", got, want)
	}
}

func TestTempViewsExposeSourceRows(t *testing.T) {
	db := MustOpen(t, "")
	res, err := db.Query(context.Background(), engine.StoreQuery{
		SQL:  "SELECT sum(count) FROM orders",
		Temp: map[string]array.RecordReader{"orders": orders(t, memory.DefaultAllocator, order{1, 1, 3, time.Now()})},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if got, want := res.Records[0].Column(0).ValueStr(0), "3"; got != want {
		t.Fatalf("sum=%s, want %s", got, want)
	}
	tables, err := db.Tables(context.Background(), "with a as (select * from orders) select * from a join products p on true")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tables: %v", tables)
	if !strings.Contains(strings.Join(tables, ","), "orders") || !strings.Contains(strings.Join(tables, ","), "products") {
		t.Fatalf("tables=%v, want orders and products", tables)
	}
}

// A temporary source table shadows an accelerated table of the same name for one
// query (on_zero_results: use_source), and is gone afterwards.
func TestTempShadowsTableForOneQuery(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 3, time.Now()}))
		return err
	})
	res, err := db.Query(context.Background(), engine.StoreQuery{
		SQL:  "SELECT sum(count) FROM orders",
		Temp: map[string]array.RecordReader{"orders": orders(t, memory.DefaultAllocator, order{1, 1, 7, time.Now()})},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Clone(res.Records[0].Column(0).ValueStr(0))
	res.Release()
	if want := "7"; got != want {
		t.Fatalf("sum with the source shadowing=%s, want %s", got, want)
	}
	if got, want := scalar(t, db, "SELECT sum(count) FROM orders"), "3"; got != want {
		t.Fatalf("sum afterwards=%s, want %s", got, want)
	}
}

// A query run again and again, on every read connection, sees every change a
// fresh query sees: inserts, a replaced table, a table with other columns, a
// dropped table (the same error) and a table created again.
func TestRepeatedQueriesSeeEveryChange(t *testing.T) {
	db := MustOpen(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := memory.DefaultAllocator
	const q = "SELECT sum(count) FROM orders"
	// More runs than read connections, so every connection prepares it.
	runs := 2*db.MaxConns + 1
	check := func(want string) {
		t.Helper()
		for range runs {
			if got := scalar(t, db, q); got != want {
				t.Fatalf("%s = %s, want %s", q, got, want)
			}
		}
	}
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, mem, order{1, 1, 5, t0}))
		return err
	})
	check("5")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Insert("orders", orders(t, mem, order{2, 1, 7, t0}))
		return err
	})
	check("12")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, mem, order{3, 2, 1, t0}))
		return err
	})
	check("1")
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.Exec("CREATE OR REPLACE TABLE orders AS SELECT 40 AS count, 'x' AS note UNION ALL SELECT 2, 'y'")
	})
	check("42")

	fresh := func() error {
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: "SELECT sum(count) FROM orders WHERE true"})
		if err == nil {
			res.Release()
		}
		return err
	}
	write(t, db, func(tx *duckdb.Tx) error { return tx.Exec("DROP TABLE orders") })
	want := fresh()
	if want == nil {
		t.Fatal("a query of a dropped table succeeded")
	}
	for range runs {
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: q})
		if err == nil {
			res.Release()
			t.Fatal("a repeated query of a dropped table succeeded")
		}
		if !strings.Contains(err.Error(), "orders") || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("repeated query of a dropped table: %v, want the error a fresh query gets: %v", err, want)
		}
	}
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("orders", orders(t, mem, order{4, 1, 9, t0}))
		return err
	})
	check("9")
}

// A query repeated many times, on every read connection, must see rows inserted
// after it was first run, also where DuckDB plans with table statistics (the
// recipe's ranking groups by product id, and a new product widens its range).
// DuckDB 1.5.6 keeps such plans in prepared statements across inserts and
// answers from the stale statistics (duckdb/duckdb#23704), which is why repeated
// queries are not prepared.
func TestRepeatedRankingSeesNewProducts(t *testing.T) {
	db := MustOpen(t, "")
	const ranking = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
ON orders.product_id = products.id GROUP BY products.id)
select name, count from products left join a on products.id = a.id
order by count desc nulls last, name limit 5`
	names := func() string {
		t.Helper()
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: ranking})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Release()
		var out []string
		for _, rec := range res.Records {
			for i := range int(rec.NumRows()) {
				out = append(out, rec.Column(0).ValueStr(i)+"="+rec.Column(1).ValueStr(i))
			}
		}
		return strings.Join(out, ",")
	}
	write(t, db, func(tx *duckdb.Tx) error {
		if err := tx.Exec("CREATE TABLE products AS SELECT * FROM (VALUES (1::INTEGER, 'a'), (2, 'b'), (3, 'c')) t(id, name)"); err != nil {
			return err
		}
		if err := tx.Exec("SELECT 1"); err != nil {
			return err
		}
		_, err := tx.Replace("orders", orders(t, memory.DefaultAllocator, order{1, 1, 5, time.Now()}, order{2, 2, 7, time.Now()}))
		return err
	})
	for range 3 * db.MaxConns {
		if got, want := names(), "b=7,a=5,c=(null)"; got != want {
			t.Fatalf("ranking %s, want %s", got, want)
		}
	}
	write(t, db, func(tx *duckdb.Tx) error {
		// Plain statements: the Arrow paths of Tx create temporary objects, which
		// would make DuckDB re-plan and hide the hazard.
		if err := tx.Exec("INSERT INTO products VALUES (11, 'new')"); err != nil {
			return err
		}
		return tx.Exec("INSERT INTO orders VALUES (3, 11, 100, now())")
	})
	for i := range 3 * db.MaxConns {
		if got, want := names(), "new=100,b=7,a=5,c=(null)"; got != want {
			t.Fatalf("run %d after the insert: ranking %s, want %s", i, got, want)
		}
	}
}
