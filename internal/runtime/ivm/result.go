package ivm

import (
	"bytes"
	"slices"
	"sort"
)

// SortKey is one ORDER BY term over a body column.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Output says how the result is taken from the body: ordered by Order (body
// columns), the first Limit rows after Offset (Limit < 0: all), projected to
// the body columns Project.
type Output struct {
	Project []int
	Order   []SortKey
	Limit   int64
	Offset  int64
	// Buffer is how many rows past the limit a limited result keeps in order,
	// so that rows leaving the first ones rarely send it back to the body
	// (DefaultBuffer when zero).
	Buffer int64
}

// DefaultBuffer is Output.Buffer's default.
const DefaultBuffer = 64

// result is the query's result as body rows: all of them (no LIMIT), or the
// first Offset+Limit+limitBuffer in order.
type result struct {
	out    Output
	all    map[string]*entry // without a LIMIT: the body's rows
	top    []entry           // with a LIMIT: the first rows, in order
	whole  bool              // top holds every body row
	keyBuf []byte
}

func newResult(out Output) *result {
	r := &result{out: out}
	if out.Limit < 0 {
		r.all = map[string]*entry{}
	}
	return r
}

// less orders two body rows by the ORDER BY, then by their values, so that
// equal rows sit together and every order is total.
func (r *result) less(a, b Row) bool {
	if c := r.cmp(a, b); c != 0 {
		return c < 0
	}
	return bytes.Compare(appendRowKey(nil, a, nil), appendRowKey(nil, b, nil)) < 0
}

func (r *result) cmp(a, b Row) int {
	for _, k := range r.out.Order {
		x, y := a[k.Col], b[k.Col]
		var c int
		switch {
		case x == nil && y == nil:
			continue
		case x == nil:
			c = 1
			if k.NullsFirst {
				c = -1
			}
			return c
		case y == nil:
			c = -1
			if k.NullsFirst {
				c = 1
			}
			return c
		default:
			c = compare(x, y)
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// kept is how many rows in order a limited result keeps at most.
func (r *result) kept() int64 {
	buf := r.out.Buffer
	if buf <= 0 {
		buf = DefaultBuffer
	}
	return r.out.Offset + r.out.Limit + buf
}

// fill makes the result from every body row.
func (r *result) fill(each func(func(Row, int64))) {
	if r.all != nil {
		clear(r.all)
		each(func(row Row, n int64) { r.add(row, n) })
		return
	}
	var rows []entry
	var total int64
	each(func(row Row, n int64) {
		rows = append(rows, entry{row: row, n: n})
		total += n
	})
	sort.Slice(rows, func(i, j int) bool { return r.less(rows[i].row, rows[j].row) })
	r.top, r.whole = rows, true
	r.trim()
}

// trim drops rows past what a limited result keeps.
func (r *result) trim() {
	var n int64
	for i := range r.top {
		n += r.top[i].n
		if n > r.kept() {
			extra := n - r.kept()
			r.top[i].n -= extra
			if r.top[i].n == 0 {
				i--
			}
			r.top = r.top[:i+1]
			r.whole = false
			return
		}
	}
}

// add adds n copies of a body row (n < 0 removes them). A limited result
// ignores rows past the ones it keeps. It reports short when removals left a
// limited result with fewer rows than Offset+Limit while rows may exist past
// the ones it keeps: fill it again from the body.
func (r *result) add(row Row, n int64) (short bool, err error) {
	if r.all != nil {
		r.keyBuf = appendRowKey(r.keyBuf[:0], row, nil)
		e := r.all[string(r.keyBuf)]
		switch {
		case e == nil && n < 0:
			return false, errMissing(row)
		case e == nil:
			r.all[string(r.keyBuf)] = &entry{row: row, n: n}
		case e.n+n < 0:
			return false, errMissing(row)
		case e.n+n == 0:
			delete(r.all, string(r.keyBuf))
		default:
			e.n += n
		}
		return false, nil
	}
	i := sort.Search(len(r.top), func(i int) bool { return !r.less(r.top[i].row, row) })
	found := i < len(r.top) && equalRows(r.top[i].row, row)
	switch {
	case n > 0 && found:
		r.top[i].n += n
	case n > 0 && (i < len(r.top) || r.whole):
		r.top = slices.Insert(r.top, i, entry{row: row, n: n})
	case n > 0:
		return false, nil // past the rows kept
	case found && r.top[i].n+n < 0:
		return false, errMissing(row)
	case found:
		r.top[i].n += n
		if r.top[i].n == 0 {
			r.top = slices.Delete(r.top, i, i+1)
		}
	case r.whole || i < len(r.top):
		return false, errMissing(row)
	default:
		return false, nil // past the rows kept
	}
	r.trim()
	if r.whole {
		return false, nil
	}
	var held int64
	for _, e := range r.top {
		held += e.n
	}
	return held < r.out.Offset+r.out.Limit, nil
}

// rows returns the result's body rows, in order for a limited result.
func (r *result) rows() []Row {
	var out []Row
	if r.all != nil {
		for _, e := range r.all {
			for range e.n {
				out = append(out, e.row)
			}
		}
		return out
	}
	skip, left := r.out.Offset, r.out.Limit
	for _, e := range r.top {
		for range e.n {
			switch {
			case skip > 0:
				skip--
			case left > 0:
				out = append(out, e.row)
				left--
			}
		}
	}
	return out
}

// project returns a body row's output columns.
func (r *result) project(row Row) Row {
	out := make(Row, len(r.out.Project))
	for i, c := range r.out.Project {
		out[i] = row[c]
	}
	return out
}
