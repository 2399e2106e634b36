package flightsqlsrc

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// table is the upstream table a dataset reads.
type table struct {
	ref    string        // as written in from:, used in the query
	name   string        // as the upstream lists it
	kind   string        // BASE TABLE, VIEW, ...
	schema *arrow.Schema // what it answers with; no fields when the upstream could not tell
}

// listed is one row of a GetTables answer.
type listed struct {
	catalog, schema, name, kind string
	arrow                       *arrow.Schema
}

func (l listed) String() string {
	parts := []string{}
	for _, p := range []string{l.catalog, l.schema, l.name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// discover finds the table with CommandGetTables{table_name_filter_pattern,
// include_schema}; exactly one row must match.
func (s *Source) discover(ctx context.Context, c *flightsql.Client) (table, error) {
	parts := strings.Split(s.table, ".")
	opts := &flightsql.GetTablesOpts{IncludeSchema: true}
	name := parts[len(parts)-1]
	opts.TableNameFilterPattern = &name
	if len(parts) >= 2 {
		opts.DbSchemaFilterPattern = &parts[len(parts)-2]
	}
	if len(parts) >= 3 {
		catalog := strings.Join(parts[:len(parts)-2], ".")
		opts.Catalog = &catalog
	}
	rows, err := s.listTables(ctx, c, opts)
	if err != nil {
		return table{}, s.explain("find", err)
	}
	if len(rows) > 1 {
		// The pattern's _ matches any character: prefer the exact name.
		var exact []listed
		for _, r := range rows {
			if strings.EqualFold(r.name, name) {
				exact = append(exact, r)
			}
		}
		if len(exact) > 0 {
			rows = exact
		}
	}
	switch len(rows) {
	case 1:
		r := rows[0]
		if r.arrow == nil {
			r.arrow = arrow.NewSchema(nil, nil)
		}
		return table{ref: s.table, name: r.name, kind: r.kind, schema: r.arrow}, nil
	case 0:
		all, err := s.listTables(ctx, c, &flightsql.GetTablesOpts{})
		if err != nil {
			return table{}, s.explain("find", err)
		}
		names := make([]string, len(all))
		for i, r := range all {
			names[i] = r.String()
		}
		list := strings.Join(names, ", ")
		if list == "" {
			list = "nothing"
		}
		return table{}, fmt.Errorf("table %s not found at flightsql endpoint %s; it lists: %s. Fix from: flightsql:<table> or the upstream's spicepod", s.table, s.cfg.Endpoint, list)
	default:
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.String()
		}
		return table{}, fmt.Errorf("table %s is ambiguous at flightsql endpoint %s: %s match; qualify it in from:, e.g. flightsql:%s", s.table, s.cfg.Endpoint, strings.Join(names, ", "), names[0])
	}
}

// listTables runs GetTables and reads every row.
func (s *Source) listTables(ctx context.Context, c *flightsql.Client, opts *flightsql.GetTablesOpts) ([]listed, error) {
	desc, err := tablesDescriptor(opts)
	if err != nil {
		return nil, err
	}
	var out []listed
	err = Fetch(ctx, c.Client, desc, s.Allocator, func(snap engine.Snapshot) error {
		for snap.Reader.Next() {
			rows, err := listedRows(snap.Reader.RecordBatch(), opts.IncludeSchema, s)
			if err != nil {
				return err
			}
			out = append(out, rows...)
		}
		return snap.Reader.Err()
	})
	return out, err
}

func listedRows(rec arrow.RecordBatch, withSchema bool, s *Source) ([]listed, error) {
	str := func(col, i int) string {
		a, ok := rec.Column(col).(*array.String)
		if !ok || a.IsNull(i) {
			return ""
		}
		return strings.Clone(a.Value(i))
	}
	if rec.NumCols() < 4 || withSchema && rec.NumCols() < 5 {
		return nil, fmt.Errorf("GetTables answer has %d columns; the upstream is not a Flight SQL server", rec.NumCols())
	}
	var out []listed
	for i := 0; i < int(rec.NumRows()); i++ {
		l := listed{catalog: str(0, i), schema: str(1, i), name: str(2, i), kind: str(3, i)}
		if withSchema {
			if b, ok := rec.Column(4).(*array.Binary); ok && !b.IsNull(i) && len(b.Value(i)) > 0 {
				schema, err := flight.DeserializeSchema(b.Value(i), s.Allocator)
				if err != nil {
					return nil, fmt.Errorf("schema of %s: %w", l.name, err)
				}
				l.arrow = schema
			}
		}
		out = append(out, l)
	}
	return out, nil
}

func tablesDescriptor(opts *flightsql.GetTablesOpts) (*flight.FlightDescriptor, error) {
	return commandDescriptor((*pb.CommandGetTables)(opts))
}

// selectSQL is the scan's query: the columns (all of the table's, or req's), from
// the table as written in from:, with req's filter.
func selectSQL(t table, req engine.ScanRequest) (string, error) {
	cols := req.Columns
	if len(cols) == 0 {
		for _, f := range t.schema.Fields() {
			cols = append(cols, f.Name)
		}
	}
	return engine.ScanSQL(t.ref, cols, req)
}
