package ivm

import "github.com/apache/arrow-go/v18/arrow"

// Source runs the store's queries that a Query needs: loading its state, and
// the parts of a batch that need SQL (contributions of blocks with
// expressions, MIN or MAX computed again). It reads the store as of the
// transaction being applied.
type Source interface {
	Scan(query string) ([]arrow.RecordBatch, error)
}

// Plan says how one query is maintained in memory. The planner builds it from
// the query's parse tree; the queries it holds are the store's SQL.
type Plan struct {
	Blocks []BlockSpec
	Body   BodySpec
	Output Output
	// Schema is the query's result schema: the output rows are built in it.
	Schema *arrow.Schema
}

// BlockSpec is one aggregate block and how it is fed.
type BlockSpec struct {
	Plan BlockPlan
	// Tables are the tables the block reads.
	Tables []string
	// State computes the block's state rows (BlockPlan.StateWidth columns)
	// from the tables; GroupState computes those of some groups only (for MIN
	// and MAX whose extreme left).
	State      string
	GroupState func(groups []Row) (string, error)
	// Lookup, when set, computes contributions in memory from the fact table's
	// changed rows. Otherwise Contrib gives, per table, the store's query of the
	// contribution rows of that table's captured changes, the weight last.
	Lookup  *LookupSpec
	Contrib map[string]string
}

// LookupSpec is a Lookup to build: the fact table and its dimension tables,
// each loaded from the store with the columns the block reads.
type LookupSpec struct {
	Fact     string
	FactCols []string
	Dims     []DimSpec
	Contrib  []int
}

// DimSpec is one dimension table of a LookupSpec.
type DimSpec struct {
	Table string
	Cols  []string
	Key   []int // positions in Cols
	Probe []int // positions in the combined row
	Load  string
}

// SideSpec is one side of the body: block Block's output rows, or the Cols
// of Table (loaded by Load), arranged by the columns Key.
type SideSpec struct {
	Block int // -1: a table
	Table string
	Cols  []string
	Load  string
	Key   []int
	Width int
}

// BodySpec is the body: Left, optionally joined to Right.
type BodySpec struct {
	Left     SideSpec
	Right    *SideSpec
	LeftJoin bool
}

// Tables lists every table the plan reads.
func (p *Plan) Tables() []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, b := range p.Blocks {
		for _, t := range b.Tables {
			add(t)
		}
	}
	for _, s := range []*SideSpec{&p.Body.Left, p.Body.Right} {
		if s != nil && s.Block < 0 {
			add(s.Table)
		}
	}
	return out
}

// Captured lists the tables whose changes the store must copy into its own
// tables for a block's Contrib queries.
func (p *Plan) Captured() []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range p.Blocks {
		for t := range b.Contrib {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
