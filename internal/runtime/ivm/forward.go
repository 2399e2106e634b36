package ivm

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Forward returns the change of a query of one table's rows that picks the
// table's columns cols: the changed rows, projected, a row deleted and
// inserted again netted out, as records of schema (the query's own).
func Forward(mem memory.Allocator, c *TableChanges, cols []string, schema *arrow.Schema) (Diff, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	n := newNetter()
	err := addChanges(c, cols, func(r Row, w int64) error {
		n.add(r, w)
		return nil
	})
	if err != nil {
		return Diff{}, err
	}
	q := &Query{plan: Plan{Schema: schema}, mem: mem, res: &result{out: Output{Project: identity(len(cols))}}}
	return q.diff(n.rows())
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
