package ivm

import "fmt"

// AggPlan is one aggregate of a block.
type AggPlan struct {
	Fn AggFn
	// Arg is the position of the argument in a contribution row; unused for
	// COUNT(*).
	Arg int
	// Float says the argument is REAL or DOUBLE (its SUM is a DOUBLE); Scale is
	// its scale when it is a DECIMAL.
	Float bool
	Scale int32
}

// OutCol is one column of a block's output: group value Group, or the result
// of aggregate Agg (the other is -1).
type OutCol struct{ Group, Agg int }

// BlockPlan describes one aggregate block: contribution rows hold Groups group
// values followed by the aggregates' arguments.
type BlockPlan struct {
	Groups int
	Aggs   []AggPlan
	Out    []OutCol
	// Global: no GROUP BY, so the block has exactly one row, also over no rows.
	Global bool
}

// StateWidth is the number of columns of a state row (LoadState): the group
// values; per aggregate its sum and count (SUM, AVG), count (COUNT), nothing
// (COUNT(*)), or extreme and count (MIN, MAX); then the row count.
func (p *BlockPlan) StateWidth() int {
	n := p.Groups + 1
	for _, a := range p.Aggs {
		switch a.Fn {
		case Sum, Avg, Min, Max:
			n += 2
		case Count:
			n++
		}
	}
	return n
}

// Block maintains one aggregate block: an accumulator per group, and the
// block's output rows that a batch changed.
type Block struct {
	plan    BlockPlan
	groups  map[string]*group
	touched map[string]Row // groups changed in this batch -> output before (nil: none)
	buf     []byte
}

type group struct {
	vals Row
	rows int64
	accs []acc
}

// NewBlock returns a block with no rows.
func NewBlock(p BlockPlan) *Block {
	b := &Block{plan: p, groups: map[string]*group{}, touched: map[string]Row{}}
	if p.Global {
		b.groups[""] = b.newGroup(nil)
	}
	return b
}

func (b *Block) newGroup(vals Row) *group {
	g := &group{vals: vals, accs: make([]acc, len(b.plan.Aggs))}
	for i, a := range b.plan.Aggs {
		g.accs[i].scale, g.accs[i].float = a.Scale, a.Float
	}
	return g
}

// Len is the number of groups held.
func (b *Block) Len() int { return len(b.groups) }

// group returns the group of a contribution or state row, creating it, and
// notes the group's output before the batch changed it.
func (b *Block) group(row Row) (string, *group) {
	k := ""
	if !b.plan.Global {
		b.buf = appendRowKey(b.buf[:0], row[:b.plan.Groups], nil)
		k = string(b.buf)
	}
	g := b.groups[k]
	if _, seen := b.touched[k]; !seen {
		b.touched[k] = b.output(g)
	}
	if g == nil {
		g = b.newGroup(append(Row(nil), row[:b.plan.Groups]...))
		b.groups[k] = g
	}
	return k, g
}

// Add adds a contribution row w times (a negative w retracts it).
func (b *Block) Add(row Row, w int64) error {
	_, g := b.group(row)
	g.rows += w
	if g.rows < 0 {
		return fmt.Errorf("%w: a group has fewer rows than were removed", ErrDiverged)
	}
	for i, a := range b.plan.Aggs {
		var v Value
		if a.Fn != CountStar {
			v = row[a.Arg]
		}
		if err := g.accs[i].add(a.Fn, v, w); err != nil {
			return err
		}
	}
	return nil
}

// Stale returns the group values of the groups whose MIN or MAX must be
// computed again from the store (their extreme value left).
func (b *Block) Stale() []Row {
	var out []Row
	for k := range b.touched {
		g := b.groups[k]
		if g == nil {
			continue
		}
		for i := range g.accs {
			if g.accs[i].stale {
				out = append(out, g.vals)
				break
			}
		}
	}
	return out
}

// LoadState sets a group's accumulators from a state row (see StateWidth),
// as the store computed them; a row count of zero removes the group.
func (b *Block) LoadState(row Row) error {
	if len(row) != b.plan.StateWidth() {
		return fmt.Errorf("state row of %d columns, want %d", len(row), b.plan.StateWidth())
	}
	k, g := b.group(row)
	p := b.plan.Groups
	for i, a := range b.plan.Aggs {
		c := &g.accs[i]
		*c = acc{scale: a.Scale, float: a.Float}
		switch a.Fn {
		case Sum, Avg:
			if err := c.setSum(row[p]); err != nil {
				return err
			}
			c.n, p = asCount(row[p+1]), p+2
		case Count:
			c.n, p = asCount(row[p]), p+1
		case Min, Max:
			c.ext, c.n, p = row[p], asCount(row[p+1]), p+2
		}
	}
	g.rows = asCount(row[p])
	if g.rows == 0 && !b.plan.Global {
		delete(b.groups, k)
	}
	return nil
}

// asCount reads a count the store computed (NULL: none).
func asCount(v Value) int64 {
	if v == nil {
		return 0
	}
	n, err := asInt(v, 0, 1<<62)
	if err != nil {
		panic(fmt.Sprintf("ivm: count %v: %v", v, err))
	}
	return n
}

// Clear removes every group (the block is about to be loaded again); the
// next Flush reports what left and entered.
func (b *Block) Clear() {
	for k, g := range b.groups {
		if _, seen := b.touched[k]; !seen {
			b.touched[k] = b.output(g)
		}
	}
	b.groups = map[string]*group{}
	if b.plan.Global {
		b.groups[""] = b.newGroup(nil)
	}
}

// output is a group's output row; nil when the group holds no rows.
func (b *Block) output(g *group) Row {
	if g == nil || g.rows == 0 && !b.plan.Global {
		return nil
	}
	out := make(Row, len(b.plan.Out))
	for i, c := range b.plan.Out {
		switch {
		case c.Group >= 0:
			out[i] = g.vals[c.Group]
		case b.plan.Aggs[c.Agg].Fn == CountStar:
			out[i] = g.rows
		default:
			out[i] = g.accs[c.Agg].value(b.plan.Aggs[c.Agg].Fn)
		}
	}
	return out
}

// Flush ends a batch: it returns the output rows that left and entered, and
// drops the groups left without rows. Call it when Stale is empty.
func (b *Block) Flush() (del, ins []Row) {
	for k, before := range b.touched {
		g := b.groups[k]
		after := b.output(g)
		if g != nil && after == nil {
			delete(b.groups, k)
		}
		if before != nil && after != nil && equalRows(before, after) {
			continue
		}
		if before != nil {
			del = append(del, before)
		}
		if after != nil {
			ins = append(ins, after)
		}
	}
	clear(b.touched)
	return del, ins
}

// Each calls fn with every output row.
func (b *Block) Each(fn func(Row)) {
	for _, g := range b.groups {
		if r := b.output(g); r != nil {
			fn(r)
		}
	}
}
