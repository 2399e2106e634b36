package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Ident quotes a name as a SQL identifier (double quotes, inner ones doubled),
// the form DuckDB, Postgres and DataFusion all read: the engine's own SQL
// (DuckDB's dialect) and text sent to Flight SQL upstreams use it. The name
// keeps its case.
func Ident(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Literal renders a bound computed from local data (an append boundary, a data
// window, a retention cutoff) as a SQL literal that DuckDB, Postgres and
// DataFusion all read: times in UTC with an explicit offset, numbers as they are,
// strings quoted.
func Literal(v any) (string, error) {
	switch x := v.(type) {
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999") + "+00'", nil
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		return fmt.Sprint(x), nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	default:
		return "", fmt.Errorf("cannot use a %T as a bound in SQL", v)
	}
}

// ScanSQL renders the query a connector sends to scan relation (used as
// written): SELECT of the quoted columns (* when there are none) with req's
// Where and Since, then its OrderBy and Limit (refresh_sql), in the SQL that
// DuckDB and DataFusion both read.
func ScanSQL(relation string, columns []string, req ScanRequest) (string, error) {
	list := "*"
	if len(columns) > 0 {
		quoted := make([]string, len(columns))
		for i, c := range columns {
			quoted[i] = Ident(c)
		}
		list = strings.Join(quoted, ", ")
	}
	sql := "SELECT " + list + " FROM " + relation
	var conds []string
	if w := strings.TrimSpace(req.Where); w != "" {
		conds = append(conds, "("+w+")")
	}
	if req.Since != nil {
		lit, err := Literal(req.Since.Value)
		if err != nil {
			return "", err
		}
		conds = append(conds, Ident(req.Since.Column)+" >= "+lit)
	}
	if len(conds) > 0 {
		sql += " WHERE " + strings.Join(conds, " AND ")
	}
	if o := strings.TrimSpace(req.OrderBy); o != "" {
		sql += " ORDER BY " + o
	}
	if req.Limit > 0 {
		sql += " LIMIT " + strconv.FormatInt(req.Limit, 10)
	}
	return sql, nil
}
