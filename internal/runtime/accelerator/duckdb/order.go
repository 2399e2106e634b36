//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Ordered datasets. A table keeps no order, but upstream's refreshed table
// answers SELECT * in the order its query produced, and a subscribed view's
// readers expect the same: runtime 1 states the view's top-level ORDER BY
// (OutputOrder) in the subscription's snapshot, and runtime 2 records it
// (SetOrder). A user query that reads such a dataset as its only relation,
// without ORDER BY, GROUP BY or DISTINCT of its own, then reads it through an
// ordered subquery (resolve.go), so SELECT * and SELECT ... LIMIT n answer in
// the view's order. Other queries read the table as it is.

// OrderKey is one key of a query's top-level ORDER BY, on an output column.
type OrderKey struct {
	Index      int // the output column, from 0
	Descending bool
	NullsFirst bool
}

// OutputOrder returns query's top-level ORDER BY as keys on its output
// columns; nil when it has none, or when a key is not an output column (the
// order cannot then be restored from the result's rows).
func (d *DB) OutputOrder(ctx context.Context, query string) ([]OrderKey, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	var keys []OrderKey
	err = conn.Raw(func(dc any) error {
		node, ok := parseOne(ctx, dc.(driver.Conn), query)
		if !ok || strOf(node, "type") != "SELECT_NODE" {
			return nil
		}
		names, err := columnNames(dc.(driver.Conn), query)
		if err != nil {
			return err
		}
		keys = orderKeys(node, names)
		return nil
	})
	return keys, err
}

// columnNames are the names of query's result columns.
func columnNames(dc driver.Conn, query string) ([]string, error) {
	st, err := dc.Prepare(query)
	if err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	defer st.Close()
	s := st.(*duckdb.Stmt)
	n, err := s.ColumnCount()
	if err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	names := make([]string, n)
	for i := range names {
		if names[i], err = s.ColumnName(i); err != nil {
			return nil, fmt.Errorf("describe query: %w", err)
		}
	}
	return names, nil
}

// orderKeys maps the ORDER BY of a SELECT node to output columns: a position
// (ORDER BY 2), an output column's name or alias, or an expression written as
// in the select list.
func orderKeys(node map[string]any, names []string) []OrderKey {
	var orders []any
	for _, m := range listOf(node, "modifiers") {
		if mm, _ := m.(map[string]any); strOf(mm, "type") == "ORDER_MODIFIER" {
			orders = listOf(mm, "orders")
		}
	}
	selects := listOf(node, "select_list")
	var keys []OrderKey
	for _, o := range orders {
		om, _ := o.(map[string]any)
		expr, _ := om["expression"].(map[string]any)
		i := outputIndex(expr, selects, names)
		if i < 0 {
			return nil
		}
		k := OrderKey{Index: i, Descending: strOf(om, "type") == "DESCENDING"}
		switch strOf(om, "null_order") {
		case "NULLS FIRST":
			k.NullsFirst = true
		case "NULLS LAST":
		default:
			k.NullsFirst = k.Descending // default_null_order postgres (semantics.go)
		}
		keys = append(keys, k)
	}
	return keys
}

// outputIndex is the output column an ORDER BY expression names; -1 when
// none.
func outputIndex(expr map[string]any, selects []any, names []string) int {
	switch strOf(expr, "class") {
	case "CONSTANT":
		v, _ := expr["value"].(map[string]any)
		if f, ok := v["value"].(float64); ok && f >= 1 && int(f) <= len(names) && f == float64(int(f)) {
			return int(f) - 1
		}
		return -1
	case "COLUMN_REF":
		parts := listOf(expr, "column_names")
		if len(parts) == 1 {
			c, _ := parts[0].(string)
			for i, n := range names {
				if strings.EqualFold(n, c) {
					return i
				}
			}
			return -1
		}
	}
	bare := stripped(expr)
	for i, s := range selects {
		sm, _ := s.(map[string]any)
		if i < len(names) && reflect.DeepEqual(stripped(sm), bare) {
			return i
		}
	}
	return -1
}

// stripped is a copy of an expression tree without positions and aliases, to
// compare two writings of one expression.
func stripped(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			if k != "query_location" && k != "alias" {
				out[k] = stripped(c)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = stripped(c)
		}
		return out
	}
	return v
}

func listOf(x map[string]any, k string) []any { l, _ := x[k].([]any); return l }

// orderings are the recorded orderings of datasets, by lower-case name.
type orderings struct {
	mu sync.Mutex
	m  map[string][]wire.OrderKey
}

// SetOrder records the ordering of a dataset's rows (from its subscription's
// snapshot); nil forgets it. Reads of the dataset follow it from the first
// query whose table has every key column.
func (d *DB) SetOrder(name string, keys []wire.OrderKey) {
	o := &d.ordered
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string][]wire.OrderKey{}
	}
	name = strings.ToLower(name)
	if len(keys) == 0 {
		delete(o.m, name)
	} else {
		o.m[name] = append([]wire.OrderKey(nil), keys...)
	}
	o.mu.Unlock()
	d.resolved.Clear() // resolved texts may read the dataset in its former order
}

// orderOf returns the recorded ordering of a dataset.
func (d *DB) orderOf(name string) []wire.OrderKey {
	d.ordered.mu.Lock()
	defer d.ordered.mu.Unlock()
	return d.ordered.m[strings.ToLower(name)]
}

// orderRead makes a query that reads an ordered dataset (order.go) as its one
// relation, with no ORDER BY, GROUP BY or DISTINCT of its own, read it through
// its ordered subquery. pending reports an ordering whose columns the table
// lacks yet.
func (d *DB) orderRead(ctx context.Context, dc driver.Conn, node map[string]any, rw *rewriter) (pending bool, err error) {
	t, _ := node["from_table"].(map[string]any)
	if strOf(node, "type") != "SELECT_NODE" || strOf(t, "type") != "BASE_TABLE" || len(listOf(node, "group_expressions")) > 0 {
		return false, nil
	}
	for _, m := range listOf(node, "modifiers") {
		if mm, _ := m.(map[string]any); strOf(mm, "type") != "LIMIT_MODIFIER" {
			return false, nil
		}
	}
	cat, schema, name := strOf(t, "catalog_name"), strOf(t, "schema_name"), strOf(t, "table_name")
	if cat != "" && !strings.EqualFold(cat, catalogName) {
		return false, nil
	}
	table := datasetName(strings.ToLower(schema), name)
	keys := d.orderOf(table)
	if len(keys) == 0 {
		return false, nil
	}
	sub, ok, err := orderedRead(ctx, dc, table, keys)
	if err != nil || !ok {
		return !ok, err
	}
	start, end, found := nameSpan(rw.query, location(t), nonEmpty(cat, schema, name))
	if !found {
		return false, nil
	}
	if strOf(t, "alias") == "" {
		sub += " AS " + Ident(name)
	}
	for i, e := range rw.edits {
		if e.start == start { // the name was qualified: read the subquery instead
			rw.edits[i].text = sub
			return false, nil
		}
	}
	rw.edits = append(rw.edits, edit{start: start, end: end, text: sub})
	return false, nil
}

// orderedRead returns the subquery that reads table in its recorded order, and
// whether the table has every key column now (a new subscription may state
// columns its snapshot has not brought yet).
func orderedRead(ctx context.Context, dc driver.Conn, table string, keys []wire.OrderKey) (string, bool, error) {
	schema, name := splitTable(table)
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, `SELECT lower(column_name) FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = ? AND table_name = ?`,
		[]driver.NamedValue{{Ordinal: 1, Value: schema}, {Ordinal: 2, Value: name}})
	if err != nil {
		return "", false, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	v := make([]driver.Value, 1)
	for {
		err := rows.Next(v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false, fmt.Errorf("read the columns of %s: %w", table, err)
		}
		have[v[0].(string)] = true
	}
	var by []string
	for _, k := range keys {
		if !have[strings.ToLower(k.Column)] {
			return "", false, nil
		}
		dir, nulls := " ASC", " NULLS LAST"
		if k.Descending {
			dir = " DESC"
		}
		if k.NullsFirst {
			nulls = " NULLS FIRST"
		}
		by = append(by, Ident(k.Column)+dir+nulls)
	}
	return "(SELECT * FROM " + TableIdent(table) + " ORDER BY " + strings.Join(by, ", ") + ")", true, nil
}
