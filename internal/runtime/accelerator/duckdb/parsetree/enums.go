package parsetree

// The enumerations below are DuckDB's, spelled as json_serialize_sql spells
// them (EnumUtil::ToChars in DuckDB 1.5). Decoding and encoding refuse any
// other spelling, so a value renamed by a DuckDB upgrade fails loudly.

// ExprType is an expression's DuckDB ExpressionType. Most expression classes
// have one fixed type, which the decoder checks and the encoder writes; the
// classes whose type varies carry it in an Op field (Comparison, Conjunction,
// Operator, Window).
type ExprType string

// The expression types of the variable classes, as the parser emits them.
const (
	CompareEqual              ExprType = "COMPARE_EQUAL"
	CompareNotEqual           ExprType = "COMPARE_NOTEQUAL"
	CompareLessThan           ExprType = "COMPARE_LESSTHAN"
	CompareGreaterThan        ExprType = "COMPARE_GREATERTHAN"
	CompareLessThanOrEqual    ExprType = "COMPARE_LESSTHANOREQUALTO"
	CompareGreaterThanOrEqual ExprType = "COMPARE_GREATERTHANOREQUALTO"
	CompareDistinctFrom       ExprType = "COMPARE_DISTINCT_FROM"
	CompareNotDistinctFrom    ExprType = "COMPARE_NOT_DISTINCT_FROM"
	ConjunctionAnd            ExprType = "CONJUNCTION_AND"
	ConjunctionOr             ExprType = "CONJUNCTION_OR"
	OperatorNot               ExprType = "OPERATOR_NOT"
	OperatorIsNull            ExprType = "OPERATOR_IS_NULL"
	OperatorIsNotNull         ExprType = "OPERATOR_IS_NOT_NULL"
	CompareIn                 ExprType = "COMPARE_IN"
	CompareNotIn              ExprType = "COMPARE_NOT_IN"
	OperatorCoalesce          ExprType = "OPERATOR_COALESCE"
	WindowAggregate           ExprType = "WINDOW_AGGREGATE"
	// ExprInvalid is the comparison of a subquery that is not ANY.
	ExprInvalid ExprType = "INVALID"
)

var exprTypes = set("INVALID", "OPERATOR_CAST", "OPERATOR_NOT", "OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL",
	"OPERATOR_UNPACK", "COMPARE_EQUAL", "COMPARE_NOTEQUAL", "COMPARE_LESSTHAN", "COMPARE_GREATERTHAN",
	"COMPARE_LESSTHANOREQUALTO", "COMPARE_GREATERTHANOREQUALTO", "COMPARE_IN", "COMPARE_NOT_IN",
	"COMPARE_DISTINCT_FROM", "COMPARE_BETWEEN", "COMPARE_NOT_BETWEEN", "COMPARE_NOT_DISTINCT_FROM",
	"CONJUNCTION_AND", "CONJUNCTION_OR", "VALUE_CONSTANT", "VALUE_PARAMETER", "VALUE_TUPLE",
	"VALUE_TUPLE_ADDRESS", "VALUE_NULL", "VALUE_VECTOR", "VALUE_SCALAR", "VALUE_DEFAULT", "AGGREGATE",
	"BOUND_AGGREGATE", "GROUPING_FUNCTION", "WINDOW_AGGREGATE", "WINDOW_RANK", "WINDOW_RANK_DENSE",
	"WINDOW_NTILE", "WINDOW_PERCENT_RANK", "WINDOW_CUME_DIST", "WINDOW_ROW_NUMBER", "WINDOW_FIRST_VALUE",
	"WINDOW_LAST_VALUE", "WINDOW_LEAD", "WINDOW_LAG", "WINDOW_NTH_VALUE", "WINDOW_FILL", "FUNCTION",
	"BOUND_FUNCTION", "CASE_EXPR", "OPERATOR_NULLIF", "OPERATOR_COALESCE", "ARRAY_EXTRACT", "ARRAY_SLICE",
	"STRUCT_EXTRACT", "ARRAY_CONSTRUCTOR", "ARROW", "OPERATOR_TRY", "SUBQUERY", "STAR", "TABLE_STAR",
	"PLACEHOLDER", "COLUMN_REF", "FUNCTION_REF", "TABLE_REF", "LAMBDA_REF", "TYPE", "CAST", "BOUND_REF",
	"BOUND_COLUMN_REF", "BOUND_UNNEST", "COLLATE", "LAMBDA", "POSITIONAL_REFERENCE", "BOUND_LAMBDA_REF",
	"BOUND_EXPANDED")

// JoinType is a join's DuckDB JoinType.
type JoinType string

// The join types the parser emits.
const (
	JoinInner JoinType = "INNER"
	JoinLeft  JoinType = "LEFT"
	JoinRight JoinType = "RIGHT"
	JoinFull  JoinType = "FULL"
	JoinSemi  JoinType = "SEMI"
	JoinAnti  JoinType = "ANTI"
)

var joinTypes = set("INVALID", "LEFT", "RIGHT", "INNER", "FULL", "SEMI", "ANTI", "MARK", "SINGLE",
	"RIGHT_SEMI", "RIGHT_ANTI")

// JoinRefType is how a join was written (DuckDB's JoinRefType).
type JoinRefType string

// The join reference types.
const (
	JoinRegular    JoinRefType = "REGULAR"
	JoinNatural    JoinRefType = "NATURAL"
	JoinCross      JoinRefType = "CROSS"
	JoinPositional JoinRefType = "POSITIONAL"
	JoinAsOf       JoinRefType = "ASOF"
	JoinDependent  JoinRefType = "DEPENDENT"
)

var joinRefTypes = set("REGULAR", "NATURAL", "CROSS", "POSITIONAL", "ASOF", "DEPENDENT")

// SetOpType is a set operation's DuckDB SetOperationType.
type SetOpType string

// The set operation types.
const (
	SetOpUnion       SetOpType = "UNION"
	SetOpExcept      SetOpType = "EXCEPT"
	SetOpIntersect   SetOpType = "INTERSECT"
	SetOpUnionByName SetOpType = "UNION_BY_NAME"
)

var setOpTypes = set("NONE", "UNION", "EXCEPT", "INTERSECT", "UNION_BY_NAME")

// SubqueryType is a subquery expression's DuckDB SubqueryType.
type SubqueryType string

// The subquery types.
const (
	SubqueryScalar    SubqueryType = "SCALAR"
	SubqueryExists    SubqueryType = "EXISTS"
	SubqueryNotExists SubqueryType = "NOT_EXISTS"
	SubqueryAny       SubqueryType = "ANY"
)

var subqueryTypes = set("INVALID", "SCALAR", "EXISTS", "NOT_EXISTS", "ANY")

// AggregateHandling says how a SELECT groups: STANDARD_HANDLING, or
// FORCE_AGGREGATES for GROUP BY ALL.
type AggregateHandling string

// The aggregate handlings.
const (
	StandardHandling AggregateHandling = "STANDARD_HANDLING"
	NoAggregates     AggregateHandling = "NO_AGGREGATES_ALLOWED"
	ForceAggregates  AggregateHandling = "FORCE_AGGREGATES"
)

var aggregateHandlings = set("STANDARD_HANDLING", "NO_AGGREGATES_ALLOWED", "FORCE_AGGREGATES")

// OrderType is the direction of an ORDER BY term.
type OrderType string

// The order types the parser emits.
const (
	OrderDefault    OrderType = "ORDER_DEFAULT"
	OrderAscending  OrderType = "ASCENDING"
	OrderDescending OrderType = "DESCENDING"
)

var orderTypes = set("INVALID", "ORDER_DEFAULT", "DEFAULT", "ASCENDING", "ASC", "DESCENDING", "DESC")

// NullOrder is where an ORDER BY term puts NULLs.
type NullOrder string

// The null orders the parser emits.
const (
	NullsDefault NullOrder = "ORDER_DEFAULT"
	NullsFirst   NullOrder = "NULLS FIRST"
	NullsLast    NullOrder = "NULLS LAST"
)

var nullOrders = set("INVALID", "ORDER_DEFAULT", "DEFAULT", "NULLS FIRST", "NULLS_FIRST", "NULLS LAST", "NULLS_LAST")

// WindowBoundary is one end of a window frame.
type WindowBoundary string

var windowBoundaries = set("INVALID", "UNBOUNDED_PRECEDING", "UNBOUNDED_FOLLOWING", "CURRENT_ROW_RANGE",
	"CURRENT_ROW_ROWS", "EXPR_PRECEDING_ROWS", "EXPR_FOLLOWING_ROWS", "EXPR_PRECEDING_RANGE",
	"EXPR_FOLLOWING_RANGE", "CURRENT_ROW_GROUPS", "EXPR_PRECEDING_GROUPS", "EXPR_FOLLOWING_GROUPS")

// WindowExclude is a window frame's EXCLUDE clause; NO_OTHER when none.
type WindowExclude string

var windowExcludes = set("NO_OTHER", "CURRENT_ROW", "GROUP", "TIES")

// SampleMethod is a sample's method: System, Bernoulli or Reservoir.
type SampleMethod string

var sampleMethods = set("System", "Bernoulli", "Reservoir", "INVALID")

// CTEMaterialize says whether a WITH query is materialized.
type CTEMaterialize string

var cteMaterializes = set("CTE_MATERIALIZE_DEFAULT", "CTE_MATERIALIZE_ALWAYS", "CTE_MATERIALIZE_NEVER")

// ShowType is what a SHOW, DESCRIBE or SUMMARIZE in FROM shows.
type ShowType string

var showTypes = set("SUMMARY", "DESCRIBE", "SHOW_FROM", "SHOW_UNQUALIFIED")

// Ordinality says whether a table function has WITH ORDINALITY.
type Ordinality string

var ordinalities = set("WITHOUT_ORDINALITY", "WITH_ORDINALITY")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
