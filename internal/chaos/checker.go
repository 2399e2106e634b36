package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Where rows are counted.
const (
	InPostgres    = "postgres"
	InAccelerated = "accelerated"
)

// Missing is an acknowledged order absent from one store.
type Missing struct {
	ID    int64
	Where string
}

// Doubled is an order id held more than once by one store.
type Doubled struct {
	ID     int64
	Where  string
	Copies int
}

// StateFindings is what CheckState found wrong with the stack's data.
type StateFindings struct {
	Lost       []Missing
	Doubled    []Doubled
	Mismatches []string // per-product tallies or rankings that differ from Postgres
}

// Converged reports whether every path holds the same data as Postgres.
func (f StateFindings) Converged() bool {
	return len(f.Lost) == 0 && len(f.Doubled) == 0 && len(f.Mismatches) == 0
}

// Summary is a one-line account, for logs and errors.
func (f StateFindings) Summary() string {
	var parts []string
	for _, m := range f.Lost {
		parts = append(parts, fmt.Sprintf("order %d missing in %s", m.ID, m.Where))
	}
	for _, d := range f.Doubled {
		parts = append(parts, fmt.Sprintf("order %d held %d times in %s", d.ID, d.Copies, d.Where))
	}
	parts = append(parts, f.Mismatches...)
	if len(parts) > 8 {
		parts = append(parts[:8], fmt.Sprintf("and %d more", len(parts)-8))
	}
	return strings.Join(parts, "; ")
}

// CheckState compares the stack's data with the acknowledged orders and with
// Postgres: every acknowledged order exactly once in Postgres and in the
// accelerated runtime, equal per-product tallies, and the three rankings equal
// to the top 5 that Postgres's tallies give.
func CheckState(acks []Ack, s State) StateFindings {
	var f StateFindings
	for _, a := range acks {
		for _, store := range []struct {
			name string
			ids  map[int64]int
		}{{InPostgres, s.PostgresIDs}, {InAccelerated, s.AcceleratedIDs}} {
			if store.ids[a.ID] == 0 {
				f.Lost = append(f.Lost, Missing{ID: a.ID, Where: store.name})
			}
		}
	}
	f.Doubled = append(doubled(InPostgres, s.PostgresIDs), doubled(InAccelerated, s.AcceleratedIDs)...)
	f.Mismatches = append(f.Mismatches, compareTallies(s.Postgres, s.Accelerated, s.Products)...)
	want := TopFive(s.Postgres, s.Products)
	for _, ep := range RankingEndpoints {
		got, ok := s.Rankings[ep]
		switch {
		case !ok:
			f.Mismatches = append(f.Mismatches, ep+" did not answer")
		case !slices.EqualFunc(got, want, rowEqual):
			f.Mismatches = append(f.Mismatches, fmt.Sprintf("%s shows %s, Postgres %s", ep, RowsString(got), RowsString(want)))
		}
	}
	return f
}

func doubled(where string, ids map[int64]int) []Doubled {
	var out []Doubled
	for id, n := range ids {
		if n > 1 {
			out = append(out, Doubled{ID: id, Where: where, Copies: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func compareTallies(pg, acc map[int64]Tally, names map[int64]string) []string {
	ids := map[int64]bool{}
	for id := range pg {
		ids[id] = true
	}
	for id := range acc {
		ids[id] = true
	}
	var out []string
	for _, id := range sortedKeys(ids) {
		if p, a := pg[id], acc[id]; p != a {
			out = append(out, fmt.Sprintf("product %d (%s): Postgres %d orders summing %d, accelerated %d summing %d",
				id, names[id], p.Orders, p.Sum, a.Orders, a.Sum))
		}
	}
	return out
}

// TopFive is the recipe's ranking computed from per-product tallies: every
// product with its total (null without orders), highest first, nulls last,
// ties by name, at most five.
func TopFive(tallies map[int64]Tally, names map[int64]string) []RankRow {
	rows := make([]RankRow, 0, len(names))
	for id, name := range names {
		r := RankRow{Name: name}
		if t, ok := tallies[id]; ok && t.Orders > 0 {
			sum := t.Sum
			r.Count = &sum
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case a.Count == nil || b.Count == nil:
			if (a.Count == nil) != (b.Count == nil) {
				return b.Count == nil
			}
		case *a.Count != *b.Count:
			return *a.Count > *b.Count
		}
		return a.Name < b.Name
	})
	if len(rows) > 5 {
		rows = rows[:5]
	}
	return rows
}

func rowEqual(a, b RankRow) bool {
	if a.Name != b.Name || (a.Count == nil) != (b.Count == nil) {
		return false
	}
	return a.Count == nil || *a.Count == *b.Count
}

// RowsString renders rows as "name:count,..." ("null" for no orders).
func RowsString(rows []RankRow) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		c := "null"
		if r.Count != nil {
			c = fmt.Sprint(*r.Count)
		}
		parts[i] = r.Name + ":" + c
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
