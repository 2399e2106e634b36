//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// ApplyDiff applies a multiset change of the table's rows (see
// engine.StoreTx.ApplyDiff): each row of del removes exactly one equal local row,
// NULLs equal, then the rows of ins are inserted by column name.
//
// Equal local rows are told apart by rowid: the retracted rows are grouped and
// counted, joined to the local rows they equal, and n local rows of each group
// go. The join comes first, so the cost grows with the rows retracted, not
// with the table.
//
// DuckDB costs a fraction of a millisecond per statement whatever it holds,
// so the change is one statement at most: the retracted rows go through a
// query appender that runs the DELETE over them (and fails it when fewer
// equal rows are held than were retracted), the inserted rows through a table
// appender, which runs no statement. A table whose changes are captured for a
// maintained query, or rows of a type the appenders are not given here
// (rows.go), take the staged path: SQL over copies of the Arrow streams.
func (t *Tx) ApplyDiff(table string, del, ins array.RecordReader) error {
	delCols, okDel := appendable(del)
	insCols, okIns := appendable(ins)
	if name, _ := t.db.capturing(strings.ToLower(table)); !okDel || !okIns || name != "" {
		return t.applyDiffStaged(table, del, ins)
	}
	t.touch(table)
	if del != nil {
		if err := t.retract(table, del, delCols); err != nil {
			return err
		}
	}
	if ins != nil {
		if err := t.appendRows(table, ins, insCols); err != nil {
			return err
		}
	}
	return nil
}

// appendable returns the appender columns of rd's schema; a nil rd needs none.
func appendable(rd array.RecordReader) ([]column, bool) {
	if rd == nil {
		return nil, true
	}
	if rd.Schema().NumFields() == 0 {
		return nil, false // the staged path explains
	}
	return columnsOf(rd.Schema())
}

// retractedData names the retracted rows in the query of retract's appender.
const retractedData = "_spice_retracted"

// retract deletes one local row per row of del, and fails when some row of del
// has no equal local row left: the query appender's DELETE fails itself then,
// so that the check costs no statement of its own.
func (t *Tx) retract(table string, del array.RecordReader, cols []column) error {
	fields := del.Schema().Fields()
	infos := make([]duckdb.TypeInfo, len(cols))
	names := make([]string, len(fields))
	for i, c := range cols {
		infos[i], names[i] = c.info, fields[i].Name
	}
	query := retractCheckedSQL(TableIdent(table), Ident(retractedData), fields)
	err := t.conn.Raw(func(dc any) error {
		a, err := duckdb.NewQueryAppender(dc.(driver.Conn), query, retractedData, infos, names)
		if err != nil {
			return err
		}
		if _, err := appendRecords(del, cols, a.AppendRow); err != nil {
			_ = a.Clear()
			_ = a.Close()
			return err
		}
		return a.CloseWithCancel(t.ctx) // runs the DELETE when rows were appended
	})
	if err != nil {
		return fmt.Errorf("retract rows of %s: %w", table, err)
	}
	return nil
}

// appendRows inserts the rows of ins by column name, through a table appender.
func (t *Tx) appendRows(table string, ins array.RecordReader, cols []column) error {
	names := make([]string, ins.Schema().NumFields())
	for i, f := range ins.Schema().Fields() {
		names[i] = f.Name
	}
	schema, name := splitTable(table)
	err := t.conn.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderWithColumns(dc.(driver.Conn), "", schema, name, names)
		if err != nil {
			return err
		}
		if _, err := appendRecords(ins, cols, a.AppendRow); err != nil {
			_ = a.Clear()
			_ = a.Close()
			return err
		}
		return a.CloseWithCancel(t.ctx)
	})
	if err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	return nil
}

// applyDiffStaged is ApplyDiff over copies of the Arrow streams in temporary
// tables: a retraction's rows are counted, deleted (and copied to the table's
// changes when a maintained query reads them), then the rows of ins inserted.
func (t *Tx) applyDiffStaged(table string, del, ins array.RecordReader) error {
	if del != nil {
		if err := t.retractStaged(table, del); err != nil {
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

func (t *Tx) retractStaged(table string, del array.RecordReader) error {
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
	target := TableIdent(table)
	copyRows, err := t.copyDeleted(table, retractRowids(target, stage, fields))
	if err != nil {
		return err
	}
	res, err := t.conn.ExecContext(t.ctx, copyRows+retractSQL(target, stage, fields))
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
	return `DELETE FROM ` + target + ` WHERE rowid IN (` + retractRowids(target, stage, fields) + `)`
}

// retractCheckedSQL deletes, for each distinct row of stage that occurs n
// times, n equal rows of target (which ones does not matter: they are equal),
// and fails (DuckDB's error()) when fewer are held. One aggregate over a join,
// no window: the statement is planned for every transaction, so its shape is
// its cost.
func retractCheckedSQL(target, stage string, fields []arrow.Field) string {
	cols := make([]string, len(fields))
	group := make([]string, len(fields), len(fields)+1)
	match := make([]string, len(fields))
	for i, f := range fields {
		c := Ident(f.Name)
		cols[i] = c
		group[i] = "d." + c
		match[i] = "t." + c + " IS NOT DISTINCT FROM d." + c
	}
	group = append(group, "d._spice_n")
	msg := `d._spice_n || ' rows were retracted but only ' || count(t.rowid) ||
		' equal rows are held; the local table no longer matches its source: subscribe again for a new snapshot'`
	return `DELETE FROM ` + target + ` WHERE rowid IN (
  SELECT unnest(CASE WHEN count(t.rowid) < d._spice_n THEN [error(` + msg + `)::BIGINT] ELSE list(t.rowid)[1:d._spice_n] END)
  FROM (SELECT ` + strings.Join(cols, ", ") + `, count(*) AS _spice_n FROM ` + stage + ` GROUP BY ALL) d
  LEFT JOIN ` + target + ` t ON ` + strings.Join(match, " AND ") + `
  GROUP BY ` + strings.Join(group, ", ") + `
)`
}

// retractRowids selects the rowids retractSQL deletes.
func retractRowids(target, stage string, fields []arrow.Field) string {
	cols := make([]string, len(fields))
	match := make([]string, len(fields))
	part := make([]string, len(fields))
	for i, f := range fields {
		c := Ident(f.Name)
		cols[i] = c
		match[i] = "t." + c + " IS NOT DISTINCT FROM d." + c
		part[i] = "t." + c
	}
	return `SELECT rid FROM (
    SELECT t.rowid AS rid, d._spice_n AS n,
      row_number() OVER (PARTITION BY ` + strings.Join(part, ", ") + ` ORDER BY t.rowid) AS rn
    FROM ` + target + ` t
    JOIN (SELECT ` + strings.Join(cols, ", ") + `, count(*) AS _spice_n FROM ` + stage + ` GROUP BY ALL) d
      ON ` + strings.Join(match, " AND ") + `
  ) WHERE rn <= n`
}
