//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/logging"
)

// Output column names as upstream Spice (DataFusion) gives them. DuckDB names
// an unaliased aggregate after its own rendering ("count_star()", "sum(count)");
// DataFusion says "count(*)" and qualifies the column with its relation
// ("sum(orders.count)"). Clients that read columns by name see the
// difference, so the top-level select list is parsed (json_serialize_sql) and
// the result's columns renamed. Only these forms are renamed: count(*),
// count/sum/avg/min/max of one column, with or without DISTINCT and without
// FILTER or ORDER BY, in a single SELECT (not UNION) whose select list has no
// *. A column is qualified when its relation is known: written (o.x), the only
// relation of FROM, or the one table of a join that has the column.

// dfAggregates are the aggregates renamed, by DuckDB function name.
var dfAggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

type pnode struct {
	Type       string  `json:"type"`
	SelectList []pexpr `json:"select_list"`
	FromTable  *pfrom  `json:"from_table"`
}

type pexpr struct {
	Class        string   `json:"class"`
	Alias        string   `json:"alias"`
	FunctionName string   `json:"function_name"`
	Children     []pexpr  `json:"children"`
	ColumnNames  []string `json:"column_names"`
	Distinct     bool     `json:"distinct"`
	Filter       any      `json:"filter"`
	OrderBys     struct {
		Orders []any `json:"orders"`
	} `json:"order_bys"`
}

type pfrom struct {
	Type       string `json:"type"`
	Alias      string `json:"alias"`
	SchemaName string `json:"schema_name"`
	TableName  string `json:"table_name"`
	Left       *pfrom `json:"left"`
	Right      *pfrom `json:"right"`
	Subquery   *struct {
		Node pnode `json:"node"`
	} `json:"subquery"`
}

// relation is one relation of FROM: the name that qualifies its columns and,
// for a table or view, where to find its columns.
type relation struct {
	qualifier     string
	schema, table string // "" for a subquery
}

// outputNames returns outputNames(query), computed once per query text and
// kept in a cache bounded in bytes (InspectCacheBytes, texts counted). A
// failure to compute them leaves DuckDB's names: it never fails the query.
func (d *DB) outputNames(ctx context.Context, dc driver.Conn, query string) map[int]string {
	if v, ok := d.outNames.Get(query); ok {
		return v
	}
	names, err := outputNames(ctx, dc, query)
	if err != nil {
		slog.Debug("output names left as DuckDB's", logging.ErrorKey, err)
		return nil
	}
	size := int64(32)
	for _, n := range names {
		size += int64(24 + len(n))
	}
	d.outNames.Add(query, names, size)
	return names
}

// outputNames returns the DataFusion names of the result columns of query
// that differ from DuckDB's, by column index; nil when none do or the query is
// not of a form handled.
func outputNames(ctx context.Context, dc driver.Conn, query string) (map[int]string, error) {
	node, err := parseSelect(ctx, dc, query)
	if err != nil || node == nil {
		return nil, err
	}
	return nodeNames(ctx, dc, node)
}

// nodeNames is outputNames of one SELECT node. SELECT * FROM (subquery) keeps
// the subquery's names, as the Flight SQL server's describe query does.
func nodeNames(ctx context.Context, dc driver.Conn, node *pnode) (map[int]string, error) {
	if f := node.FromTable; len(node.SelectList) == 1 && node.SelectList[0].Class == "STAR" && f != nil && f.Type == "SUBQUERY" && f.Subquery != nil {
		if f.Subquery.Node.Type != "SELECT_NODE" || len(node.SelectList[0].Children) > 0 {
			return nil, nil
		}
		return nodeNames(ctx, dc, &f.Subquery.Node)
	}
	var rels []relation
	collectRelations(node.FromTable, &rels)
	var out map[int]string
	for i, e := range node.SelectList {
		if e.Class == "STAR" {
			return nil, nil
		}
		name, ok, err := dfName(ctx, dc, e, rels)
		if err != nil {
			return nil, err
		}
		if ok {
			if out == nil {
				out = map[int]string{}
			}
			out[i] = name
		}
	}
	return out, nil
}

// parseSelect returns the statement's top-level SELECT node, nil when it is
// something else (a UNION, say) or does not parse.
func parseSelect(ctx context.Context, dc driver.Conn, query string) (*pnode, error) {
	var js string
	if err := queryRow(ctx, dc, `SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`, []driver.NamedValue{{Ordinal: 1, Value: query}}, &js); err != nil {
		return nil, fmt.Errorf("parse output names: %w", err)
	}
	var doc struct {
		Error      bool `json:"error"`
		Statements []struct {
			Node pnode `json:"node"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		return nil, fmt.Errorf("parse output names: %w", err)
	}
	if doc.Error || len(doc.Statements) != 1 || doc.Statements[0].Node.Type != "SELECT_NODE" {
		return nil, nil
	}
	return &doc.Statements[0].Node, nil
}

func collectRelations(f *pfrom, out *[]relation) {
	if f == nil {
		return
	}
	switch f.Type {
	case "JOIN":
		collectRelations(f.Left, out)
		collectRelations(f.Right, out)
	case "BASE_TABLE":
		q := f.Alias
		if q == "" {
			q = f.TableName
			if f.SchemaName != "" {
				q = f.SchemaName + "." + f.TableName
			}
		}
		*out = append(*out, relation{qualifier: q, schema: f.SchemaName, table: f.TableName})
	case "SUBQUERY":
		*out = append(*out, relation{qualifier: f.Alias})
	default:
		*out = append(*out, relation{}) // table functions and the like: unknown
	}
}

// dfName is DataFusion's name for an unaliased aggregate select item.
func dfName(ctx context.Context, dc driver.Conn, e pexpr, rels []relation) (string, bool, error) {
	if e.Class != "FUNCTION" || e.Alias != "" || e.Filter != nil || len(e.OrderBys.Orders) > 0 {
		return "", false, nil
	}
	if e.FunctionName == "count_star" && len(e.Children) == 0 {
		return "count(*)", true, nil
	}
	if !dfAggregates[e.FunctionName] || len(e.Children) != 1 || e.Children[0].Class != "COLUMN_REF" {
		return "", false, nil
	}
	col, ok, err := qualify(ctx, dc, e.Children[0].ColumnNames, rels)
	if err != nil || !ok {
		return "", false, err
	}
	distinct := ""
	if e.Distinct {
		distinct = "DISTINCT "
	}
	return e.FunctionName + "(" + distinct + col + ")", true, nil
}

// qualify renders a column reference as DataFusion does: relation.column.
func qualify(ctx context.Context, dc driver.Conn, names []string, rels []relation) (string, bool, error) {
	switch {
	case len(names) > 1:
		return strings.Join(names, "."), true, nil
	case len(names) != 1:
		return "", false, nil
	case len(rels) == 1 && rels[0].qualifier != "":
		return rels[0].qualifier + "." + names[0], true, nil
	}
	var found string
	for _, r := range rels {
		if r.table == "" {
			return "", false, nil // a subquery's columns are not looked up
		}
		var n int64
		err := queryRow(ctx, dc, `SELECT count(*) FROM duckdb_columns() WHERE lower(table_name) = lower(?) AND lower(column_name) = lower(?) AND (? = '' OR lower(schema_name) = lower(?))`,
			[]driver.NamedValue{{Ordinal: 1, Value: r.table}, {Ordinal: 2, Value: names[0]}, {Ordinal: 3, Value: r.schema}, {Ordinal: 4, Value: r.schema}}, &n)
		if err != nil {
			return "", false, fmt.Errorf("look up column %s: %w", names[0], err)
		}
		if n > 0 {
			if found != "" {
				return "", false, nil // ambiguous: DuckDB fails the query anyway
			}
			found = r.qualifier
		}
	}
	if found == "" {
		return "", false, nil
	}
	return found + "." + names[0], true, nil
}

// queryRow runs a one-value query on a raw connection.
func queryRow(ctx context.Context, dc driver.Conn, query string, args []driver.NamedValue, dest any) error {
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, query, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, 1)
	if err := rows.Next(vals); err != nil {
		return err
	}
	switch d := dest.(type) {
	case *string:
		s, ok := vals[0].(string)
		if !ok {
			return fmt.Errorf("got %T, want a string", vals[0])
		}
		*d = s
	case *int64:
		n, ok := vals[0].(int64)
		if !ok {
			return fmt.Errorf("got %T, want an integer", vals[0])
		}
		*d = n
	}
	return nil
}

// renameSchema returns s with the fields at the indexes of names renamed.
func renameSchema(s *arrow.Schema, names map[int]string) *arrow.Schema {
	if len(names) == 0 {
		return s
	}
	fields := append([]arrow.Field(nil), s.Fields()...)
	for i, n := range names {
		if i < len(fields) {
			fields[i].Name = n
		}
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// withNames returns rec under schema s when its own schema differs (renamed
// columns), releasing rec; otherwise rec itself.
func withNames(s *arrow.Schema, rec arrow.RecordBatch) arrow.RecordBatch {
	if rec.Schema() == s {
		return rec
	}
	out := array.NewRecordBatch(s, rec.Columns(), rec.NumRows())
	rec.Release()
	return out
}
