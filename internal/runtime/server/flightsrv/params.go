package flightsrv

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countParams counts the positional placeholders of a statement: each ? and the
// highest $n, outside string literals, quoted identifiers and comments.
func countParams(sql string) int {
	var qmarks, dollar int
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return max(qmarks, dollar)
			}
			i += j + 1
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return max(qmarks, dollar)
			}
			i += j
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return max(qmarks, dollar)
			}
			i += j + 3
		case c == '?':
			qmarks++
		case c == '$':
			n, j := 0, i+1
			for ; j < len(sql) && sql[j] >= '0' && sql[j] <= '9'; j++ {
				n = n*10 + int(sql[j]-'0')
			}
			dollar = max(dollar, n)
			i = j - 1
		}
	}
	return max(qmarks, dollar)
}

// argsOf converts the single row of a parameter batch into values DuckDB binds.
func argsOf(rec arrow.RecordBatch) ([]any, error) {
	if rec.NumRows() != 1 {
		return nil, invalidf("parameter batch has %d rows; bind exactly one row per execution", rec.NumRows())
	}
	args := make([]any, rec.NumCols())
	for i, col := range rec.Columns() {
		v, err := valueAt(col, 0)
		if err != nil {
			return nil, invalidf("parameter %d (%s): %v", i+1, rec.Schema().Field(i).Name, err)
		}
		args[i] = v
	}
	return args, nil
}

// valueAt returns element i of col as a Go value; strings and bytes are copied, as
// the array's buffers are released after binding.
func valueAt(col arrow.Array, i int) (any, error) {
	// Arrow's null type (a client's value of no type, a Go nil) has no
	// validity bitmap: every value is NULL though IsNull says otherwise.
	if col.IsNull(i) || col.DataType().ID() == arrow.NULL {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return a.Value(i), nil
	case *array.Int16:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return a.Value(i), nil
	case *array.Uint16:
		return a.Value(i), nil
	case *array.Uint32:
		return a.Value(i), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		return strings.Clone(a.Value(i)), nil
	case *array.LargeString:
		return strings.Clone(a.Value(i)), nil
	case *array.Binary:
		return bytes.Clone(a.Value(i)), nil
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit), nil
	case *array.Date32:
		return a.Value(i).ToTime(), nil
	case *array.Date64:
		return a.Value(i).ToTime(), nil
	case *array.DenseUnion:
		child := a.Field(a.ChildID(i))
		return valueAt(child, int(a.ValueOffset(i)))
	default:
		return nil, fmt.Errorf("type %s is not supported as a parameter; cast it in SQL and send a string", col.DataType())
	}
}

// encodeParams serializes a parameter batch (Arrow IPC stream) so that it can
// travel inside a prepared statement handle: binding keeps no server state.
func encodeParams(rec arrow.RecordBatch, mem memory.Allocator) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("encode parameters: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode parameters: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeParams reads a batch written by encodeParams and converts it to args.
func decodeParams(b []byte, mem memory.Allocator) ([]any, error) {
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, invalidf("prepared statement handle carries unreadable parameters: %v", err)
	}
	defer r.Release()
	if !r.Next() {
		return nil, invalidf("prepared statement handle carries no parameter row")
	}
	return argsOf(r.RecordBatch())
}
