//go:build duckdb_arrow

package duckdb

import (
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// ApplyChanges applies one batch of net row changes (see engine.Changes). Rows
// to complete are copied into temporary tables and filled from the local rows
// first, because the batch may delete those rows before inserting the new ones.
func (t *Tx) ApplyChanges(table string, c engine.Changes) error {
	var staged []*stage
	defer func() {
		for _, s := range staged {
			_ = t.exec("DROP TABLE IF EXISTS " + s.name)
		}
	}()
	for _, rd := range c.Complete {
		s, err := t.newStage(table, c.Key, rd)
		if s != nil {
			staged = append(staged, s)
		}
		if err != nil {
			return fmt.Errorf("complete rows of %s from the local table: %w", table, err)
		}
	}
	target := TableIdent(table)
	if c.Truncate {
		t.markReset(table)
		res, err := t.conn.ExecContext(t.ctx, "DELETE FROM "+target)
		if err != nil {
			return fmt.Errorf("truncate %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		t.deleted += n
	}
	if c.Delete != nil {
		if _, err := t.Delete(table, c.Delete); err != nil {
			return err
		}
	}
	if c.Insert != nil {
		if _, err := t.Insert(table, c.Insert); err != nil {
			return err
		}
	}
	capture := t.capturing(table)
	for _, s := range staged {
		insert := "INSERT INTO " + target + " BY NAME SELECT * EXCLUDE (" + strings.Join(s.fromCols, ", ") + ") FROM " + s.name
		if capture == nil {
			if err := t.exec(insert); err != nil {
				return fmt.Errorf("insert completed rows into %s: %w", table, err)
			}
			continue
		}
		err := t.conn.Raw(func(dc any) error {
			recs, err := queryArrow(t.ctx, dc.(driver.Conn), insert+" RETURNING *")
			capture.Add(1, recs...)
			releaseAll(recs)
			return err
		})
		if err != nil {
			return fmt.Errorf("insert completed rows into %s: %w", table, err)
		}
	}
	return nil
}

// stage holds rows whose missing columns are being completed from the local table.
type stage struct {
	name     string   // quoted
	fromCols []string // quoted names of the columns holding the local row's key
}

// newStage copies rd into a temporary table with the target's columns plus the
// key columns of rd, fails if a local row it needs is missing, and fills the
// columns rd lacks from the local rows. The stage is returned, to be dropped,
// even when a later step fails.
func (t *Tx) newStage(table string, key []string, rd array.RecordReader) (*stage, error) {
	fields := rd.Schema().Fields()
	if len(key) == 0 || len(fields) <= len(key) {
		return nil, fmt.Errorf("rows to complete need the %d key columns after at least one of the table's columns, got %d columns", len(key), len(fields))
	}
	sent := make([]string, 0, len(fields)-len(key))
	for _, f := range fields[:len(fields)-len(key)] {
		sent = append(sent, f.Name)
	}
	raw := fmt.Sprintf("_spice_stage_%d", viewSeq.Add(1))
	s := &stage{name: Ident(raw)}
	target := TableIdent(table)
	var from, match []string
	for i, k := range key {
		c := Ident(fields[len(sent)+i].Name)
		from = append(from, Ident(k)+" AS "+c)
		match = append(match, "t."+Ident(k)+" IS NOT DISTINCT FROM "+s.name+"."+c)
		s.fromCols = append(s.fromCols, c)
	}
	if err := t.exec("CREATE TEMP TABLE " + s.name + " AS SELECT *, " + strings.Join(from, ", ") + " FROM " + target + " LIMIT 0"); err != nil {
		return nil, err
	}
	if _, err := t.Insert(raw, rd); err != nil {
		return s, err
	}
	on := strings.Join(match, " AND ")
	missing := "SELECT error('the local row that holds the unchanged TOASTed values of an updated row is missing (key ' || " + s.fromCols[0] +
		"::VARCHAR || '); the local table no longer matches the source: restart to take a new snapshot') FROM " + s.name +
		" WHERE NOT EXISTS (SELECT 1 FROM " + target + " t WHERE " + on + ")"
	if err := t.exec(missing); err != nil {
		return s, err
	}
	cols, err := t.columns(table)
	if err != nil {
		return s, err
	}
	var set []string
	for _, c := range cols {
		if !slices.Contains(sent, c) {
			set = append(set, Ident(c)+" = t."+Ident(c))
		}
	}
	if len(set) == 0 {
		return s, nil
	}
	return s, t.exec("UPDATE " + s.name + " SET " + strings.Join(set, ", ") + " FROM " + target + " t WHERE " + on)
}

// columns returns the names of the table's columns, in order.
func (t *Tx) columns(table string) ([]string, error) {
	schema, name := splitTable(table)
	rows, err := t.conn.QueryContext(t.ctx,
		`SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? ORDER BY column_index`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("list columns of %s: %w", table, err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list columns of %s: %w", table, err)
	}
	return cols, nil
}
