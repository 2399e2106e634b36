//go:build duckdb_arrow

package duckdb

import (
	"context"
	"fmt"
	"strings"
)

// Dataset and view names may be schema-qualified, as upstream allows:
// "spiceai.files" is table files in schema spiceai, created on first use.
// An unqualified name is a table of DuckDB's default schema, main.

// TableIdent quotes a dataset or view name as a table reference:
// "spiceai.files" gives "spiceai"."files", "orders" gives "orders".
func TableIdent(name string) string {
	if schema, table, ok := strings.Cut(name, "."); ok {
		return Ident(schema) + "." + Ident(table)
	}
	return Ident(name)
}

// splitTable returns the schema (main when unqualified) and table of a name.
func splitTable(name string) (schema, table string) {
	if schema, table, ok := strings.Cut(name, "."); ok {
		return schema, table
	}
	return "main", name
}

// schemaDDL is the statement creating the schema of a qualified name, "" for
// an unqualified one.
func schemaDDL(name string) string {
	schema, _, ok := strings.Cut(name, ".")
	if !ok {
		return ""
	}
	return "CREATE SCHEMA IF NOT EXISTS " + Ident(schema)
}

// ensureSchema creates the schema of a qualified table name in the
// transaction.
func (t *Tx) ensureSchema(table string) error {
	ddl := schemaDDL(table)
	if ddl == "" {
		return nil
	}
	if err := t.exec(ddl); err != nil {
		return fmt.Errorf("create schema of %s: %w", table, err)
	}
	return nil
}

// ensureSchema creates the schema of a qualified view name.
func (d *DB) ensureSchema(ctx context.Context, name string) error {
	ddl := schemaDDL(name)
	if ddl == "" {
		return nil
	}
	if _, err := d.db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create schema of %s: %w", name, err)
	}
	return nil
}

// tableName reads a name as DuckDB's parser gives it (GetTableNames with
// qualified names): drops an alias (" AS x") and the default catalog and
// schema, so that "main.orders AS o" is "orders" and "spiceai.files" stays.
func tableName(s string) string {
	if i := strings.Index(s, " AS "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "memory.")
	s = strings.TrimPrefix(s, "main.")
	return s
}
