package postgres

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// This file is what the change feed (internal/cdc) shares with the scanning
// connector, so rows copied by the feed's snapshot and rows decoded from the
// replication stream get the same Arrow types and the same values.

// Codec turns the values of one Postgres column, in binary format, into Arrow. The
// change feed asks pgoutput for binary tuples, which are byte for byte what a scan
// receives, so a streamed row equals a scanned one.
type Codec struct {
	// Type is the column's Arrow type, as Scan gives it.
	Type      arrow.DataType
	newAppend newAppendFunc
}

// NewCodec returns the codec of a column of type oid with modifier typmod
// (pg_attribute.atttypid and atttypmod, or a pgoutput Relation column); enum says
// whether the type is an enum (carried as its label). A type without an Arrow
// mapping fails with ErrUnsupportedType.
func NewCodec(oid uint32, typmod int32, enum bool) (Codec, error) {
	var enums map[uint32]bool
	if enum {
		enums = map[uint32]bool{oid: true}
	}
	dt, mk, err := columnType(oid, typmod, enums)
	if err != nil {
		return Codec{}, fmt.Errorf("%w: %v", ErrUnsupportedType, err)
	}
	return Codec{Type: dt, newAppend: mk}, nil
}

// Appender returns a function that appends one non-NULL binary value to b, which
// must be a builder of c.Type.
func (c Codec) Appender(b array.Builder) func(raw []byte) error {
	return c.newAppend(b)
}

// ScanTx reads table on conn, which the caller has already put in the transaction
// whose snapshot it wants (the change feed imports its replication slot's exported
// snapshot), and calls fn once with a streaming reader over the rows. req may
// select columns; Where and Since work as in Scan. The transaction is left open.
// If fn returns without error but did not read every row, or the reader failed,
// ScanTx returns an error: a half-read table is never taken for a whole one.
func ScanTx(ctx context.Context, conn *pgx.Conn, cfg Config, table string, req engine.ScanRequest, mem memory.Allocator, fn func(array.RecordReader) error) error {
	ident, err := parseTable(table)
	if err != nil {
		return err
	}
	s := NewSource(cfg, table)
	s.ident = ident
	if mem != nil {
		s.Allocator = mem
	}
	op := "snapshot " + table
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd, err := s.query(qctx, conn, op, req)
	if err != nil {
		return err
	}
	ferr := fn(rd)
	done := rd.done
	if !done {
		cancel()
		_, _ = rd.rr.Close()
	}
	rerr := rd.err
	rd.Release()
	switch {
	case ferr != nil:
		return ferr
	case rerr != nil:
		return rerr
	case !done:
		return fmt.Errorf("%s: the rows were not all read", op)
	}
	return nil
}
