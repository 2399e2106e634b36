package parsetree

import "math"

// Node is a node of a parse tree: an Expr, a TableRef, a QueryNode or a
// Modifier. Walk visits them.
type Node interface {
	node()
}

// Expr is a parsed expression, one concrete type per DuckDB expression class:
// *ColumnRef, *Constant, *Function, *Comparison, *Conjunction, *Operator,
// *Cast, *Case, *Between, *Star, *Subquery, *Window, *Lambda, *Parameter,
// *PositionalRef, *Collate, *Default.
type Expr interface {
	Node
	// Base returns what every expression has: its alias and location.
	Base() *ExprBase
}

// ExprBase is what every expression has.
type ExprBase struct {
	// Alias is the name given with AS ("" when none). It is also how DuckDB
	// spells a named argument: struct_pack(a := 1) gives its child alias "a".
	Alias string
	// Location is the byte offset in the query text; NoLocation when the
	// parser made the expression up.
	Location Location
}

// Base returns b.
func (b *ExprBase) Base() *ExprBase { return b }

// Location is a byte offset in the query text (DuckDB's query_location).
type Location uint64

// NoLocation is the location of a node the parser made up.
const NoLocation Location = math.MaxUint64

// ColumnRef is a column reference: Names are its dotted parts ("o", "id").
type ColumnRef struct {
	ExprBase
	Names []string
}

// Constant is a literal.
type Constant struct {
	ExprBase
	Value Value
}

// Function is a function call, an aggregate included, or an operator the
// parser spells as a function (+, ||, ~~, ...; IsOperator tells).
type Function struct {
	ExprBase
	Name, Schema, Catalog string
	Args                  []Expr
	// Filter is an aggregate's FILTER (WHERE ...) condition; nil when none.
	Filter Expr
	// OrderBy is an aggregate's ORDER BY within its arguments.
	OrderBy     []OrderBy
	Distinct    bool
	IsOperator  bool
	ExportState bool
}

// Comparison is Left Op Right for a COMPARE_* Op.
type Comparison struct {
	ExprBase
	Op          ExprType
	Left, Right Expr
}

// Conjunction is AND (ConjunctionAnd) or OR (ConjunctionOr) of Children.
type Conjunction struct {
	ExprBase
	Op       ExprType
	Children []Expr
}

// Operator is an operator of the OPERATOR class: NOT, IS [NOT] NULL,
// [NOT] IN, COALESCE, [] and struct extraction, GROUPING, ...
type Operator struct {
	ExprBase
	Op       ExprType
	Children []Expr
}

// Cast is CAST(Child AS Type), TRY_CAST when Try.
type Cast struct {
	ExprBase
	Child Expr
	Type  LogicalType
	Try   bool
}

// Case is CASE WHEN ... THEN ... ELSE Else END. The parser writes a CASE
// without ELSE with an ELSE NULL.
type Case struct {
	ExprBase
	Checks []CaseCheck
	Else   Expr
}

// CaseCheck is one WHEN ... THEN ... of a Case.
type CaseCheck struct {
	When, Then Expr
}

// Between is Input BETWEEN Lower AND Upper.
type Between struct {
	ExprBase
	Input, Lower, Upper Expr
}

// Star is *, t.*, COLUMNS(...) and their EXCLUDE, REPLACE and RENAME lists.
type Star struct {
	ExprBase
	// Relation is the qualifier of t.* ("" when none).
	Relation string
	Exclude  []string
	Replace  []StarReplace
	// Columns is set for COLUMNS(...).
	Columns bool
	// Expr is the argument of COLUMNS(expr) when it is not a star; nil when none.
	Expr             Expr
	QualifiedExclude []QualifiedColumn
	Rename           []StarRename
}

// StarReplace is one entry of * REPLACE (expr AS column).
type StarReplace struct {
	Column string
	Expr   Expr
}

// StarRename is one entry of * RENAME (column AS name).
type StarRename struct {
	Column QualifiedColumn
	Name   string
}

// QualifiedColumn names a column with its optional qualifiers.
type QualifiedColumn struct {
	Catalog, Schema, Table, Column string
}

// Subquery is a subquery expression: (SELECT ...), EXISTS, x IN (SELECT ...),
// x op ANY/ALL (SELECT ...).
type Subquery struct {
	ExprBase
	Kind  SubqueryType
	Query *SelectStatement
	// Child is the left side of an ANY subquery; nil otherwise.
	Child Expr
	// Comparison is how Child compares with ANY's rows; ExprInvalid otherwise.
	Comparison ExprType
}

// Window is a window function call: Name(Args) OVER (PARTITION BY ...
// ORDER BY ... frame).
type Window struct {
	ExprBase
	// Op is the window's kind: WindowAggregate for an aggregate over a
	// window, WINDOW_ROW_NUMBER, WINDOW_RANK, WINDOW_LAG, ... otherwise.
	Op                    ExprType
	Name, Schema, Catalog string
	Args                  []Expr
	Partitions            []Expr
	Orders                []OrderBy
	// Start and End are the frame's bounds; StartExpr and EndExpr their
	// offsets when the bound has one (nil otherwise).
	Start, End         WindowBoundary
	StartExpr, EndExpr Expr
	// Offset and Default are lead/lag's offset and default; nil when none.
	Offset, Default Expr
	IgnoreNulls     bool
	// Filter is the FILTER (WHERE ...) condition; nil when none.
	Filter    Expr
	Exclude   WindowExclude
	Distinct  bool
	ArgOrders []OrderBy
}

// OrderBy is one term of an ORDER BY.
type OrderBy struct {
	Type  OrderType
	Nulls NullOrder
	Expr  Expr
}

// Lambda is a lambda function, Params -> Body (or lambda Params: Body).
type Lambda struct {
	ExprBase
	// Params is the parameter, or a function "row" of the parameters.
	Params Expr
	Body   Expr
}

// Parameter is a prepared statement parameter: Identifier is "1" for ? or
// $1, "name" for $name.
type Parameter struct {
	ExprBase
	Identifier string
}

// PositionalRef is #Index, a column by its position.
type PositionalRef struct {
	ExprBase
	Index uint64
}

// Collate is Child COLLATE Collation.
type Collate struct {
	ExprBase
	Child     Expr
	Collation string
}

// Default is DEFAULT.
type Default struct {
	ExprBase
}

func (*ColumnRef) node()     {}
func (*Constant) node()      {}
func (*Function) node()      {}
func (*Comparison) node()    {}
func (*Conjunction) node()   {}
func (*Operator) node()      {}
func (*Cast) node()          {}
func (*Case) node()          {}
func (*Between) node()       {}
func (*Star) node()          {}
func (*Subquery) node()      {}
func (*Window) node()        {}
func (*Lambda) node()        {}
func (*Parameter) node()     {}
func (*PositionalRef) node() {}
func (*Collate) node()       {}
func (*Default) node()       {}

var (
	_ Expr = (*ColumnRef)(nil)
	_ Expr = (*Constant)(nil)
	_ Expr = (*Function)(nil)
	_ Expr = (*Comparison)(nil)
	_ Expr = (*Conjunction)(nil)
	_ Expr = (*Operator)(nil)
	_ Expr = (*Cast)(nil)
	_ Expr = (*Case)(nil)
	_ Expr = (*Between)(nil)
	_ Expr = (*Star)(nil)
	_ Expr = (*Subquery)(nil)
	_ Expr = (*Window)(nil)
	_ Expr = (*Lambda)(nil)
	_ Expr = (*Parameter)(nil)
	_ Expr = (*PositionalRef)(nil)
	_ Expr = (*Collate)(nil)
	_ Expr = (*Default)(nil)
)
