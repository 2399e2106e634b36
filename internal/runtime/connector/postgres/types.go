package postgres

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgtype"
)

// appendFunc appends one non-NULL value, in Postgres binary format, to the builder
// it was made for.
type appendFunc func(raw []byte) error

// newAppendFunc makes an appendFunc for a builder of the matching Arrow type.
type newAppendFunc func(b array.Builder) appendFunc

// Postgres counts dates and timestamps from 2000-01-01, Arrow from 1970-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1000000
)

// Unconstrained numeric (no typmod) is carried as decimal128 with this precision and
// scale: the widest Arrow decimal that DuckDB stores natively, with room for cents
// and rates alike. Extra fractional digits are rounded, as a cast to
// numeric(38,10) would round them; integer parts too large are an error.
const (
	numericDefaultPrecision = 38
	numericDefaultScale     = 10
)

var be = binary.BigEndian

// arrayElem maps the one-dimensional array types the connector carries (as Arrow
// lists) to their element types.
var arrayElem = map[uint32]uint32{
	pgtype.BoolArrayOID:        pgtype.BoolOID,
	pgtype.Int2ArrayOID:        pgtype.Int2OID,
	pgtype.Int4ArrayOID:        pgtype.Int4OID,
	pgtype.Int8ArrayOID:        pgtype.Int8OID,
	pgtype.Float4ArrayOID:      pgtype.Float4OID,
	pgtype.Float8ArrayOID:      pgtype.Float8OID,
	pgtype.NumericArrayOID:     pgtype.NumericOID,
	pgtype.TextArrayOID:        pgtype.TextOID,
	pgtype.VarcharArrayOID:     pgtype.VarcharOID,
	pgtype.BPCharArrayOID:      pgtype.BPCharOID,
	pgtype.NameArrayOID:        pgtype.NameOID,
	pgtype.DateArrayOID:        pgtype.DateOID,
	pgtype.TimeArrayOID:        pgtype.TimeOID,
	pgtype.TimestampArrayOID:   pgtype.TimestampOID,
	pgtype.TimestamptzArrayOID: pgtype.TimestamptzOID,
	pgtype.UUIDArrayOID:        pgtype.UUIDOID,
	pgtype.JSONArrayOID:        pgtype.JSONOID,
	pgtype.JSONBArrayOID:       pgtype.JSONBOID,
	pgtype.ByteaArrayOID:       pgtype.ByteaOID,
}

// errCannotCarry marks a Postgres type without an Arrow mapping; the caller names
// the column and says what to do.
var errCannotCarry = errors.New("no Arrow mapping")

// columnType returns the Arrow type for a result column and the constructor of its
// appendFunc. enums holds the OIDs of enum types, which are carried as strings.
func columnType(oid uint32, typmod int32, enums map[uint32]bool) (arrow.DataType, newAppendFunc, error) {
	if enums[oid] {
		oid = pgtype.TextOID
	}
	elem, isArray := arrayElem[oid]
	if !isArray {
		return scalarType(oid, typmod)
	}
	// An array column's typmod is its elements' (numeric(10,2)[]).
	et, newElem, err := scalarType(elem, typmod)
	if err != nil {
		return nil, nil, err
	}
	newList := func(b array.Builder) appendFunc {
		lb := b.(*array.ListBuilder)
		return appendArray(lb, newElem(lb.ValueBuilder()))
	}
	return arrow.ListOf(et), newList, nil
}

// scalarType is the type mapping of the package documentation.
func scalarType(oid uint32, typmod int32) (arrow.DataType, newAppendFunc, error) {
	switch oid {
	case pgtype.BoolOID:
		return arrow.FixedWidthTypes.Boolean, appendBool, nil
	case pgtype.Int2OID:
		return arrow.PrimitiveTypes.Int16, appendInt16, nil
	case pgtype.Int4OID:
		return arrow.PrimitiveTypes.Int32, appendInt32, nil
	case pgtype.Int8OID:
		return arrow.PrimitiveTypes.Int64, appendInt64, nil
	case pgtype.Float4OID:
		return arrow.PrimitiveTypes.Float32, appendFloat32, nil
	case pgtype.Float8OID:
		return arrow.PrimitiveTypes.Float64, appendFloat64, nil
	case pgtype.NumericOID:
		return numericType(typmod)
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.JSONOID:
		return arrow.BinaryTypes.String, appendText, nil
	case pgtype.JSONBOID:
		return arrow.BinaryTypes.String, appendJSONB, nil
	case pgtype.UUIDOID:
		return arrow.BinaryTypes.String, appendUUID, nil
	case pgtype.ByteaOID:
		return arrow.BinaryTypes.Binary, appendBytes, nil
	case pgtype.DateOID:
		return arrow.FixedWidthTypes.Date32, appendDate, nil
	case pgtype.TimeOID:
		return arrow.FixedWidthTypes.Time64us, appendTime, nil
	case pgtype.TimestampOID:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, appendTimestamp, nil
	case pgtype.TimestamptzOID:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, appendTimestamp, nil
	}
	return nil, nil, errCannotCarry
}

// numericType maps numeric(p,s) to decimal128(p,s) and numeric without a typmod
// to decimal128(38,10).
func numericType(typmod int32) (arrow.DataType, newAppendFunc, error) {
	prec, scale := int32(numericDefaultPrecision), int32(numericDefaultScale)
	if typmod >= 4 {
		// typmod = (precision << 16 | scale) + 4, scale an 11-bit signed number.
		m := typmod - 4
		prec, scale = (m>>16)&0xffff, ((m&0x7ff)^1024)-1024
	}
	if prec > 38 || scale < 0 || scale > prec {
		return nil, nil, fmt.Errorf("%w: numeric(%d,%d) does not fit an Arrow decimal128 (precision up to 38, scale from 0 to the precision)", errCannotCarry, prec, scale)
	}
	dt := &arrow.Decimal128Type{Precision: prec, Scale: scale}
	newAppend := func(b array.Builder) appendFunc {
		db := b.(*array.Decimal128Builder)
		d := &numericDecoder{prec: prec, scale: scale}
		return func(raw []byte) error {
			n, err := d.decode(raw)
			if err != nil {
				return err
			}
			db.Append(n)
			return nil
		}
	}
	return dt, newAppend, nil
}

func errLen(what string, raw []byte) error {
	return fmt.Errorf("malformed binary %s value (%d bytes)", what, len(raw))
}

func appendBool(b array.Builder) appendFunc {
	bb := b.(*array.BooleanBuilder)
	return func(raw []byte) error {
		if len(raw) != 1 {
			return errLen("bool", raw)
		}
		bb.Append(raw[0] != 0)
		return nil
	}
}

func appendInt16(b array.Builder) appendFunc {
	ib := b.(*array.Int16Builder)
	return func(raw []byte) error {
		if len(raw) != 2 {
			return errLen("int2", raw)
		}
		ib.Append(int16(be.Uint16(raw)))
		return nil
	}
}

func appendInt32(b array.Builder) appendFunc {
	ib := b.(*array.Int32Builder)
	return func(raw []byte) error {
		if len(raw) != 4 {
			return errLen("int4", raw)
		}
		ib.Append(int32(be.Uint32(raw)))
		return nil
	}
}

func appendInt64(b array.Builder) appendFunc {
	ib := b.(*array.Int64Builder)
	return func(raw []byte) error {
		if len(raw) != 8 {
			return errLen("int8", raw)
		}
		ib.Append(int64(be.Uint64(raw)))
		return nil
	}
}

func appendFloat32(b array.Builder) appendFunc {
	fb := b.(*array.Float32Builder)
	return func(raw []byte) error {
		if len(raw) != 4 {
			return errLen("float4", raw)
		}
		fb.Append(math.Float32frombits(be.Uint32(raw)))
		return nil
	}
}

func appendFloat64(b array.Builder) appendFunc {
	fb := b.(*array.Float64Builder)
	return func(raw []byte) error {
		if len(raw) != 8 {
			return errLen("float8", raw)
		}
		fb.Append(math.Float64frombits(be.Uint64(raw)))
		return nil
	}
}

// appendText serves every type whose binary form is its text (text, varchar, bpchar,
// name, json, enums); the client encoding is UTF-8, so the bytes are valid strings.
func appendText(b array.Builder) appendFunc {
	sb := b.(*array.StringBuilder)
	return func(raw []byte) error {
		sb.BinaryBuilder.Append(raw)
		return nil
	}
}

// appendJSONB strips jsonb's version byte; what follows is the JSON text.
func appendJSONB(b array.Builder) appendFunc {
	sb := b.(*array.StringBuilder)
	return func(raw []byte) error {
		if len(raw) < 1 || raw[0] != 1 {
			return fmt.Errorf("unknown jsonb binary format version")
		}
		sb.BinaryBuilder.Append(raw[1:])
		return nil
	}
}

// appendUUID writes the canonical text form, 8-4-4-4-12 lower-case hex digits.
func appendUUID(b array.Builder) appendFunc {
	sb := b.(*array.StringBuilder)
	var buf [36]byte
	return func(raw []byte) error {
		if len(raw) != 16 {
			return errLen("uuid", raw)
		}
		hex.Encode(buf[0:8], raw[0:4])
		buf[8] = '-'
		hex.Encode(buf[9:13], raw[4:6])
		buf[13] = '-'
		hex.Encode(buf[14:18], raw[6:8])
		buf[18] = '-'
		hex.Encode(buf[19:23], raw[8:10])
		buf[23] = '-'
		hex.Encode(buf[24:36], raw[10:16])
		sb.BinaryBuilder.Append(buf[:])
		return nil
	}
}

func appendBytes(b array.Builder) appendFunc {
	bb := b.(*array.BinaryBuilder)
	return func(raw []byte) error {
		bb.Append(raw)
		return nil
	}
}

func appendDate(b array.Builder) appendFunc {
	db := b.(*array.Date32Builder)
	return func(raw []byte) error {
		if len(raw) != 4 {
			return errLen("date", raw)
		}
		d := int32(be.Uint32(raw))
		if d == math.MaxInt32 || d == math.MinInt32 {
			return fmt.Errorf("%w: date is infinity or -infinity, which Arrow dates cannot hold", ErrValue)
		}
		db.Append(arrow.Date32(d + pgEpochDays))
		return nil
	}
}

func appendTime(b array.Builder) appendFunc {
	tb := b.(*array.Time64Builder)
	return func(raw []byte) error {
		if len(raw) != 8 {
			return errLen("time", raw)
		}
		tb.Append(arrow.Time64(int64(be.Uint64(raw))))
		return nil
	}
}

// appendTimestamp serves timestamp and timestamptz: both are microseconds since
// 2000-01-01 UTC on the wire.
func appendTimestamp(b array.Builder) appendFunc {
	tb := b.(*array.TimestampBuilder)
	return func(raw []byte) error {
		if len(raw) != 8 {
			return errLen("timestamp", raw)
		}
		us := int64(be.Uint64(raw))
		switch {
		case us == math.MaxInt64 || us == math.MinInt64:
			return fmt.Errorf("%w: timestamp is infinity or -infinity, which Arrow timestamps cannot hold", ErrValue)
		case us > math.MaxInt64-pgEpochMicros:
			return fmt.Errorf("%w: timestamp is beyond the year 294246, the end of Arrow's microsecond timestamps", ErrValue)
		}
		tb.Append(arrow.Timestamp(us + pgEpochMicros))
		return nil
	}
}

// appendArray decodes a one-dimensional array in binary format (ndim, has-null flag,
// element OID, then length and lower bound per dimension, then length-prefixed
// elements) into a list.
func appendArray(lb *array.ListBuilder, elem appendFunc) appendFunc {
	vb := lb.ValueBuilder()
	return func(raw []byte) error {
		if len(raw) < 12 {
			return errLen("array", raw)
		}
		ndim := int32(be.Uint32(raw))
		switch {
		case ndim == 0: // '{}'
			lb.Append(true)
			return nil
		case ndim != 1:
			return fmt.Errorf("%w: a %d-dimensional array; only one-dimensional arrays can be carried", ErrValue, ndim)
		case len(raw) < 20:
			return errLen("array", raw)
		}
		n := int(int32(be.Uint32(raw[12:])))
		p := raw[20:]
		lb.Append(true)
		for range n {
			if len(p) < 4 {
				return errLen("array", raw)
			}
			l := int(int32(be.Uint32(p)))
			p = p[4:]
			if l < 0 {
				vb.AppendNull()
				continue
			}
			if len(p) < l {
				return errLen("array", raw)
			}
			if err := elem(p[:l]); err != nil {
				return err
			}
			p = p[l:]
		}
		return nil
	}
}
