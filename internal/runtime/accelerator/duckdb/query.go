//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Query runs q under QueryTimeout and MaxResultBytes and returns the whole result.
// HUGEINT columns (what SUM over integers yields in DuckDB) are narrowed to int64,
// as Postgres and upstream Spice return them; a value that does not fit is an error.
func (d *DB) Query(ctx context.Context, q engine.StoreQuery) (*engine.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, d.QueryTimeout)
	defer cancel()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	var res *engine.Result
	err = conn.Raw(func(dc any) error {
		var err error
		res, err = d.query(ctx, dc.(driver.Conn), q)
		return err
	})
	if err != nil {
		return nil, d.queryError(ctx, err)
	}
	return res, nil
}

// queryError turns DuckDB's errors into the engine's: a deadline into
// ErrQueryTimeout, running out of memory into ErrResultTooLarge; catalog
// suggestions that name internals are dropped.
func (d *DB) queryError(ctx context.Context, err error) error {
	var de *duckdb.Error
	switch {
	case errors.Is(err, ErrResultTooLarge), errors.Is(err, ErrReadOnly):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w after %s: make the query cheaper or raise the time-out", ErrQueryTimeout, d.QueryTimeout)
	case errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory:
		return fmt.Errorf("%w: the query needs more memory than the runtime's limit (%s); add a LIMIT, aggregate, or raise --memory-limit", ErrResultTooLarge, formatBytes(d.MemoryLimit))
	}
	return d.scrub(ctx, err)
}

func formatBytes(n int64) string {
	if n <= 0 {
		return "DuckDB's default"
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// InspectedBytes is the size of the cache of inspected query texts, texts
// included; it stays within InspectCacheBytes.
func (d *DB) InspectedBytes() int64 { return d.inspected.Bytes() }

// Parse resolves a user query's names (resolve.go), checks it with the
// read-only guard and returns what it reads. It parses only: the tables need
// not exist.
func (d *DB) Parse(ctx context.Context, query string) (engine.Parsed, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return engine.Parsed{}, fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	var c checkedQuery
	err = conn.Raw(func(dc any) error {
		resolved, err := d.resolve(ctx, dc.(driver.Conn), query)
		if err != nil {
			return err
		}
		c, err = guard(ctx, dc.(driver.Conn), resolved, true)
		return err
	})
	if err != nil {
		return engine.Parsed{}, err
	}
	return engine.Parsed{Tables: c.tables, TableFunctions: c.tableFunctions}, nil
}

func (d *DB) query(ctx context.Context, dc driver.Conn, q engine.StoreQuery) (*engine.Result, error) {
	a, err := duckdb.NewArrowFromConn(dc)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(q.Temp))
	for name := range q.Temp {
		names = append(names, name)
	}
	sort.Strings(names)
	exec := dc.(driver.ExecerContext)
	for _, name := range names {
		// Copied into a temporary table: see Tx.withArrow on projections.
		stream := name + "_spice_stream"
		release, err := a.RegisterView(q.Temp[name], stream)
		if err != nil {
			return nil, fmt.Errorf("expose %s from its source: %w", name, err)
		}
		_, err = exec.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+Ident(name)+" AS SELECT * FROM "+Ident(stream), nil)
		_, _ = exec.ExecContext(context.Background(), "DROP VIEW IF EXISTS "+Ident(stream), nil)
		release()
		if err != nil {
			return nil, fmt.Errorf("expose %s from its source: %w", name, err)
		}
		defer exec.ExecContext(context.Background(), "DROP TABLE IF EXISTS temp."+Ident(name), nil)
	}
	if q.User {
		if q.SQL, err = d.resolve(ctx, dc, q.SQL); err != nil {
			return nil, err
		}
	}
	ins, err := d.inspect(ctx, dc, q.SQL, q.User)
	if err != nil {
		return nil, err
	}
	hugeCols := ins.huge
	// Every run plans the query again. DuckDB's prepared statements would save the
	// planning (about 1 ms of the recipe's view), but DuckDB 1.5.6 keeps plans
	// built on table statistics across inserts and answers from them
	// (duckdb/duckdb#23704): a prepared ranking missed a product added later.
	// TestRepeatedRankingSeesNewProducts guards this.
	//
	// DuckDB's driver materializes a whole result before the first batch, so the
	// query runs under a row cap (see capped) that stops DuckDB early at about
	// MaxResultBytes; the bytes are then counted batch by batch.
	limit := d.MaxResultBytes
	if q.MaxBytes > 0 {
		limit = min(limit, q.MaxBytes)
	}
	sql := q.SQL
	if ins.minRowBits > 0 {
		sql = capped(q.SQL, limit*8/ins.minRowBits+1)
	}
	rd, err := a.QueryContext(ctx, sql, q.Args...)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	outNames := d.outputNames(ctx, dc, q.SQL)
	res := &engine.Result{Schema: renameSchema(narrowSchema(rd.Schema(), hugeCols), outNames)}
	for rd.Next() {
		rec, err := narrowRecord(res.Schema, rd.RecordBatch(), hugeCols)
		if err != nil {
			res.Release()
			return nil, err
		}
		if len(outNames) > 0 {
			rec = withNames(res.Schema, rec)
		}
		res.Records = append(res.Records, rec)
		res.Rows += rec.NumRows()
		res.Bytes += RecordBytes(rec)
		if res.Bytes > limit {
			res.Release()
			return nil, fmt.Errorf("%w: more than %d bytes; add a LIMIT or aggregate", ErrResultTooLarge, limit)
		}
	}
	if err := rd.Err(); err != nil {
		res.Release()
		return nil, err
	}
	return res, nil
}

// inspection is what the guard and Prepare tell about a query text: it passed the
// read-only guard, and which result columns are HUGEINT. Both depend on the text
// alone (the HUGEINT set is re-checked against each result's Arrow schema), so it
// is computed once per text while the text stays in the byte-bounded cache.
type inspection struct {
	huge map[int]bool
	// user: the text passed the guard's rules for users' queries too.
	user atomic.Bool
	// minRowBits is the least Arrow size of a result row; 0 when the query
	// cannot be capped (duplicate column names, which a wrapping SELECT * would
	// rename).
	minRowBits int64
}

// capped wraps query in a row limit. A result of that many rows is larger than
// MaxResultBytes whatever its values, so the limit never cuts a result that
// would have been answered: it only stops DuckDB from building the rest of one
// that will be refused.
func capped(query string, rows int64) string {
	body := strings.TrimRight(strings.TrimSpace(query), "; \t\r\n")
	return "SELECT * FROM (\n" + body + "\n) AS spice_result LIMIT " + strconv.FormatInt(rows, 10)
}

// inspect checks query with the read-only guard and returns the indexes of its
// HUGEINT result columns, preparing it only the first time a text is seen.
func (d *DB) inspect(ctx context.Context, dc driver.Conn, query string, user bool) (*inspection, error) {
	if v, ok := d.inspected.Get(query); ok && (v.user.Load() || !user) {
		return v, nil
	}
	if _, err := guard(ctx, dc, query, user); err != nil {
		return nil, err
	}
	ins, err := inspect(dc, query)
	if err != nil {
		return nil, err
	}
	ins.user.Store(user)
	if ins.minRowBits > 0 {
		// The wrapped text must pass the guard as the text did.
		if _, err := guard(ctx, dc, capped(query, 1), user); err != nil {
			ins.minRowBits = 0
		}
	}
	d.inspected.Add(query, ins, int64(16*len(ins.huge)+32))
	return ins, nil
}

func inspect(dc driver.Conn, query string) (*inspection, error) {
	st, err := dc.Prepare(query)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	s := st.(*duckdb.Stmt)
	typ, err := s.StatementType()
	if err != nil {
		return nil, fmt.Errorf("inspect statement: %w", err)
	}
	if typ != duckdb.STATEMENT_TYPE_SELECT {
		return nil, fmt.Errorf("%w: got a %s statement; this runtime is read-only: send one SELECT, and write to the source instead", ErrReadOnly, stmtName(typ))
	}
	n, err := s.ColumnCount()
	if err != nil {
		return nil, fmt.Errorf("inspect result columns: %w", err)
	}
	ins := &inspection{minRowBits: 1}
	names := map[string]bool{}
	for i := 0; i < n; i++ {
		t, err := s.ColumnType(i)
		if err != nil {
			return nil, fmt.Errorf("inspect result column %d: %w", i, err)
		}
		if t == duckdb.TYPE_HUGEINT {
			if ins.huge == nil {
				ins.huge = map[int]bool{}
			}
			ins.huge[i] = true
		}
		ins.minRowBits += minBits(t)
		name, err := s.ColumnName(i)
		if err != nil {
			return nil, fmt.Errorf("inspect result column %d: %w", i, err)
		}
		name = strings.ToLower(name)
		if names[name] {
			ins.minRowBits = 0
			break
		}
		names[name] = true
	}
	return ins, nil
}

// minBits is the least Arrow size of one value of t, in bits.
func minBits(t duckdb.Type) int64 {
	switch t {
	case duckdb.TYPE_BOOLEAN:
		return 1
	case duckdb.TYPE_TINYINT, duckdb.TYPE_UTINYINT:
		return 8
	case duckdb.TYPE_SMALLINT, duckdb.TYPE_USMALLINT:
		return 16
	case duckdb.TYPE_INTEGER, duckdb.TYPE_UINTEGER, duckdb.TYPE_FLOAT, duckdb.TYPE_DATE,
		duckdb.TYPE_VARCHAR, duckdb.TYPE_BLOB, duckdb.TYPE_LIST:
		return 32 // a value, or the offset of a variable-length one
	case duckdb.TYPE_BIGINT, duckdb.TYPE_UBIGINT, duckdb.TYPE_DOUBLE, duckdb.TYPE_HUGEINT,
		duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_TZ, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS,
		duckdb.TYPE_TIMESTAMP_NS, duckdb.TYPE_TIME:
		return 64
	case duckdb.TYPE_DECIMAL, duckdb.TYPE_UUID, duckdb.TYPE_INTERVAL:
		return 128
	default:
		return 1
	}
}

func narrowSchema(s *arrow.Schema, huge map[int]bool) *arrow.Schema {
	if len(huge) == 0 {
		return s
	}
	fields := append([]arrow.Field(nil), s.Fields()...)
	for i := range huge {
		if i < len(fields) && isHugeint(fields[i].Type) {
			fields[i].Type = arrow.PrimitiveTypes.Int64
		}
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// narrowRecord returns rec (retained) with HUGEINT columns as int64.
func narrowRecord(s *arrow.Schema, rec arrow.RecordBatch, huge map[int]bool) (arrow.RecordBatch, error) {
	if len(huge) == 0 {
		rec.Retain()
		return rec, nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		col := rec.Column(i)
		dec, ok := col.(*array.Decimal128)
		if !huge[i] || !ok || !isHugeint(col.DataType()) {
			col.Retain()
			cols[i] = col
			continue
		}
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for j := 0; j < dec.Len(); j++ {
			if dec.IsNull(j) {
				b.AppendNull()
				continue
			}
			v := dec.Value(j)
			if v.HighBits() != 0 && v.HighBits() != -1 || (v.HighBits() == 0 && v.LowBits() > math.MaxInt64) || (v.HighBits() == -1 && v.LowBits() < 1<<63) {
				b.Release()
				return nil, fmt.Errorf("column %s: value %s does not fit in BIGINT; cast it in the query", s.Field(i).Name, v.BigInt())
			}
			b.Append(int64(v.LowBits()))
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(s, cols, rec.NumRows()), nil
}

// RecordBytes is the size of a record's buffers.
func RecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// isHugeint reports whether t is how DuckDB exports HUGEINT to Arrow.
func isHugeint(t arrow.DataType) bool {
	d, ok := t.(*arrow.Decimal128Type)
	return ok && d.Precision == 38 && d.Scale == 0
}
