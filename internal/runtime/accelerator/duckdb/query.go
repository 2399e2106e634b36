//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"sort"

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
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w after %s: make the query cheaper or raise the time-out", ErrQueryTimeout, d.QueryTimeout)
		}
		return nil, err
	}
	return res, nil
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
	hugeCols, err := d.inspect(dc, q.SQL)
	if err != nil {
		return nil, err
	}
	// Every run plans the query again. DuckDB's prepared statements would save the
	// planning (about 1 ms of the recipe's view), but DuckDB 1.5.6 keeps plans
	// built on table statistics across inserts and answers from them
	// (duckdb/duckdb#23704): a prepared ranking missed a product added later.
	// TestRepeatedRankingSeesNewProducts guards this.
	rd, err := a.QueryContext(ctx, q.SQL, q.Args...)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	res := &engine.Result{Schema: narrowSchema(rd.Schema(), hugeCols)}
	for rd.Next() {
		rec, err := narrowRecord(res.Schema, rd.RecordBatch(), hugeCols)
		if err != nil {
			res.Release()
			return nil, err
		}
		res.Records = append(res.Records, rec)
		res.Rows += rec.NumRows()
		res.Bytes += RecordBytes(rec)
		if res.Bytes > d.MaxResultBytes {
			res.Release()
			return nil, fmt.Errorf("%w: more than %d bytes; add a LIMIT or aggregate", ErrResultTooLarge, d.MaxResultBytes)
		}
	}
	if err := rd.Err(); err != nil {
		res.Release()
		return nil, err
	}
	return res, nil
}

// inspection is what Prepare tells about a query text: it is a single SELECT, and
// which result columns are HUGEINT. Both depend on the text alone (the HUGEINT set
// is re-checked against each result's Arrow schema), so it is computed once.
type inspection struct {
	huge map[int]bool
}

// maxInspections bounds the cache of inspected query texts.
const maxInspections = 4096

// inspect checks that query is a single SELECT and returns the indexes of its
// HUGEINT result columns, preparing it only the first time a text is seen.
func (d *DB) inspect(dc driver.Conn, query string) (map[int]bool, error) {
	if v, ok := d.inspected.Load(query); ok {
		return v.(*inspection).huge, nil
	}
	huge, err := inspect(dc, query)
	if err != nil {
		return nil, err
	}
	if d.ninspected.Add(1) > maxInspections {
		d.inspected.Clear()
		d.ninspected.Store(0)
	}
	d.inspected.Store(query, &inspection{huge: huge})
	return huge, nil
}

func inspect(dc driver.Conn, query string) (map[int]bool, error) {
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
		return nil, fmt.Errorf("%w: got a %s statement; this runtime serves reads only, write to the source instead", ErrReadOnly, stmtName(typ))
	}
	n, err := s.ColumnCount()
	if err != nil {
		return nil, fmt.Errorf("inspect result columns: %w", err)
	}
	var huge map[int]bool
	for i := 0; i < n; i++ {
		t, err := s.ColumnType(i)
		if err != nil {
			return nil, fmt.Errorf("inspect result column %d: %w", i, err)
		}
		if t == duckdb.TYPE_HUGEINT {
			if huge == nil {
				huge = map[int]bool{}
			}
			huge[i] = true
		}
	}
	return huge, nil
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
