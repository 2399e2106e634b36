package parsetree

// Document is what json_serialize_sql returns: the statements of a query
// text, or the error that kept DuckDB from serializing it.
type Document struct {
	Statements []*SelectStatement
	// Error is set when DuckDB could not parse or serialize the text; the
	// document then has no statements.
	Error *SQLError
}

// SQLError is the error of a Document: DuckDB's error type and message,
// and the extra information it adds (position, error_subtype, ...).
type SQLError struct {
	Type, Message string
	Extra         map[string]string
}

func (e *SQLError) Error() string {
	return "duckdb " + e.Type + " error: " + e.Message
}

// SelectStatement is a SELECT statement: a top-level statement, a subquery,
// a WITH query.
type SelectStatement struct {
	Node QueryNode
	// NamedParams maps the names of $name parameters to their numbers, in the
	// order DuckDB wrote them.
	NamedParams []NamedParam
}

// NamedParam is one entry of a SelectStatement's NamedParams.
type NamedParam struct {
	Name  string
	Index uint64
}

// QueryNode is a query: *SelectNode, *SetOpNode or *RecursiveCTENode.
type QueryNode interface {
	Node
	// Base returns what every query node has.
	Base() *QueryBase
}

// QueryBase is what every query node has: the modifiers applied to its
// result (ORDER BY, LIMIT, DISTINCT) in order, and its WITH queries.
type QueryBase struct {
	Modifiers []Modifier
	CTEs      []CTE
}

// Base returns b.
func (b *QueryBase) Base() *QueryBase { return b }

// CTE is one WITH query.
type CTE struct {
	Name string
	// Aliases renames the query's columns: WITH x(a, b) AS (...).
	Aliases      []string
	Query        *SelectStatement
	Materialized CTEMaterialize
	// KeyTargets is the USING KEY (...) of a recursive query.
	KeyTargets []Expr
}

// SelectNode is SELECT ... FROM ... WHERE ... GROUP BY ... HAVING ...
// QUALIFY ..., with USING SAMPLE. A VALUES statement is a SELECT * over a
// ValuesRef.
type SelectNode struct {
	QueryBase
	List []Expr
	From TableRef
	// Where, Having and Qualify are nil when absent.
	Where   Expr
	GroupBy []Expr
	// GroupingSets lists, per grouping set, the indexes into GroupBy it
	// groups by. A plain GROUP BY has one set of all of them.
	GroupingSets [][]uint64
	Aggregate    AggregateHandling
	Having       Expr
	// Sample is the USING SAMPLE of the SELECT; nil when none.
	Sample  *Sample
	Qualify Expr
}

// SetOpNode is Left UNION / EXCEPT / INTERSECT [ALL] Right.
type SetOpNode struct {
	QueryBase
	Op          SetOpType
	Left, Right QueryNode
	All         bool
}

// RecursiveCTENode is the body of a WITH RECURSIVE query: Left UNION [ALL]
// Right, where Right reads Name.
type RecursiveCTENode struct {
	QueryBase
	Name        string
	UnionAll    bool
	Left, Right QueryNode
	Aliases     []string
	KeyTargets  []Expr
}

// Sample is a TABLESAMPLE or USING SAMPLE clause.
type Sample struct {
	// Size is a count of rows, or a percentage when IsPercentage.
	Size         Value
	IsPercentage bool
	Method       SampleMethod
	// Seed is the REPEATABLE seed; -1 when none.
	Seed int64
}

// Modifier is a result modifier of a query node: *OrderModifier,
// *LimitModifier, *LimitPercentModifier or *DistinctModifier.
type Modifier interface {
	Node
	modifier()
}

// OrderModifier is ORDER BY.
type OrderModifier struct {
	Orders []OrderBy
}

// LimitModifier is LIMIT and OFFSET; either is nil when absent.
type LimitModifier struct {
	Limit, Offset Expr
}

// LimitPercentModifier is LIMIT n% and OFFSET; Offset is nil when absent.
type LimitPercentModifier struct {
	Limit, Offset Expr
}

// DistinctModifier is DISTINCT, or DISTINCT ON (On) when On is not empty.
type DistinctModifier struct {
	On []Expr
}

func (*SelectNode) node()           {}
func (*SetOpNode) node()            {}
func (*RecursiveCTENode) node()     {}
func (*OrderModifier) node()        {}
func (*LimitModifier) node()        {}
func (*LimitPercentModifier) node() {}
func (*DistinctModifier) node()     {}

func (*OrderModifier) modifier()        {}
func (*LimitModifier) modifier()        {}
func (*LimitPercentModifier) modifier() {}
func (*DistinctModifier) modifier()     {}

var (
	_ QueryNode = (*SelectNode)(nil)
	_ QueryNode = (*SetOpNode)(nil)
	_ QueryNode = (*RecursiveCTENode)(nil)
	_ Modifier  = (*OrderModifier)(nil)
	_ Modifier  = (*LimitModifier)(nil)
	_ Modifier  = (*LimitPercentModifier)(nil)
	_ Modifier  = (*DistinctModifier)(nil)
)
