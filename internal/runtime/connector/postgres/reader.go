package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// catalogSQL describes the scanned relation: NOT NULL columns, type names for
// messages and enum types (carried as strings). Casting to regclass also turns a
// missing table into a clear 42P01 before anything else runs.
const catalogSQL = `SELECT a.attrelid, a.attnum, a.attnotnull, format_type(a.atttypid, a.atttypmod),
       a.atttypid, t.typtype = 'e'
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped`

// relation is what catalogSQL says about the scanned table.
type relation struct {
	oid     uint32
	notNull map[uint16]bool
	typName map[uint16]string
	enums   map[uint32]bool
}

func describe(ctx context.Context, conn *pgx.Conn, table pgx.Identifier) (relation, error) {
	rel := relation{notNull: map[uint16]bool{}, typName: map[uint16]string{}, enums: map[uint32]bool{}}
	rows, err := conn.Query(ctx, catalogSQL, table.Sanitize())
	if err != nil {
		return rel, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			attnum         int16
			notNull, enum  bool
			typName        string
			relOID, typOID uint32
		)
		if err := rows.Scan(&relOID, &attnum, &notNull, &typName, &typOID, &enum); err != nil {
			return rel, err
		}
		rel.oid = relOID
		rel.notNull[uint16(attnum)], rel.typName[uint16(attnum)] = notNull, typName
		if enum {
			rel.enums[typOID] = true
		}
	}
	return rel, rows.Err()
}

// query describes the relation, prepares the SELECT, maps its columns to Arrow
// (failing before any row is read if one cannot be carried) and starts it.
func (s *Source) query(ctx context.Context, conn *pgx.Conn, op string, req engine.ScanRequest) (*reader, error) {
	rel, err := describe(ctx, conn, s.ident)
	if err != nil {
		return nil, s.target.wrap(ctx, op, err)
	}
	sql, args := selectSQL(s.ident, req)
	sd, err := conn.PgConn().Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, s.target.wrap(ctx, op, err)
	}
	if len(sd.Fields) == 0 {
		return nil, fmt.Errorf("%s: the table has no columns to load", op)
	}
	if len(sd.ParamOIDs) != len(args) {
		return nil, fmt.Errorf("%s: refresh_sql's WHERE clause uses a query parameter ($1, $2, ...); write the value into the clause", op)
	}
	values, formats, err := encodeParams(conn.TypeMap(), sd.ParamOIDs, args)
	if err != nil {
		return nil, fmt.Errorf("%s: since bound on column %q: %w", op, req.Since.Column, err)
	}
	rd, err := s.newReader(ctx, op, sd.Fields, rel, conn.TypeMap())
	if err != nil {
		return nil, err
	}
	rd.rr = conn.PgConn().ExecStatement(ctx, sd, values, formats, []int16{pgx.BinaryFormatCode})
	return rd, nil
}

// encodeParams encodes the Since bound for its column's type. A string is sent as
// text for Postgres to parse, so it works for any column type.
func encodeParams(m *pgtype.Map, oids []uint32, args []any) ([][]byte, []int16, error) {
	values := make([][]byte, len(args))
	formats := make([]int16, len(args))
	for i, a := range args {
		if v, ok := a.(string); ok {
			values[i], formats[i] = []byte(v), pgx.TextFormatCode
			continue
		}
		formats[i] = m.FormatCodeForOID(oids[i])
		b, err := m.Encode(oids[i], formats[i], a, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot send %v (%T) as the column's type: %w", a, a, err)
		}
		values[i] = b
	}
	return values, formats, nil
}

// column is one result column and how its values reach its Arrow builder.
type column struct {
	name, typ string
	notNull   bool
	builder   array.Builder
	append    appendFunc
}

// reader is the array.RecordReader handed to Scan's fn. Each Next pulls the next
// batch of rows off the connection, so only one batch is in memory at a time.
type reader struct {
	refs     atomic.Int64
	ctx      context.Context
	op       string
	rr       *pgconn.ResultReader
	wrap     func(error) error
	schema   *arrow.Schema
	bld      *array.RecordBuilder
	cols     []column
	maxRows  int
	maxBytes int

	cur     arrow.RecordBatch
	err     error
	done    bool
	rows    int64
	batches int
}

var _ array.RecordReader = (*reader)(nil)

// newReader derives the Arrow schema from the result's field descriptions, so an
// empty result still has one.
func (s *Source) newReader(ctx context.Context, op string, fields []pgconn.FieldDescription, rel relation, tm *pgtype.Map) (*reader, error) {
	arrowFields := make([]arrow.Field, len(fields))
	makers := make([]newAppendFunc, len(fields))
	cols := make([]column, len(fields))
	for i, f := range fields {
		c := column{name: f.Name, typ: typeName(f, rel, tm)}
		if f.TableOID == rel.oid && f.TableOID != 0 {
			c.notNull = rel.notNull[f.TableAttributeNumber]
		}
		dt, mk, err := columnType(f.DataTypeOID, f.TypeModifier, rel.enums)
		if err != nil {
			return nil, unsupported(op, c, err)
		}
		arrowFields[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: !c.notNull}
		makers[i], cols[i] = mk, c
	}
	rd := &reader{
		ctx:      ctx,
		op:       op,
		wrap:     func(err error) error { return s.target.wrap(ctx, op, err) },
		schema:   arrow.NewSchema(arrowFields, nil),
		cols:     cols,
		maxRows:  max(s.BatchRows, 1),
		maxBytes: max(s.BatchBytes, 1),
	}
	mem := s.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rd.bld = array.NewRecordBuilder(mem, rd.schema)
	for i := range cols {
		cols[i].builder = rd.bld.Field(i)
		cols[i].append = makers[i](cols[i].builder)
	}
	rd.refs.Store(1)
	return rd, nil
}

func typeName(f pgconn.FieldDescription, rel relation, tm *pgtype.Map) string {
	if f.TableOID == rel.oid && f.TableOID != 0 {
		if n, ok := rel.typName[f.TableAttributeNumber]; ok {
			return n
		}
	}
	if t, ok := tm.TypeForOID(f.DataTypeOID); ok {
		return t.Name
	}
	return fmt.Sprintf("type with OID %d", f.DataTypeOID)
}

func unsupported(op string, c column, err error) error {
	why := ""
	if err != errCannotCarry {
		why = " (" + strings.TrimPrefix(err.Error(), errCannotCarry.Error()+": ") + ")"
	}
	return fmt.Errorf("%s: %w: column %q has type %s, which cannot be loaded%s; cast it to a supported type in a Postgres view and point the dataset at the view, or leave the column out with refresh_sql's select list",
		op, ErrUnsupportedType, c.name, c.typ, why)
}

func (r *reader) Retain() { r.refs.Add(1) }

func (r *reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.bld.Release()
}

func (r *reader) Schema() *arrow.Schema          { return r.schema }
func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *reader) Record() arrow.RecordBatch      { return r.cur }
func (r *reader) Err() error                     { return r.err }
func (r *reader) fail(err error) bool            { r.err = err; return false }

// Next reads up to maxRows rows (fewer once maxBytes of values are in) into the
// next record batch. The previous batch is released.
func (r *reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		return r.fail(r.wrap(err))
	}
	n, size := 0, 0
	for n < r.maxRows && size < r.maxBytes {
		if !r.rr.NextRow() {
			r.done = true
			if _, err := r.rr.Close(); err != nil {
				return r.fail(r.wrap(err))
			}
			break
		}
		m, err := r.appendRow(r.rr.Values())
		if err != nil {
			return r.fail(err)
		}
		n, size = n+1, size+m
	}
	if n == 0 {
		return false
	}
	r.cur = r.bld.NewRecordBatch()
	r.rows += int64(n)
	r.batches++
	return true
}

// appendRow appends one row and returns its size in bytes on the wire.
func (r *reader) appendRow(values [][]byte) (int, error) {
	size := 0
	for i, raw := range values {
		c := &r.cols[i]
		size += len(raw)
		if raw == nil {
			if c.notNull {
				return 0, fmt.Errorf("%s: column %q is NOT NULL in the catalog but a NULL arrived (was the table altered during the scan?); retry", r.op, c.name)
			}
			c.builder.AppendNull()
			continue
		}
		if err := c.append(raw); err != nil {
			return 0, fmt.Errorf("%s: column %q (%s): %w", r.op, c.name, c.typ, err)
		}
	}
	return size, nil
}
