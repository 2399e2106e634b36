package ivm

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestKeysGroupAsDuckDB: two values share a group key exactly when DuckDB
// puts them in one group.
func TestKeysGroupAsDuckDB(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b Value
		same bool
	}{
		{"NULL and NULL", nil, nil, true},
		{"0 and -0", 0.0, math.Copysign(0, -1), true},
		{"NaN and NaN", math.NaN(), -math.NaN(), true},
		{"1 and 1.0 of other kinds", int64(1), 1.0, false},
		{"equal decimals", Big{N: decimal128.FromI64(150), Scale: 2}, Big{N: decimal128.FromI64(150), Scale: 2}, true},
		{"text prefix", "ab", "abc", false},
		{"NULL and empty text", nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(appendKey(nil, c.a)) == string(appendKey(nil, c.b))
			if got != c.same {
				t.Fatalf("same key = %v, want %v", got, c.same)
			}
		})
	}
}

// TestCompareOrdersAsDuckDB: NaN above every number, text by bytes, decimals
// of different scales by value.
func TestCompareOrdersAsDuckDB(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b Value
		want int
	}{
		{"NaN above infinity", math.NaN(), math.Inf(1), 1},
		{"numbers", -1.5, 2.0, -1},
		{"text by bytes", "B", "a", -1},
		{"false before true", false, true, -1},
		{"decimals of other scales", Big{N: decimal128.FromI64(15), Scale: 1}, Big{N: decimal128.FromI64(150), Scale: 2}, 0},
		{"unsigned", uint64(math.MaxUint64), uint64(1), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := compare(c.a, c.b); got != c.want {
				t.Fatalf("compare = %d, want %d", got, c.want)
			}
		})
	}
}

// TestExtremeAfterRetractions: a MIN whose value left is unknown until the
// store computes it, unless a smaller or equal value arrives.
func TestExtremeAfterRetractions(t *testing.T) {
	var a acc
	for _, v := range []int64{5, 3, 8} {
		if err := a.add(Min, v, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.value(Min); got != int64(3) {
		t.Fatalf("min %v, want 3", got)
	}
	_ = a.add(Min, int64(8), -1)
	if a.stale {
		t.Fatal("retracting a value above the minimum made it unknown")
	}
	_ = a.add(Min, int64(3), -1)
	if !a.stale {
		t.Fatal("retracting the minimum left it known")
	}
	_ = a.add(Min, int64(3), 1)
	if a.stale || a.value(Min) != int64(3) {
		t.Fatalf("a value equal to the old minimum: stale %v, min %v, want known 3", a.stale, a.value(Min))
	}
	_ = a.add(Min, int64(3), -1)
	_ = a.add(Min, int64(5), -1)
	if a.stale || a.value(Min) != nil {
		t.Fatalf("no values left: stale %v, min %v, want known NULL", a.stale, a.value(Min))
	}
}

// TestLimitedResultFillsFromBody: a limited result keeps its first rows and a
// buffer in order, asks to be filled again when removals leave it short, and
// refuses to remove a row it must hold but does not.
func TestLimitedResultFillsFromBody(t *testing.T) {
	r := newResult(Output{Project: []int{0}, Order: []SortKey{{Col: 0}}, Limit: 2, Buffer: 1})
	body := map[int64]int64{}
	each := func(fn func(Row, int64)) {
		for v, n := range body {
			fn(Row{v}, n)
		}
	}
	for v := int64(1); v <= 6; v++ {
		body[v] = 1
	}
	r.fill(each)
	if got := r.rows(); len(got) != 2 || got[0][0] != int64(1) || got[1][0] != int64(2) {
		t.Fatalf("rows %v, want [1 2]", got)
	}
	if len(r.top) != 3 || r.whole {
		t.Fatalf("kept %d rows (whole %v), want 3 of 6", len(r.top), r.whole)
	}
	if short, err := r.add(Row{int64(9)}, 1); short || err != nil || len(r.top) != 3 {
		t.Fatalf("a row past the kept ones: short %v, err %v, kept %d", short, err, len(r.top))
	}
	for _, v := range []int64{1, 2} {
		delete(body, v)
		short, err := r.add(Row{v}, -1)
		if err != nil {
			t.Fatal(err)
		}
		if want := v == 2; short != want {
			t.Fatalf("after removing %d: short %v, want %v", v, short, want)
		}
	}
	r.fill(each)
	if got := r.rows(); got[0][0] != int64(3) || got[1][0] != int64(4) {
		t.Fatalf("rows after filling %v, want [3 4]", got)
	}
	if _, err := r.add(Row{int64(4)}, -2); !errors.Is(err, ErrDiverged) {
		t.Fatalf("removing a row twice: %v, want ErrDiverged", err)
	}
}

// TestLeftJoinBodyByKey: a left join's body rows follow both sides' changes,
// NULL keys included, computed per join key.
func TestLeftJoinBodyByKey(t *testing.T) {
	b := &Body{Left: NewArrangement([]int{0}), Right: NewArrangement([]int{0}), RightWidth: 2, LeftJoin: true, RightKey: []int{0}}
	apply := func(left, right []Weighted) map[string]int64 {
		t.Helper()
		d, err := b.Apply(left, right)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, w := range d {
			out[string(appendRowKey(nil, w.Row, nil))] += w.N
		}
		return out
	}
	k := func(vals ...Value) string { return string(appendRowKey(nil, Row(vals), nil)) }
	got := apply([]Weighted{{Row{int64(1), "a"}, 1}, {Row{nil, "n"}, 1}}, nil)
	if got[k(int64(1), "a", nil, nil)] != 1 || got[k(nil, "n", nil, nil)] != 1 || len(got) != 2 {
		t.Fatalf("left rows alone: %v", got)
	}
	got = apply(nil, []Weighted{{Row{int64(1), int64(10)}, 1}, {Row{nil, int64(0)}, 1}})
	if got[k(int64(1), "a", nil, nil)] != -1 || got[k(int64(1), "a", int64(1), int64(10))] != 1 || len(got) != 2 {
		t.Fatalf("a right row joins its key only (a NULL key joins nothing): %v", got)
	}
	if _, err := b.Apply(nil, []Weighted{{Row{int64(2), int64(0)}, -1}}); !errors.Is(err, ErrDiverged) {
		t.Fatalf("removing a right row not held: %v, want ErrDiverged", err)
	}
}
