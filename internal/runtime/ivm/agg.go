package ivm

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AggFn is an aggregate function a block maintains.
type AggFn int

// The aggregates a block maintains.
const (
	Sum AggFn = iota
	Count
	CountStar
	Avg
	Min
	Max
)

func (f AggFn) String() string {
	return [...]string{"sum", "count", "count_star", "avg", "min", "max"}[f]
}

// acc is one aggregate's running state in one group.
type acc struct {
	n     int64          // non-NULL values (count, and for sum and avg)
	i     decimal128.Num // sum of exact values, at scale
	scale int32
	f     float64 // sum of floating values
	float bool    // the argument is floating
	ext   Value   // min or max; nil while no value is known
	stale bool    // the extreme value left: compute it again from the store
}

// add adds (w > 0) or retracts (w < 0) |w| occurrences of v.
func (a *acc) add(fn AggFn, v Value, w int64) error {
	if v == nil || fn == CountStar {
		return nil
	}
	switch fn {
	case Count:
		a.n += w
	case Sum, Avg:
		a.n += w
		if err := a.addSum(v, w); err != nil {
			return err
		}
		if a.n == 0 { // all gone: no rounding left behind
			a.f, a.i = 0, decimal128.Num{}
		}
	case Min, Max:
		a.n += w
		if a.n == 0 {
			a.ext, a.stale = nil, false
			return nil
		}
		a.addExtreme(fn, v, w)
	}
	return nil
}

func (a *acc) addSum(v Value, w int64) error {
	switch x := v.(type) {
	case int64:
		a.i = a.i.Add(decimal128.FromI64(x).Mul(decimal128.FromI64(w)))
	case uint64:
		a.i = a.i.Add(decimal128.FromU64(x).Mul(decimal128.FromI64(w)))
	case float64:
		a.float = true
		a.f += x * float64(w)
	case Big:
		n := x.N
		if x.Scale != a.scale {
			var err error
			if n, err = n.Rescale(x.Scale, a.scale); err != nil {
				return fmt.Errorf("%w: sum of DECIMALs of scales %d and %d", ErrOutOfRange, x.Scale, a.scale)
			}
		}
		a.i = a.i.Add(n.Mul(decimal128.FromI64(w)))
	default:
		return fmt.Errorf("%w: sum of %T", ErrUnsupportedType, v)
	}
	return nil
}

// addExtreme keeps the minimum or maximum of the values present. A value
// added that beats the extreme is the new one (even when the old one left:
// everything present is at least as far as the old extreme). Removing the
// extreme value itself makes it unknown until the store computes it again.
func (a *acc) addExtreme(fn AggFn, v Value, w int64) {
	better := func() bool {
		c := compare(v, a.ext)
		return fn == Min && c < 0 || fn == Max && c > 0
	}
	switch {
	case w > 0 && a.ext == nil && !a.stale:
		a.ext = v
	case w > 0 && a.ext != nil && (better() || a.stale && compare(v, a.ext) == 0):
		a.ext, a.stale = v, false
	case w < 0 && a.ext != nil && compare(v, a.ext) == 0:
		a.stale = true
	}
}

// value is the aggregate's result in a group of rows rows.
func (a *acc) value(fn AggFn) Value {
	switch fn {
	case Count:
		return a.n
	case Sum:
		if a.n == 0 {
			return nil
		}
		if a.float {
			return a.f
		}
		return Big{N: a.i, Scale: a.scale}
	case Avg:
		if a.n == 0 {
			return nil
		}
		if a.float {
			return a.f / float64(a.n)
		}
		return a.i.ToFloat64(a.scale) / float64(a.n)
	case Min, Max:
		return a.ext
	}
	panic("ivm: value of " + fn.String())
}

// setSum sets the running sum from a sum the store computed.
func (a *acc) setSum(v Value) error {
	switch x := v.(type) {
	case nil:
	case float64:
		a.f, a.float = x, true
	case int64:
		a.i = decimal128.FromI64(x)
	case Big:
		n, err := x.N.Rescale(x.Scale, a.scale)
		if err != nil {
			return fmt.Errorf("%w: sum at scale %d, want %d", ErrOutOfRange, x.Scale, a.scale)
		}
		a.i = n
	default:
		return fmt.Errorf("%w: sum of %T", ErrUnsupportedType, v)
	}
	return nil
}
