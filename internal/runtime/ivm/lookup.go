package ivm

// Lookup computes a block's contribution rows from a changed row of its fact
// table, joined in memory to its dimension tables. A combined row is the fact
// table's columns followed by each dimension's, in order; Contrib picks the
// contribution row's values (group values, then aggregate arguments) from it.
type Lookup struct {
	FactWidth int
	Dims      []*Dim
	Contrib   []int
}

// Dim is one dimension table of a Lookup: its rows (the columns the block
// reads) arranged by the columns it is joined on, and where the values they
// must equal are in the combined row built so far.
type Dim struct {
	Table string
	Rows  *Arrangement
	Width int
	Probe []int
}

// Contribute calls emit with each contribution of fact row f, weighted w
// times the number of times each dimension row it joins is held. A row that
// joins nothing (an inner join) contributes nothing.
func (l *Lookup) Contribute(f Row, w int64, emit func(Row, int64) error) error {
	combined := make(Row, l.FactWidth, l.width())
	copy(combined, f)
	return l.join(combined, 0, w, emit)
}

func (l *Lookup) width() int {
	n := l.FactWidth
	for _, d := range l.Dims {
		n += d.Width
	}
	return n
}

func (l *Lookup) join(combined Row, i int, w int64, emit func(Row, int64) error) error {
	if i == len(l.Dims) {
		out := make(Row, len(l.Contrib))
		for j, c := range l.Contrib {
			if c >= 0 { // -1: COUNT(*)'s argument, never read
				out[j] = combined[c]
			}
		}
		return emit(out, w)
	}
	d := l.Dims[i]
	var err error
	d.Rows.Lookup(combined, d.Probe, func(row Row, n int64) {
		if err == nil {
			err = l.join(append(combined, row...), i+1, w*n, emit)
		}
	})
	return err
}
