//go:build duckdb_arrow

package duckdbsrc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Source reads one table or view of a DuckDB database file. It implements
// engine.Source. Create it with NewSource, then Open.
type Source struct {
	Logger *slog.Logger

	cfg   Config
	table string
	stamp Stamper
}

var (
	_ engine.Source = (*Source)(nil)
)

// NewSource returns a Source for table of the file cfg names.
func NewSource(cfg Config, table string) *Source {
	return &Source{Logger: slog.Default(), cfg: cfg, table: strings.TrimSpace(table)}
}

// Open checks the table name and that the file holds the table.
func (s *Source) Open(ctx context.Context) error {
	if s.cfg.Path == "" {
		return errors.New("open duckdb source: no file; build the Config with ParseParams")
	}
	if err := CheckTable(s.table); err != nil {
		return err
	}
	return s.Ping(ctx)
}

// Close releases nothing: every scan opens and closes its own instance.
func (s *Source) Close() {}

// files are the files whose state is the position: the database and its WAL.
func (s *Source) files() []string {
	out := []string{s.cfg.Path}
	if _, err := os.Stat(s.cfg.Path + ".wal"); err == nil {
		out = append(out, s.cfg.Path+".wal")
	}
	return out
}

// Scan opens the file read-only and streams the table, narrowed by req, to fn.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	pos, err := s.stamp.Stamp(s.files())
	if err != nil {
		return fmt.Errorf("read duckdb:%s: %w", s.table, err)
	}
	db, err := s.open(ctx)
	if err != nil {
		return fmt.Errorf("read duckdb:%s: %w", s.table, err)
	}
	defer db.Close()
	if err := db.Scan(ctx, QuoteTable(s.table), req, pos, fn); err != nil {
		return fmt.Errorf("read duckdb:%s from %s: %w", s.table, s.cfg.Path, err)
	}
	return nil
}

// open checks the file is still where ParseParams found it, opens it
// read-only, and refuses a data runtime's own store: its _spice schema marks
// it, and its tables are another runtime's data and bookkeeping.
func (s *Source) open(ctx context.Context) (*DB, error) {
	path, err := s.cfg.resolve()
	if err != nil {
		return nil, err
	}
	db, err := Open(ctx, Options{Path: path})
	if err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM duckdb_schemas() WHERE schema_name = '_spice'`).Scan(&n); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb:%s: read the schemas of %s: %w", s.table, path, err)
	}
	if n > 0 {
		db.Close()
		return nil, fmt.Errorf("duckdb:%s: %s is a data runtime's store (it has the _spice schema); a duckdb: dataset does not read another runtime's file: "+
			"read that runtime with flightsql: or spice.ai:, or export the table to a file of its own", s.table, path)
	}
	return db, nil
}

// Ping opens the file and checks the table is there; the error lists the tables
// the file has.
func (s *Source) Ping(ctx context.Context) error {
	db, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	err = db.QueryRow(ctx, "SELECT count(*) FROM (SELECT * FROM "+QuoteTable(s.table)+" LIMIT 0)").Scan(&n)
	if err == nil {
		return nil
	}
	if !strings.Contains(err.Error(), "Catalog Error") {
		return fmt.Errorf("duckdb:%s: read %s: %w", s.table, s.cfg.Path, err)
	}
	rows, err := db.Query(ctx, `SELECT DISTINCT schema_name || '.' || table_name FROM duckdb_tables() WHERE NOT internal
		UNION SELECT DISTINCT schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("duckdb:%s: list tables of %s: %w", s.table, s.cfg.Path, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return fmt.Errorf("duckdb:%s: %s holds no tables", s.table, s.cfg.Path)
	}
	return fmt.Errorf("duckdb:%s: no such table in %s; it has %s", s.table, s.cfg.Path, strings.Join(names, ", "))
}
