package ivm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TableChanges is what one transaction did to a table: rows deleted and
// inserted, in the order it did so (whole rows, columns found by name), or
// the table replaced wholesale (Reset: a full refresh, a truncation).
type TableChanges struct {
	Reset bool
	Parts []Part
}

// Part is one step of a table's changes: the rows of Rec, deleted (Weight -1)
// or inserted (+1).
type Part struct {
	Rec    arrow.RecordBatch
	Weight int64
}

// Add appends rows deleted (w = -1) or inserted (w = 1), retaining them.
func (c *TableChanges) Add(w int64, recs ...arrow.RecordBatch) {
	for _, r := range recs {
		r.Retain()
		c.Parts = append(c.Parts, Part{Rec: r, Weight: w})
	}
}

// Release releases the records.
func (c *TableChanges) Release() {
	for _, p := range c.Parts {
		p.Rec.Release()
	}
	c.Parts = nil
}

// Changes are a transaction's changes by table name (lower case).
type Changes map[string]*TableChanges

// Diff is a batch's change of the result: rows that left, rows that entered
// (nil when none). The caller releases the records.
type Diff struct {
	Delete, Insert arrow.RecordBatch
}

// Query is one query maintained in memory.
type Query struct {
	plan    Plan
	mem     memory.Allocator
	blocks  []*Block
	lookups []*Lookup // per block; nil for blocks fed by the store
	body    *Body
	res     *result
}

// New returns the query of plan, empty until Load.
func New(plan Plan, mem memory.Allocator) *Query {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Query{plan: plan, mem: mem}
}

// Load computes the whole state from the store.
func (q *Query) Load(src Source) error {
	q.blocks = make([]*Block, len(q.plan.Blocks))
	q.lookups = make([]*Lookup, len(q.plan.Blocks))
	for i, spec := range q.plan.Blocks {
		q.blocks[i] = NewBlock(spec.Plan)
		if spec.Lookup != nil {
			l, err := q.loadLookup(src, spec.Lookup)
			if err != nil {
				return err
			}
			q.lookups[i] = l
		}
		if err := q.loadBlock(src, i); err != nil {
			return err
		}
		q.blocks[i].Flush()
	}
	left, err := q.loadSide(src, &q.plan.Body.Left)
	if err != nil {
		return err
	}
	q.body = &Body{Left: left, LeftJoin: q.plan.Body.LeftJoin}
	if r := q.plan.Body.Right; r != nil {
		if q.body.Right, err = q.loadSide(src, r); err != nil {
			return err
		}
		q.body.RightWidth, q.body.RightKey = r.Width, r.Key
	}
	q.res = newResult(q.plan.Output)
	q.res.fill(q.body.Each)
	return nil
}

func (q *Query) loadLookup(src Source, spec *LookupSpec) (*Lookup, error) {
	l := &Lookup{FactWidth: len(spec.FactCols), Contrib: spec.Contrib}
	for _, d := range spec.Dims {
		a := NewArrangement(d.Key)
		if err := scanRows(src, d.Load, len(d.Cols), func(r Row) error { return a.Add(r, 1) }); err != nil {
			return nil, fmt.Errorf("load %s: %w", d.Table, err)
		}
		l.Dims = append(l.Dims, &Dim{Table: d.Table, Rows: a, Width: len(d.Cols), Probe: d.Probe})
	}
	return l, nil
}

// loadBlock computes block i's state from the store.
func (q *Query) loadBlock(src Source, i int) error {
	b, spec := q.blocks[i], q.plan.Blocks[i]
	b.Clear()
	err := scanRows(src, spec.State, spec.Plan.StateWidth(), b.LoadState)
	if err != nil {
		return fmt.Errorf("compute aggregate state: %w", err)
	}
	return nil
}

func (q *Query) loadSide(src Source, s *SideSpec) (*Arrangement, error) {
	a := NewArrangement(s.Key)
	if s.Block >= 0 {
		var err error
		q.blocks[s.Block].Each(func(r Row) {
			if err == nil {
				err = a.Add(r, 1)
			}
		})
		return a, err
	}
	if err := scanRows(src, s.Load, len(s.Cols), func(r Row) error { return a.Add(r, 1) }); err != nil {
		return nil, fmt.Errorf("load %s: %w", s.Table, err)
	}
	return a, nil
}

// scanRows runs query and calls fn with each row of its width columns.
func scanRows(src Source, query string, width int, fn func(Row) error) error {
	recs, err := src.Scan(query)
	if err != nil {
		return err
	}
	defer release(recs)
	cols := make([]int, width)
	for i := range cols {
		cols[i] = i
	}
	for _, rec := range recs {
		if int(rec.NumCols()) != width {
			return fmt.Errorf("query gave %d columns, want %d", rec.NumCols(), width)
		}
		rows, err := Rows(rec, cols)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// Apply brings the result up to date with a transaction's changes and
// returns the rows that left and entered it.
func (q *Query) Apply(src Source, ch Changes) (Diff, error) {
	reads := false
	for _, t := range q.plan.Tables() {
		if c := ch[t]; c != nil {
			reads = true
			if c.Reset {
				return q.rebuild(src)
			}
		}
	}
	if !reads {
		return Diff{}, nil
	}
	blockDeltas := make([][]Weighted, len(q.blocks))
	for i := range q.blocks {
		d, err := q.applyBlock(src, ch, i)
		if err != nil {
			return Diff{}, err
		}
		blockDeltas[i] = d
	}
	left, err := q.sideChanges(&q.plan.Body.Left, ch, blockDeltas)
	if err != nil {
		return Diff{}, err
	}
	var right []Weighted
	if r := q.plan.Body.Right; r != nil {
		if right, err = q.sideChanges(r, ch, blockDeltas); err != nil {
			return Diff{}, err
		}
	}
	body, err := q.body.Apply(left, right)
	if err != nil {
		return Diff{}, err
	}
	if q.res.all != nil {
		for _, w := range body {
			if _, err := q.res.add(w.Row, w.N); err != nil {
				return Diff{}, err
			}
		}
		return q.diff(body)
	}
	before := q.res.rows()
	short := false
	for _, w := range body {
		s, err := q.res.add(w.Row, w.N)
		if err != nil {
			return Diff{}, err
		}
		short = short || s
	}
	if short {
		q.res.fill(q.body.Each)
	}
	return q.diff(difference(before, q.res.rows()))
}

// rebuild computes everything again from the store (a table was replaced
// wholesale) and returns the difference from the result before.
func (q *Query) rebuild(src Source) (Diff, error) {
	before := q.res.rows()
	if err := q.Load(src); err != nil {
		return Diff{}, err
	}
	return q.diff(difference(before, q.res.rows()))
}

// applyBlock applies a transaction's changes to block i and returns its
// output rows that left and entered.
func (q *Query) applyBlock(src Source, ch Changes, i int) ([]Weighted, error) {
	b, spec := q.blocks[i], q.plan.Blocks[i]
	var changed []string
	for _, t := range spec.Tables {
		if ch[t] != nil {
			changed = append(changed, t)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	recompute := false
	if l := q.lookups[i]; l != nil {
		for j, d := range l.Dims {
			c := ch[d.Table]
			if c == nil {
				continue
			}
			recompute = true
			if err := addChanges(c, spec.Lookup.Dims[j].Cols, d.Rows.Add); err != nil {
				return nil, fmt.Errorf("dimension %s: %w", d.Table, err)
			}
		}
		if c := ch[spec.Lookup.Fact]; c != nil && !recompute {
			err := addChanges(c, spec.Lookup.FactCols, func(r Row, w int64) error {
				return l.Contribute(r, w, b.Add)
			})
			if err != nil {
				return nil, err
			}
		}
	} else if len(changed) > 1 {
		recompute = true
	} else {
		var contrib []Weighted
		err := scanRows(src, spec.Contrib[changed[0]], spec.Plan.Groups+len(spec.Plan.Aggs)+1, func(r Row) error {
			contrib = append(contrib, Weighted{Row: r[:len(r)-1], N: asWeight(r[len(r)-1])})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("contributions of %s: %w", changed[0], err)
		}
		// Rows that entered first, as addChanges does.
		sort.SliceStable(contrib, func(i, j int) bool { return contrib[i].N > contrib[j].N })
		for _, c := range contrib {
			if err := b.Add(c.Row, c.N); err != nil {
				return nil, err
			}
		}
	}
	if recompute {
		if err := q.loadBlock(src, i); err != nil {
			return nil, err
		}
	}
	if err := q.refreshStale(src, i); err != nil {
		return nil, err
	}
	del, ins := b.Flush()
	return weighted(del, ins), nil
}

// refreshStale computes again, from the store, the state of the groups of
// block i whose MIN or MAX lost its extreme value.
func (q *Query) refreshStale(src Source, i int) error {
	b, spec := q.blocks[i], q.plan.Blocks[i]
	stale := b.Stale()
	if len(stale) == 0 {
		return nil
	}
	if spec.GroupState == nil {
		return q.loadBlock(src, i)
	}
	query, err := spec.GroupState(stale)
	if err != nil {
		return err
	}
	got := map[string]bool{}
	err = scanRows(src, query, spec.Plan.StateWidth(), func(r Row) error {
		got[string(appendRowKey(nil, r[:spec.Plan.Groups], nil))] = true
		return b.LoadState(r)
	})
	if err != nil {
		return fmt.Errorf("compute MIN or MAX again: %w", err)
	}
	for _, g := range stale {
		if !got[string(appendRowKey(nil, g, nil))] {
			if err := b.LoadState(append(append(Row(nil), g...), make(Row, spec.Plan.StateWidth()-len(g))...)); err != nil {
				return err
			}
		}
	}
	return nil
}

func asWeight(v Value) int64 {
	n, err := asInt(v, -1<<62, 1<<62)
	if err != nil {
		panic(fmt.Sprintf("ivm: weight %v: %v", v, err))
	}
	return n
}

// weighted lists a block's output rows that entered (+1) and left (-1), in
// that order, as addChanges orders a table's.
func weighted(del, ins []Row) []Weighted {
	out := make([]Weighted, 0, len(del)+len(ins))
	for _, r := range ins {
		out = append(out, Weighted{Row: r, N: 1})
	}
	for _, r := range del {
		out = append(out, Weighted{Row: r, N: -1})
	}
	return out
}

// sideChanges returns a body side's rows that left and entered.
func (q *Query) sideChanges(s *SideSpec, ch Changes, blockDeltas [][]Weighted) ([]Weighted, error) {
	if s.Block >= 0 {
		return blockDeltas[s.Block], nil
	}
	c := ch[s.Table]
	if c == nil {
		return nil, nil
	}
	var out []Weighted
	err := addChanges(c, s.Cols, func(r Row, w int64) error {
		out = append(out, Weighted{Row: r, N: w})
		return nil
	})
	return out, err
}

// addChanges calls fn with the columns cols of each changed row, weighted +1
// when inserted and -1 when deleted: every inserted row first, then every
// deleted one. A row a transaction inserted and deleted again is then held
// until it leaves, so no count goes below zero on the way (a deleted row
// existed, before the transaction or inserted by it).
func addChanges(c *TableChanges, cols []string, fn func(Row, int64) error) error {
	for _, w := range []int64{1, -1} {
		if err := addParts(c, cols, w, fn); err != nil {
			return err
		}
	}
	return nil
}

func addParts(c *TableChanges, cols []string, w int64, fn func(Row, int64) error) error {
	for _, part := range c.Parts {
		if part.Weight != w {
			continue
		}
		idx, err := columnIndexes(part.Rec.Schema(), cols)
		if err != nil {
			return err
		}
		rows, err := Rows(part.Rec, idx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r, part.Weight); err != nil {
				return err
			}
		}
	}
	return nil
}

// columnIndexes finds columns by name (exactly, else ignoring case).
func columnIndexes(s *arrow.Schema, cols []string) ([]int, error) {
	out := make([]int, len(cols))
	for i, c := range cols {
		idx := s.FieldIndices(c)
		if len(idx) == 0 {
			for j, f := range s.Fields() {
				if strings.EqualFold(f.Name, c) {
					idx = []int{j}
					break
				}
			}
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("%w: changed rows lack column %q", ErrDiverged, c)
		}
		out[i] = idx[0]
	}
	return out, nil
}

// difference returns the rows of before missing from after (-1 each) and
// those of after missing from before (+1 each).
func difference(before, after []Row) []Weighted {
	n := newNetter()
	for _, r := range before {
		n.add(r, -1)
	}
	for _, r := range after {
		n.add(r, 1)
	}
	return n.rows()
}

// diff projects the body rows that left and entered to output rows, nets
// them, and builds the records.
func (q *Query) diff(body []Weighted) (Diff, error) {
	n := newNetter()
	for _, w := range body {
		n.add(q.res.project(w.Row), w.N)
	}
	var del, ins []Row
	for _, w := range n.rows() {
		for range abs(w.N) {
			if w.N < 0 {
				del = append(del, w.Row)
			} else {
				ins = append(ins, w.Row)
			}
		}
	}
	var d Diff
	var err error
	if len(del) > 0 {
		if d.Delete, err = build(q.mem, q.plan.Schema, del); err != nil {
			return Diff{}, err
		}
	}
	if len(ins) > 0 {
		if d.Insert, err = build(q.mem, q.plan.Schema, ins); err != nil {
			if d.Delete != nil {
				d.Delete.Release()
			}
			return Diff{}, err
		}
	}
	return d, nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Rows returns the result as one record of the query's schema, in the
// query's order when it has an ORDER BY.
func (q *Query) Rows() (arrow.RecordBatch, error) {
	body := q.res.rows()
	if q.res.all != nil && len(q.plan.Output.Order) > 0 {
		sort.SliceStable(body, func(i, j int) bool { return q.res.less(body[i], body[j]) })
	}
	out := make([]Row, len(body))
	for i, r := range body {
		out[i] = q.res.project(r)
	}
	return build(q.mem, q.plan.Schema, out)
}
