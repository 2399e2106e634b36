package parsetree

// TableRef is a FROM item, one concrete type per DuckDB table reference
// type: *BaseTable, *Join, *SubqueryRef, *TableFunction, *EmptyRef,
// *ValuesRef, *PivotRef, *ShowRef.
type TableRef interface {
	Node
	// Base returns what every table reference has.
	Base() *TableRefBase
}

// TableRefBase is what every table reference has.
type TableRefBase struct {
	// Alias is the name given with AS ("" when none).
	Alias string
	// Sample is the TABLESAMPLE of this reference; nil when none.
	Sample   *Sample
	Location Location
}

// Base returns b.
func (b *TableRefBase) Base() *TableRefBase { return b }

// BaseTable is a table or view by name.
type BaseTable struct {
	TableRefBase
	Catalog, Schema, Table string
	// ColumnAliases renames the columns: FROM t AS x (a, b).
	ColumnAliases []string
	// At is the AT (VERSION => ...) clause; nil when none.
	At *AtClause
}

// AtClause is a time travel clause: AT (Unit => Expr).
type AtClause struct {
	Unit string
	Expr Expr
}

// Join is Left joined with Right. A comma in FROM is a CROSS join.
type Join struct {
	TableRefBase
	Left, Right TableRef
	// Condition is the ON condition; nil for USING, NATURAL, CROSS and
	// POSITIONAL joins.
	Condition Expr
	Type      JoinType
	Ref       JoinRefType
	Using     []string
	// DelimFlipped and DuplicateEliminated are planner fields DuckDB
	// serializes with every join; the parser leaves them false and empty.
	DelimFlipped        bool
	DuplicateEliminated []Expr
}

// SubqueryRef is a subquery in FROM.
type SubqueryRef struct {
	TableRefBase
	Query         *SelectStatement
	ColumnAliases []string
}

// TableFunction is a table function in FROM: range(10), read_csv(...), and
// a file name written as a table ('data.csv').
type TableFunction struct {
	TableRefBase
	Function      Expr
	ColumnAliases []string
	Ordinality    Ordinality
}

// EmptyRef is the FROM of a SELECT without one.
type EmptyRef struct {
	TableRefBase
}

// ValuesRef is a VALUES list (DuckDB's EXPRESSION_LIST).
type ValuesRef struct {
	TableRefBase
	Names  []string
	Types  []LogicalType
	Values [][]Expr
}

// PivotRef is PIVOT or UNPIVOT in FROM.
type PivotRef struct {
	TableRefBase
	Source        TableRef
	Aggregates    []Expr
	UnpivotNames  []string
	Pivots        []PivotColumn
	Groups        []string
	ColumnAliases []string
	IncludeNulls  bool
}

// PivotColumn is one FOR ... IN (...) of a PivotRef.
type PivotColumn struct {
	Exprs        []Expr
	UnpivotNames []string
	Entries      []PivotEntry
	// Enum names an ENUM type holding the pivot values ("" when none).
	Enum string
}

// PivotEntry is one value list of a PivotColumn's IN (...), or a star
// expression in place of the values.
type PivotEntry struct {
	Values []Value
	Star   Expr
	Alias  string
}

// ShowRef is SHOW, DESCRIBE or SUMMARIZE in FROM.
type ShowRef struct {
	TableRefBase
	Table string
	// Query is the query described; nil when a table is.
	Query           QueryNode
	Type            ShowType
	Catalog, Schema string
}

func (*BaseTable) node()     {}
func (*Join) node()          {}
func (*SubqueryRef) node()   {}
func (*TableFunction) node() {}
func (*EmptyRef) node()      {}
func (*ValuesRef) node()     {}
func (*PivotRef) node()      {}
func (*ShowRef) node()       {}

var (
	_ TableRef = (*BaseTable)(nil)
	_ TableRef = (*Join)(nil)
	_ TableRef = (*SubqueryRef)(nil)
	_ TableRef = (*TableFunction)(nil)
	_ TableRef = (*EmptyRef)(nil)
	_ TableRef = (*ValuesRef)(nil)
	_ TableRef = (*PivotRef)(nil)
	_ TableRef = (*ShowRef)(nil)
)
