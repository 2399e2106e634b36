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

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
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
// equal rows are held than were retracted), the inserted rows through the
// table's kept appender, which runs no statement. Rows of a type the appenders
// are not given here (rows.go) take the staged path: SQL over copies of the
// Arrow streams. The rows retracted and inserted are kept for maintained
// queries that read the table: they are the rows that left and entered it.
func (t *Tx) ApplyDiff(table string, del, ins array.RecordReader) error {
	m := t.mirrorOf(table)
	capture := t.capturing(table)
	dels, delSchema, err := readDiff(del)
	defer releaseAll(dels)
	if err != nil {
		return fmt.Errorf("retract rows of %s: %w", table, err)
	}
	inss, insSchema, err := readDiff(ins)
	defer releaseAll(inss)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if m != nil && (del == nil || delSchema.Equal(m.schema)) && (ins == nil || insSchema.Equal(m.schema)) {
		done, err := t.applyDiffMirrored(table, m, capture, dels, inss)
		if done || err != nil {
			return err
		}
	}
	delCols, okDel := appendable(del)
	_, okIns := appendable(ins)
	if !okDel || !okIns {
		return t.applyDiffStaged(table, capture, delSchema, dels, insSchema, inss)
	}
	if len(dels) > 0 {
		if err := t.retract(table, delSchema, dels, delCols); err != nil {
			return err
		}
		for _, r := range dels {
			t.deleted += r.NumRows()
		}
	}
	if err := t.insertRecords(table, insSchema, inss); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if capture != nil {
		capture.Add(-1, dels...)
		capture.Add(1, inss...)
	}
	return nil
}

// readDiff reads every record of one side of a diff (none when rd is nil).
func readDiff(rd array.RecordReader) ([]arrow.RecordBatch, *arrow.Schema, error) {
	if rd == nil {
		return nil, nil, nil
	}
	recs, err := readAll(rd)
	return recs, rd.Schema(), err
}

// readAll reads every record of rd, retained.
func readAll(rd array.RecordReader) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		out = append(out, rec)
	}
	return out, rd.Err()
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
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

// retract deletes one local row per row of recs, and fails when some row
// has no equal local row left: the query appender's DELETE fails itself then,
// so that the check costs no statement of its own.
func (t *Tx) retract(table string, schema *arrow.Schema, recs []arrow.RecordBatch, cols []column) error {
	fields := schema.Fields()
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
		for _, rec := range recs {
			if _, err := appendRecord(rec, cols, a.AppendRow); err != nil {
				_ = a.Clear()
				_ = a.Close()
				return err
			}
		}
		return a.CloseWithCancel(t.ctx) // runs the DELETE when rows were appended
	})
	if err != nil {
		return fmt.Errorf("retract rows of %s: %w", table, err)
	}
	return nil
}

// applyDiffStaged is ApplyDiff over copies of the Arrow streams in temporary
// tables: a retraction's rows are counted and deleted, then the rows of ins
// inserted.
func (t *Tx) applyDiffStaged(table string, capture *ivm.TableChanges, delSchema *arrow.Schema, dels []arrow.RecordBatch, insSchema *arrow.Schema, inss []arrow.RecordBatch) error {
	if delSchema != nil {
		rd, err := array.NewRecordReader(delSchema, dels)
		if err != nil {
			return fmt.Errorf("retract rows of %s: %w", table, err)
		}
		err = t.retractStaged(table, rd)
		rd.Release()
		if err != nil {
			return err
		}
	}
	if err := t.insertRecords(table, insSchema, inss); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if capture != nil {
		capture.Add(-1, dels...)
		capture.Add(1, inss...)
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
	res, err := t.conn.ExecContext(t.ctx, retractSQL(TableIdent(table), stage, fields))
	if err != nil {
		return fmt.Errorf("retract rows of %s: %w", table, err)
	}
	got, _ := res.RowsAffected()
	t.deleted += got
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
