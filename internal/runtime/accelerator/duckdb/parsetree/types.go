package parsetree

// LogicalType is a DuckDB type as the parse tree carries it: the target of a
// CAST, the type of a constant, a column type of VALUES. Info is nil for
// types without parameters (INTEGER, VARCHAR, ...).
type LogicalType struct {
	ID   TypeID
	Info TypeInfo
}

// TypeID is DuckDB's LogicalTypeId, spelled as DuckDB spells it
// ("INTEGER", "TIMESTAMP WITH TIME ZONE", ...).
type TypeID string

// The type ids of the types a query can name or a literal can have. Every
// other id of DuckDB 1.5 decodes too (see typeIDs); these are the ones with a
// name here because code tests for them.
const (
	TypeNull        TypeID = "NULL"
	TypeBoolean     TypeID = "BOOLEAN"
	TypeTinyint     TypeID = "TINYINT"
	TypeSmallint    TypeID = "SMALLINT"
	TypeInteger     TypeID = "INTEGER"
	TypeBigint      TypeID = "BIGINT"
	TypeHugeint     TypeID = "HUGEINT"
	TypeUTinyint    TypeID = "UTINYINT"
	TypeUSmallint   TypeID = "USMALLINT"
	TypeUInteger    TypeID = "UINTEGER"
	TypeUBigint     TypeID = "UBIGINT"
	TypeUHugeint    TypeID = "UHUGEINT"
	TypeDecimal     TypeID = "DECIMAL"
	TypeFloat       TypeID = "FLOAT"
	TypeDouble      TypeID = "DOUBLE"
	TypeDate        TypeID = "DATE"
	TypeTime        TypeID = "TIME"
	TypeTimeNS      TypeID = "TIME_NS"
	TypeTimeTZ      TypeID = "TIME WITH TIME ZONE"
	TypeTimestamp   TypeID = "TIMESTAMP"
	TypeTimestampS  TypeID = "TIMESTAMP_S"
	TypeTimestampMS TypeID = "TIMESTAMP_MS"
	TypeTimestampNS TypeID = "TIMESTAMP_NS"
	TypeTimestampTZ TypeID = "TIMESTAMP WITH TIME ZONE"
	TypeInterval    TypeID = "INTERVAL"
	TypeVarchar     TypeID = "VARCHAR"
	TypeChar        TypeID = "CHAR"
	TypeBlob        TypeID = "BLOB"
	TypeBit         TypeID = "BIT"
	TypeBignum      TypeID = "BIGNUM"
	TypeUUID        TypeID = "UUID"
	TypeList        TypeID = "LIST"
	TypeArray       TypeID = "ARRAY"
	TypeStruct      TypeID = "STRUCT"
	TypeMap         TypeID = "MAP"
	TypeUnion       TypeID = "UNION"
	// TypeUnbound is a type the parser leaves for the binder to resolve: a
	// user type, an ENUM(...), JSON; its Info is an *UnboundInfo.
	TypeUnbound TypeID = "UNBOUND"
)

var typeIDs = set("INVALID", "NULL", "UNKNOWN", "ANY", "UNBOUND", "TEMPLATE", "TYPE", "BOOLEAN", "TINYINT",
	"SMALLINT", "INTEGER", "BIGINT", "DATE", "TIME", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP", "TIMESTAMP_NS",
	"DECIMAL", "FLOAT", "DOUBLE", "CHAR", "VARCHAR", "BLOB", "INTERVAL", "UTINYINT", "USMALLINT", "UINTEGER",
	"UBIGINT", "TIMESTAMP WITH TIME ZONE", "TIME WITH TIME ZONE", "TIME_NS", "BIT", "STRING_LITERAL",
	"INTEGER_LITERAL", "BIGNUM", "UHUGEINT", "HUGEINT", "POINTER", "VALIDITY", "UUID", "GEOMETRY", "STRUCT",
	"LIST", "MAP", "TABLE", "ENUM", "AGGREGATE_STATE", "LAMBDA", "UNION", "ARRAY", "VARIANT")

// TypeInfo is the parameters of a LogicalType: one of *DecimalInfo,
// *ListInfo, *StructInfo, *ArrayInfo, *UnboundInfo, *GenericInfo. Each
// carries the type's alias (as GEOMETRY is a BLOB aliased "GEOMETRY").
type TypeInfo interface {
	// Base returns what every TypeInfo has.
	Base() *TypeInfoBase
	typeInfo()
}

// TypeInfoBase is what every TypeInfo has.
type TypeInfoBase struct {
	Alias string
}

// Base returns b.
func (b *TypeInfoBase) Base() *TypeInfoBase { return b }

// DecimalInfo is DECIMAL(Width, Scale).
type DecimalInfo struct {
	TypeInfoBase
	Width, Scale uint8
}

// ListInfo is the element type of a LIST (and of a MAP, whose element is a
// STRUCT of key and value).
type ListInfo struct {
	TypeInfoBase
	Child LogicalType
}

// StructInfo is the fields of a STRUCT, a UNION or a VARIANT.
type StructInfo struct {
	TypeInfoBase
	Fields []StructField
}

// StructField is one field of a StructInfo.
type StructField struct {
	Name string
	Type LogicalType
}

// ArrayInfo is a fixed-size ARRAY of Size elements of Child.
type ArrayInfo struct {
	TypeInfoBase
	Child LogicalType
	Size  uint32
}

// UnboundInfo names a type the binder resolves (DuckDB 1.5 writes it in the
// form of its USER types): Name with optional Catalog and Schema, and the
// modifiers written after the name, as in ENUM('a', 'b') or mytype(1).
type UnboundInfo struct {
	TypeInfoBase
	Name, Catalog, Schema string
	Modifiers             []Value
}

// GenericInfo is a TypeInfo with nothing but an alias.
type GenericInfo struct {
	TypeInfoBase
}

func (*DecimalInfo) typeInfo() {}
func (*ListInfo) typeInfo()    {}
func (*StructInfo) typeInfo()  {}
func (*ArrayInfo) typeInfo()   {}
func (*UnboundInfo) typeInfo() {}
func (*GenericInfo) typeInfo() {}

var (
	_ TypeInfo = (*DecimalInfo)(nil)
	_ TypeInfo = (*ListInfo)(nil)
	_ TypeInfo = (*StructInfo)(nil)
	_ TypeInfo = (*ArrayInfo)(nil)
	_ TypeInfo = (*UnboundInfo)(nil)
	_ TypeInfo = (*GenericInfo)(nil)
)
