package ivm

// An Arrangement holds a multiset of rows indexed by the values of some of
// their columns (the key): one side of a join. Rows whose key has a NULL join
// nothing but still count (a LEFT JOIN keeps them).
type Arrangement struct {
	key     []int
	buckets map[string]*bucket
	nulls   *bucket // rows with a NULL key value
	rows    int64
	buf     []byte
}

type bucket struct {
	entries map[string]*entry // by the whole row
}

type entry struct {
	row Row
	n   int64
}

// NewArrangement returns an empty arrangement keyed by the columns key.
func NewArrangement(key []int) *Arrangement {
	return &Arrangement{key: key, buckets: map[string]*bucket{}, nulls: &bucket{entries: map[string]*entry{}}}
}

// Len is the number of rows held, counting duplicates.
func (a *Arrangement) Len() int64 { return a.rows }

// keyOf returns the join key of a row, and false when it has a NULL.
func (a *Arrangement) keyOf(row Row) (string, bool) {
	if hasNull(row, a.key) {
		return "", false
	}
	a.buf = appendRowKey(a.buf[:0], row, a.key)
	return string(a.buf), true
}

// Add adds n copies of row (or removes -n). Removing a row that is not held
// is an error: the arrangement no longer matches its source.
func (a *Arrangement) Add(row Row, n int64) error {
	b := a.nulls
	if k, ok := a.keyOf(row); ok {
		b = a.buckets[k]
		if b == nil {
			if n < 0 {
				return errMissing(row)
			}
			b = &bucket{entries: map[string]*entry{}}
			a.buckets[k] = b
		}
		defer func() {
			if len(b.entries) == 0 {
				delete(a.buckets, k)
			}
		}()
	}
	a.buf = appendRowKey(a.buf[:0], row, nil)
	e := b.entries[string(a.buf)]
	switch {
	case e == nil && n < 0:
		return errMissing(row)
	case e == nil:
		b.entries[string(a.buf)] = &entry{row: row, n: n}
	case e.n+n < 0:
		return errMissing(row)
	case e.n+n == 0:
		delete(b.entries, string(a.buf))
	default:
		e.n += n
	}
	a.rows += n
	return nil
}

// Lookup calls fn with every row whose key equals the values of probe at cols
// (none when one of them is NULL), and how many times it is held.
func (a *Arrangement) Lookup(probe Row, cols []int, fn func(row Row, n int64)) {
	if hasNull(probe, cols) {
		return
	}
	a.buf = appendRowKey(a.buf[:0], probe, cols)
	if b := a.buckets[string(a.buf)]; b != nil {
		for _, e := range b.entries {
			fn(e.row, e.n)
		}
	}
}

// each calls fn with every row held, by bucket.
func (a *Arrangement) each(fn func(row Row, n int64)) {
	for _, b := range a.buckets {
		for _, e := range b.entries {
			fn(e.row, e.n)
		}
	}
	for _, e := range a.nulls.entries {
		fn(e.row, e.n)
	}
}
