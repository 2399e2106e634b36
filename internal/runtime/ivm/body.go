package ivm

// Body is the relation the output is taken from: one side, or two sides
// joined on equal key columns. A body row is the left side's columns followed
// by the right side's; a LEFT JOIN gives a left row that matches nothing NULLs
// for the right side's columns.
type Body struct {
	Left, Right *Arrangement // Right is nil when nothing is joined
	RightWidth  int
	LeftJoin    bool
	// RightKey holds, for the left side's key columns in order, the positions
	// of the right side's columns they are compared with (the right
	// arrangement is keyed by them).
	RightKey []int
}

// Weighted is a row with a multiplicity: positive rows enter, negative leave.
type Weighted struct {
	Row Row
	N   int64
}

// Apply applies the changes of both sides and returns the body rows that
// left (negative) and entered (positive), netted. The rows of each join key
// touched are computed before and after, nothing else.
func (b *Body) Apply(left, right []Weighted) ([]Weighted, error) {
	if b.Right == nil {
		for _, w := range left {
			if err := b.Left.Add(w.Row, w.N); err != nil {
				return nil, err
			}
		}
		return left, nil
	}
	net := newNetter()
	keys := map[string]Row{} // join key -> a probe row of the left side's layout
	for _, w := range left {
		if k, ok := b.Left.keyOf(w.Row); ok {
			keys[k] = w.Row
		} else if b.LeftJoin {
			net.add(b.padded(w.Row), w.N)
		}
	}
	for _, w := range right {
		if k, ok := b.Right.keyOf(w.Row); ok {
			if _, seen := keys[k]; !seen {
				keys[k] = b.probeFromRight(w.Row)
			}
		}
	}
	for _, probe := range keys {
		b.joinKey(probe, -1, net)
	}
	for _, w := range left {
		if err := b.Left.Add(w.Row, w.N); err != nil {
			return nil, err
		}
	}
	for _, w := range right {
		if err := b.Right.Add(w.Row, w.N); err != nil {
			return nil, err
		}
	}
	for _, probe := range keys {
		b.joinKey(probe, 1, net)
	}
	return net.rows(), nil
}

// probeFromRight lays out a right row's key values where the left side keeps
// its key columns, for joinKey.
func (b *Body) probeFromRight(r Row) Row {
	p := make(Row, maxOf(b.Left.key)+1)
	for i, c := range b.Left.key {
		p[c] = r[b.RightKey[i]]
	}
	return p
}

func maxOf(cols []int) int {
	m := -1
	for _, c := range cols {
		m = max(m, c)
	}
	return m
}

// joinKey adds the body rows of the join key of probe (a row of the left
// side's layout), each sign times.
func (b *Body) joinKey(probe Row, sign int64, net *netter) {
	b.Left.Lookup(probe, b.Left.key, func(l Row, ln int64) {
		matched := false
		b.Right.Lookup(l, b.Left.key, func(r Row, rn int64) {
			matched = true
			net.add(concat(l, r), sign*ln*rn)
		})
		if !matched && b.LeftJoin {
			net.add(b.padded(l), sign*ln)
		}
	})
}

func (b *Body) padded(l Row) Row {
	return append(append(make(Row, 0, len(l)+b.RightWidth), l...), make(Row, b.RightWidth)...)
}

func concat(l, r Row) Row {
	return append(append(make(Row, 0, len(l)+len(r)), l...), r...)
}

// Each calls fn with every body row and how many times it is held.
func (b *Body) Each(fn func(Row, int64)) {
	if b.Right == nil {
		b.Left.each(fn)
		return
	}
	b.Left.each(func(l Row, ln int64) {
		matched := false
		if !hasNull(l, b.Left.key) {
			b.Right.Lookup(l, b.Left.key, func(r Row, rn int64) {
				matched = true
				fn(concat(l, r), ln*rn)
			})
		}
		if !matched && b.LeftJoin {
			fn(b.padded(l), ln)
		}
	})
}

// netter sums the multiplicities of equal rows.
type netter struct {
	m   map[string]*entry
	buf []byte
}

func newNetter() *netter { return &netter{m: map[string]*entry{}} }

func (n *netter) add(r Row, w int64) {
	if w == 0 {
		return
	}
	n.buf = appendRowKey(n.buf[:0], r, nil)
	if e := n.m[string(n.buf)]; e != nil {
		e.n += w
		return
	}
	n.m[string(n.buf)] = &entry{row: r, n: w}
}

func (n *netter) rows() []Weighted {
	out := make([]Weighted, 0, len(n.m))
	for _, e := range n.m {
		if e.n != 0 {
			out = append(out, Weighted{Row: e.row, N: e.n})
		}
	}
	return out
}
