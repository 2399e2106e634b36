//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// CreateIndex creates an index named <table>_<columns>_idx on the table's
// columns unless it exists. A full refresh replaces the table and drops its
// indexes, so callers create them again after each one.
func (t *Tx) CreateIndex(table string, columns []string, unique bool) error {
	if len(columns) == 0 {
		return fmt.Errorf("index on %s: no columns given", table)
	}
	strip := strings.NewReplacer(" ", "", "(", "", ")", "")
	parts := make([]string, len(columns))
	quoted := make([]string, len(columns))
	for i, c := range columns {
		parts[i] = strip.Replace(c)
		quoted[i] = Ident(c)
	}
	name := table + "_" + strings.Join(parts, "_") + "_idx"
	kind := "INDEX"
	if unique {
		kind = "UNIQUE INDEX"
	}
	stmt := "CREATE " + kind + " IF NOT EXISTS " + Ident(name) + " ON " + TableIdent(table) + " (" + strings.Join(quoted, ", ") + ")"
	if err := t.exec(stmt); err != nil {
		return fmt.Errorf("index (%s) on %s: %w", strings.Join(columns, ", "), table, err)
	}
	return nil
}

// DeleteOlderThan removes the rows whose column is below bound (rendered by
// engine.Literal) and returns how many it removed.
func (t *Tx) DeleteOlderThan(table, column string, bound any) (int64, error) {
	t.markReset(table)
	lit, err := engine.Literal(bound)
	if err != nil {
		return 0, fmt.Errorf("delete old rows of %s: %w", table, err)
	}
	res, err := t.conn.ExecContext(t.ctx, "DELETE FROM "+TableIdent(table)+" WHERE "+Ident(column)+" < "+lit)
	if err != nil {
		return 0, fmt.Errorf("delete old rows of %s: %w", table, err)
	}
	n, _ := res.RowsAffected()
	t.deleted += n
	return n, nil
}
