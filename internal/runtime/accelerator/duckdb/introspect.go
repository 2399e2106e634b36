//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Introspection as upstream answers it (DataFusion's information_schema):
// the user's datasets and views, and the information_schema tables
// themselves, in catalog spice; never the runtime's internal tables. The
// rows are literals in the rewritten query (resolve.go), so the query reads
// nothing of DuckDB's own catalog.

// infoTables are the information_schema tables served.
var infoTables = map[string]bool{"tables": true, "columns": true, "schemata": true}

// The statements upstream's SQL REPL and DataFusion answer SHOW with.
const (
	showTablesSQL  = `SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema <> 'information_schema'`
	showSchemasSQL = `SELECT catalog_name, schema_name FROM information_schema.schemata`
	describeSQL    = `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position`
)

// catalog is what introspection lists, read once per query.
type catalog struct {
	rels []catalogRel
	cols []catalogCol
}

type catalogRel struct{ schema, name, kind string }

type catalogCol struct {
	schema, table, name, dataType string
	pos                           int64
	nullable                      bool
	def                           any // string or nil
	charMax, precision, radix     any // int64 or nil
	scale                         any
}

// relations returns the datasets and views as schema and table, sorted.
func (d *DB) relations() []catalogRel {
	if d.Relations == nil {
		return nil
	}
	var out []catalogRel
	for _, t := range d.Relations() {
		schema, name := publicSchema, t.Name
		if s, n, ok := strings.Cut(t.Name, "."); ok {
			schema, name = s, n
		}
		out = append(out, catalogRel{schema: schema, name: name, kind: t.Type})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].schema+"."+out[i].name < out[j].schema+"."+out[j].name
	})
	return out
}

// catalog reads the columns of every dataset and view from DuckDB on dc.
func (d *DB) catalog(ctx context.Context, dc driver.Conn) (*catalog, error) {
	cat := &catalog{rels: d.relations()}
	want := map[string]string{} // DuckDB schema.table -> our schema
	for _, r := range cat.rels {
		schema := r.schema
		if schema == publicSchema {
			schema = "main"
		}
		want[strings.ToLower(schema+"."+r.name)] = r.schema
	}
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, `SELECT schema_name, table_name, column_name, column_index, data_type, is_nullable,
		column_default, character_maximum_length::BIGINT, numeric_precision::BIGINT, numeric_precision_radix::BIGINT, numeric_scale::BIGINT
		FROM duckdb_columns() WHERE database_name = current_database() AND NOT internal ORDER BY schema_name, table_name, column_index`, nil)
	if err != nil {
		return nil, fmt.Errorf("read the catalog: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 11)
	for {
		if err := rows.Next(v); err != nil {
			if errors.Is(err, io.EOF) {
				return cat, nil
			}
			return nil, fmt.Errorf("read the catalog: %w", err)
		}
		schema, ok := want[strings.ToLower(v[0].(string)+"."+v[1].(string))]
		if !ok {
			continue
		}
		c := catalogCol{schema: schema, table: v[1].(string), name: v[2].(string), dataType: v[4].(string),
			nullable: v[5] == true, def: v[6], charMax: v[7], precision: v[8], radix: v[9], scale: v[10]}
		c.pos, _ = v[3].(int64)
		if i, ok := v[3].(int32); ok {
			c.pos = int64(i)
		}
		if c.dataType == "HUGEINT" { // results narrow HUGEINT to BIGINT (query.go)
			c.dataType, c.precision = "BIGINT", int64(64)
		}
		cat.cols = append(cat.cols, c)
	}
}

// subquery is the SELECT that stands for information_schema.<name>.
func (c *catalog) subquery(name string) string {
	switch name {
	case "tables":
		rows := [][]any{}
		for _, r := range c.rels {
			rows = append(rows, []any{catalogName, r.schema, r.name, r.kind})
		}
		for _, t := range []string{"columns", "schemata", "tables"} {
			rows = append(rows, []any{catalogName, infoSchema, t, "VIEW"})
		}
		return literalRows([]string{"table_catalog", "table_schema", "table_name", "table_type"},
			[]string{"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"}, rows)
	case "columns":
		rows := [][]any{}
		for _, col := range c.cols {
			nullable := "NO"
			if col.nullable {
				nullable = "YES"
			}
			rows = append(rows, []any{catalogName, col.schema, col.table, col.name, col.pos, col.def, nullable, col.dataType,
				col.charMax, nil, col.precision, col.radix, col.scale, nil, nil})
		}
		return literalRows([]string{"table_catalog", "table_schema", "table_name", "column_name", "ordinal_position",
			"column_default", "is_nullable", "data_type", "character_maximum_length", "character_octet_length",
			"numeric_precision", "numeric_precision_radix", "numeric_scale", "datetime_precision", "interval_type"},
			[]string{"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "UBIGINT", "VARCHAR", "VARCHAR", "VARCHAR",
				"UBIGINT", "UBIGINT", "UBIGINT", "UBIGINT", "UBIGINT", "UBIGINT", "VARCHAR"}, rows)
	default: // schemata
		schemas := []string{infoSchema, publicSchema}
		for _, r := range c.rels {
			if !isNameOf(r.schema, schemas...) {
				schemas = append(schemas, r.schema)
			}
		}
		sort.Strings(schemas)
		rows := [][]any{}
		for _, s := range schemas {
			rows = append(rows, []any{catalogName, s, nil, nil, nil, nil, nil})
		}
		return literalRows([]string{"catalog_name", "schema_name", "schema_owner", "default_character_set_catalog",
			"default_character_set_schema", "default_character_set_name", "sql_path"},
			[]string{"VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"}, rows)
	}
}

// literalRows is a SELECT of rows under cols of types. A first row of typed
// NULLs fixes the column types (and makes an empty list valid SQL); the
// WHERE drops it again: every listed row has a first value.
func literalRows(cols, types []string, rows [][]any) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM (VALUES (")
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("NULL::" + t)
	}
	b.WriteString(")")
	for _, r := range rows {
		b.WriteString(", (")
		for i, v := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sqlValue(v))
		}
		b.WriteString(")")
	}
	b.WriteString(") AS " + Ident("information_schema_rows") + "(")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Ident(c))
	}
	b.WriteString(") WHERE " + Ident(cols[0]) + " IS NOT NULL")
	return b.String()
}

func sqlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	default:
		return fmt.Sprint(x)
	}
}

// showQuery returns the query a top-level SHOW TABLES, SHOW SCHEMAS or
// DESCRIBE <dataset> stands for; false for any other statement (the guard
// refuses the other SHOW forms and SUMMARIZE).
func (d *DB) showQuery(node map[string]any) (string, bool, error) {
	from, _ := node["from_table"].(map[string]any)
	if from == nil || strOf(from, "type") != "SHOW_REF" || !plainStar(node) {
		return "", false, nil
	}
	switch strOf(from, "show_type") {
	case "SHOW_UNQUALIFIED":
		switch strings.ToLower(strings.Trim(strOf(from, "table_name"), `"`)) {
		case "tables", "__show_tables_expanded":
			return showTablesSQL, true, nil
		case "schemas":
			return showSchemasSQL, true, nil
		}
	case "DESCRIBE":
		q, _ := from["query"].(map[string]any)
		if q == nil || !plainStar(q) {
			return "", false, nil
		}
		t, _ := q["from_table"].(map[string]any)
		if t == nil || strOf(t, "type") != "BASE_TABLE" {
			return "", false, nil
		}
		rel, err := d.describedRelation(strOf(t, "catalog_name"), strOf(t, "schema_name"), strOf(t, "table_name"))
		if err != nil {
			return "", false, err
		}
		return fmt.Sprintf(describeSQL, sqlValue(rel.schema), sqlValue(rel.name)), true, nil
	}
	return "", false, nil
}

// describedRelation finds the dataset or view DESCRIBE names.
func (d *DB) describedRelation(cat, schema, name string) (catalogRel, error) {
	written := strings.Join(nonEmpty(cat, schema, name), ".")
	if schema == "" {
		schema = publicSchema
	}
	if cat == "" || strings.EqualFold(cat, catalogName) {
		for _, r := range d.relations() {
			if strings.EqualFold(r.schema, schema) && strings.EqualFold(r.name, name) {
				return r, nil
			}
		}
	}
	return catalogRel{}, fmt.Errorf("DESCRIBE %s: no dataset or view of that name; SHOW TABLES lists them", written)
}

// plainStar reports whether a SELECT node is SELECT * FROM x and nothing
// more.
func plainStar(node map[string]any) bool {
	if strOf(node, "type") != "SELECT_NODE" {
		return false
	}
	list, _ := node["select_list"].([]any)
	if len(list) != 1 {
		return false
	}
	star, _ := list[0].(map[string]any)
	if star == nil || strOf(star, "class") != "STAR" || strOf(star, "relation_name") != "" || star["expr"] != nil {
		return false
	}
	for _, k := range []string{"where_clause", "having", "qualify", "sample"} {
		if node[k] != nil {
			return false
		}
	}
	for _, k := range []string{"modifiers", "group_expressions"} {
		if l, _ := node[k].([]any); len(l) > 0 {
			return false
		}
	}
	return true
}
