package parsetree

// Value is a DuckDB value: a constant's, a sample size, a PIVOT IN entry.
//
// Data holds the value when IsNull is false, as DuckDB serializes it for the
// physical type of Type:
//
//	bool      BOOLEAN
//	int64     TINYINT, SMALLINT, INTEGER, BIGINT; DATE (days since 1970-01-01);
//	          TIME, TIME_NS, TIMESTAMP* (micro-, milli-, nano- or seconds
//	          since 1970 as the type says); DECIMAL of width up to 18 (the
//	          unscaled integer)
//	uint64    UTINYINT, USMALLINT, UINTEGER, UBIGINT; TIME WITH TIME ZONE
//	          (DuckDB's packed bits)
//	Int128    HUGEINT, UUID, DECIMAL of width 19 to 38
//	Uint128   UHUGEINT
//	float64   FLOAT, DOUBLE
//	string    VARCHAR; BLOB as DuckDB prints a blob (printable ASCII, other
//	          bytes as \xHH)
//	Interval  INTERVAL
//	[]Value   the elements of a LIST, MAP, ARRAY, or the fields of a STRUCT
//	          or UNION, each a Value with its own Type
//
// The range of each integer follows its type (a TINYINT is -128..127).
// Values of other types (ENUM, BIT, BIGNUM, VARIANT, ...) do not occur in
// parse trees (DuckDB cannot even write BIT and BIGNUM values as JSON); they
// decode only when NULL. Data is nil when IsNull is true.
type Value struct {
	Type   LogicalType
	IsNull bool
	Data   any
}

// Int128 is a 128-bit signed integer, Upper*2^64 + Lower.
type Int128 struct {
	Upper int64
	Lower uint64
}

// Uint128 is a 128-bit unsigned integer, Upper*2^64 + Lower.
type Uint128 struct {
	Upper, Lower uint64
}

// Interval is a DuckDB INTERVAL.
type Interval struct {
	Months, Days int32
	Micros       int64
}

// physical is how a Value's Data is serialized.
type physical int

const (
	physNone physical = iota // no non-NULL value in a parse tree
	physBool
	physInt
	physUint
	physInt128
	physUint128
	physFloat
	physString
	physInterval
	physNested
)

// physicalOf returns how values of t are serialized and, for integers, the
// width in bits of the range they may take.
func physicalOf(t LogicalType) (physical, int) {
	switch t.ID {
	case TypeBoolean:
		return physBool, 0
	case TypeTinyint:
		return physInt, 8
	case TypeSmallint:
		return physInt, 16
	case TypeInteger, TypeDate:
		return physInt, 32
	case TypeBigint, TypeTime, TypeTimeNS, TypeTimestamp, TypeTimestampS, TypeTimestampMS, TypeTimestampNS, TypeTimestampTZ:
		return physInt, 64
	case TypeUTinyint:
		return physUint, 8
	case TypeUSmallint:
		return physUint, 16
	case TypeUInteger:
		return physUint, 32
	case TypeUBigint, TypeTimeTZ:
		return physUint, 64
	case TypeHugeint, TypeUUID:
		return physInt128, 0
	case TypeUHugeint:
		return physUint128, 0
	case TypeFloat, TypeDouble:
		return physFloat, 0
	case TypeVarchar, TypeBlob:
		return physString, 0
	case TypeInterval:
		return physInterval, 0
	case TypeList, TypeMap, TypeArray, TypeStruct, TypeUnion:
		return physNested, 0
	case TypeDecimal:
		return decimalPhysical(t)
	}
	return physNone, 0
}

// decimalPhysical follows DuckDB's storage of a DECIMAL by its width.
func decimalPhysical(t LogicalType) (physical, int) {
	d, ok := t.Info.(*DecimalInfo)
	switch {
	case !ok:
		return physNone, 0
	case d.Width <= 4:
		return physInt, 16
	case d.Width <= 9:
		return physInt, 32
	case d.Width <= 18:
		return physInt, 64
	default:
		return physInt128, 0
	}
}

// fitsInt reports whether v is in the range of a signed integer of bits.
func fitsInt(v int64, bits int) bool {
	if bits >= 64 {
		return true
	}
	limit := int64(1) << (bits - 1)
	return v >= -limit && v < limit
}

// fitsUint reports whether v is in the range of an unsigned integer of bits.
func fitsUint(v uint64, bits int) bool {
	return bits >= 64 || v < uint64(1)<<bits
}
