package ranking

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// badAnswerError is an answer that is not a ranking.
type badAnswerError struct{ msg string }

func (e *badAnswerError) Error() string { return e.msg }

func badAnswer(format string, args ...any) error {
	return &badAnswerError{msg: fmt.Sprintf(format, args...)}
}

// appendRows appends the rows of rec, whose columns "name" (a string) and "count"
// (any integer, a decimal with an integral value, or a float with one) are found by
// name. A NULL count is 0: the product never sold.
func appendRows(rows []Row, rec arrow.RecordBatch) ([]Row, error) {
	names, counts, err := columns(rec)
	if err != nil {
		return rows, err
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		if names.IsNull(i) {
			return rows, badAnswer("row %d has a NULL name", len(rows)+1)
		}
		n, err := countAt(counts, i)
		if err != nil {
			return rows, badAnswer("row %d: %v", len(rows)+1, err)
		}
		rows = append(rows, Row{Name: names.ValueStr(i), Count: n})
	}
	return rows, nil
}

func columns(rec arrow.RecordBatch) (names, counts arrow.Array, err error) {
	schema := rec.Schema()
	nameIdx, countIdx := -1, -1
	for i, f := range schema.Fields() {
		switch strings.ToLower(f.Name) {
		case "name":
			nameIdx = i
		case "count":
			countIdx = i
		}
	}
	if nameIdx < 0 || countIdx < 0 {
		return nil, nil, badAnswer("want columns name and count, got %s", schema)
	}
	switch schema.Field(nameIdx).Type.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
	default:
		return nil, nil, badAnswer("column name has type %s, want a string", schema.Field(nameIdx).Type)
	}
	return rec.Column(nameIdx), rec.Column(countIdx), nil
}

// countAt reads a count of any numeric type as an int64.
func countAt(col arrow.Array, i int) (int64, error) {
	if col.IsNull(i) {
		return 0, nil
	}
	switch c := col.(type) {
	case *array.Int64:
		return c.Value(i), nil
	case *array.Int32:
		return int64(c.Value(i)), nil
	case *array.Int16:
		return int64(c.Value(i)), nil
	case *array.Int8:
		return int64(c.Value(i)), nil
	case *array.Uint64:
		if c.Value(i) > math.MaxInt64 {
			return 0, fmt.Errorf("count %d overflows int64", c.Value(i))
		}
		return int64(c.Value(i)), nil
	case *array.Uint32:
		return int64(c.Value(i)), nil
	case *array.Uint16:
		return int64(c.Value(i)), nil
	case *array.Uint8:
		return int64(c.Value(i)), nil
	case *array.Float64:
		return integral(c.Value(i))
	case *array.Float32:
		return integral(float64(c.Value(i)))
	case *array.Decimal128:
		return decimalInt(c.Value(i).BigInt(), c.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return decimalInt(c.Value(i).BigInt(), c.DataType().(*arrow.Decimal256Type).Scale)
	default:
		return 0, fmt.Errorf("column count has type %s, want an integer or decimal", col.DataType())
	}
}

func integral(f float64) (int64, error) {
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, fmt.Errorf("count %v is not an integer", f)
	}
	return int64(f), nil
}

// decimalInt returns the integer value of unscaled / 10^scale.
func decimalInt(unscaled *big.Int, scale int32) (int64, error) {
	v := unscaled
	if scale != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil)
		if scale > 0 {
			q, r := new(big.Int).QuoRem(v, p, new(big.Int))
			if r.Sign() != 0 {
				return 0, fmt.Errorf("count %s is not an integer", new(big.Rat).SetFrac(v, p).FloatString(int(scale)))
			}
			v = q
		} else {
			v = new(big.Int).Mul(v, p)
		}
	}
	if !v.IsInt64() {
		return 0, fmt.Errorf("count %s overflows int64", v)
	}
	return v.Int64(), nil
}

func abs(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}
