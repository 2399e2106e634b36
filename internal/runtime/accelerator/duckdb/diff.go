//go:build duckdb_arrow

package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ApplyDiff applies a multiset change of the table's rows (see
// engine.StoreTx.ApplyDiff): each row of del removes exactly one equal local row,
// NULLs equal, then the rows of ins are inserted by column name.
//
// Equal local rows are told apart by rowid: the retracted rows are grouped and
// counted, joined to the local rows they equal, and the first n local rows of
// each group (by rowid) go. The join comes before the numbering, so the cost
// grows with the rows retracted, not with the table.
func (t *Tx) ApplyDiff(table string, del, ins array.RecordReader) error {
	if del != nil {
		if err := t.retract(table, del); err != nil {
			return err
		}
	}
	if ins != nil {
		if _, err := t.Insert(table, ins); err != nil {
			return err
		}
	}
	return nil
}

// retract deletes one local row per row of del, and fails when some row of del
// has no equal local row left.
func (t *Tx) retract(table string, del array.RecordReader) error {
	fields := del.Schema().Fields()
	if len(fields) == 0 {
		return fmt.Errorf("retract rows of %s: the retracted rows have no columns", table)
	}
	stage := Ident(fmt.Sprintf("_spice_retract_%d", viewSeq.Add(1)))
	if _, err := t.withArrow(del, "CREATE TEMP TABLE "+stage+" AS SELECT * FROM {in}", false); err != nil {
		return fmt.Errorf("retract rows of %s: stage them: %w", table, err)
	}
	defer func() { _, _ = t.conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+stage) }()
	var want int64
	if err := t.conn.QueryRowContext(t.ctx, "SELECT count(*) FROM "+stage).Scan(&want); err != nil {
		return fmt.Errorf("retract rows of %s: count them: %w", table, err)
	}
	if want == 0 {
		return nil
	}
	res, err := t.conn.ExecContext(t.ctx, retractSQL(TableIdent(table), stage, fields))
	if err != nil {
		return fmt.Errorf("retract rows of %s: %w", table, err)
	}
	got, _ := res.RowsAffected()
	if got != want {
		return fmt.Errorf("retract rows of %s: %d rows were retracted but only %d equal rows are held; the local table no longer matches its source: subscribe again for a new snapshot", table, want, got)
	}
	return nil
}

// retractSQL deletes, for each distinct row of stage that occurs n times, the
// first n equal rows of target by rowid.
func retractSQL(target, stage string, fields []arrow.Field) string {
	cols := make([]string, len(fields))
	match := make([]string, len(fields))
	part := make([]string, len(fields))
	for i, f := range fields {
		c := Ident(f.Name)
		cols[i] = c
		match[i] = "t." + c + " IS NOT DISTINCT FROM d." + c
		part[i] = "t." + c
	}
	return `DELETE FROM ` + target + ` WHERE rowid IN (
  SELECT rid FROM (
    SELECT t.rowid AS rid, d._spice_n AS n,
      row_number() OVER (PARTITION BY ` + strings.Join(part, ", ") + ` ORDER BY t.rowid) AS rn
    FROM ` + target + ` t
    JOIN (SELECT ` + strings.Join(cols, ", ") + `, count(*) AS _spice_n FROM ` + stage + ` GROUP BY ALL) d
      ON ` + strings.Join(match, " AND ") + `
  ) WHERE rn <= n
)`
}
