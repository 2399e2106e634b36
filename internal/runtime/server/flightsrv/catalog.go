package flightsrv

import (
	"context"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Table types, as upstream reports them.
const (
	TableTypeDataset = "BASE TABLE"
	TableTypeView    = "VIEW"
)

// catalogInfo answers GetFlightInfo for a catalog command; the command is its own
// ticket, as catalog answers are computed at DoGet.
func (q *sqlService) catalogInfo(ctx context.Context, desc *flight.FlightDescriptor, schema *arrow.Schema) (*flight.FlightInfo, error) {
	q.stampCatalog(ctx)
	return &flight.FlightInfo{
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		FlightDescriptor: desc,
		TotalRecords:     -1,
		TotalBytes:       -1,
		Schema:           flight.SerializeSchema(schema, q.s.Allocator),
	}, nil
}

// stampCatalog sets the headers of a catalog answer: the least position of
// everything served.
func (q *sqlService) stampCatalog(ctx context.Context) {
	pos, _ := q.s.position("")
	setHeader(ctx, pos, engine.CacheBypass)
}

// records builds one record batch with build and streams it.
func (q *sqlService) records(ctx context.Context, schema *arrow.Schema, build func(b *array.RecordBuilder)) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(q.s.Allocator, schema)
	defer b.Release()
	build(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk)
	go flight.StreamChunksFromReader(ctx, rdr, ch)
	return schema, ch, nil
}

func (q *sqlService) GetFlightInfoCatalogs(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.catalogInfo(ctx, desc, schema_ref.Catalogs)
}

func (q *sqlService) DoGetCatalogs(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	return q.records(ctx, schema_ref.Catalogs, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(Catalog)
	})
}

func (q *sqlService) GetFlightInfoSchemas(ctx context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.catalogInfo(ctx, desc, schema_ref.DBSchemas)
}

func (q *sqlService) DoGetDBSchemas(ctx context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	return q.records(ctx, schema_ref.DBSchemas, func(b *array.RecordBuilder) {
		if !catalogMatches(cmd.GetCatalog()) {
			return
		}
		for _, s := range schemas(q.s.engine.Tables()) {
			if like(cmd.GetDBSchemaFilterPattern(), s) {
				b.Field(0).(*array.StringBuilder).Append(Catalog)
				b.Field(1).(*array.StringBuilder).Append(s)
			}
		}
	})
}

func (q *sqlService) GetFlightInfoTableTypes(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.catalogInfo(ctx, desc, schema_ref.TableTypes)
}

func (q *sqlService) DoGetTableTypes(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	return q.records(ctx, schema_ref.TableTypes, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{TableTypeDataset, TableTypeView}, nil)
	})
}

func (q *sqlService) GetFlightInfoTables(ctx context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return q.catalogInfo(ctx, desc, schema_ref.TablesWithIncludedSchema)
	}
	return q.catalogInfo(ctx, desc, schema_ref.Tables)
}

type tableRow struct {
	info   engine.TableInfo
	schema []byte
}

// DoGetTables lists datasets and views matching the command's filters. With
// include_schema, each row carries the Arrow schema the table answers with; a
// table that cannot be read yet (not loaded) gets an empty schema rather than
// hiding the others.
func (q *sqlService) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	var rows []tableRow
	if catalogMatches(cmd.GetCatalog()) {
		types := map[string]bool{}
		for _, t := range cmd.GetTableTypes() {
			types[strings.ToUpper(t)] = true
		}
		for _, t := range q.s.engine.Tables() {
			schema, table := splitName(t.Name)
			if !like(cmd.GetDBSchemaFilterPattern(), schema) || !like(cmd.GetTableNameFilterPattern(), table) || len(types) > 0 && !types[t.Type] {
				continue
			}
			row := tableRow{info: t}
			if cmd.GetIncludeSchema() {
				schema, err := q.tableSchema(ctx, t.Name)
				if err != nil {
					return nil, nil, err
				}
				row.schema = flight.SerializeSchema(withColumnMetadata(schema), q.s.Allocator)
			}
			rows = append(rows, row)
		}
	}
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	return q.records(ctx, schema, func(b *array.RecordBuilder) {
		for _, r := range rows {
			schema, table := splitName(r.info.Name)
			b.Field(0).(*array.StringBuilder).Append(Catalog)
			b.Field(1).(*array.StringBuilder).Append(schema)
			b.Field(2).(*array.StringBuilder).Append(table)
			b.Field(3).(*array.StringBuilder).Append(r.info.Type)
			if cmd.GetIncludeSchema() {
				b.Field(4).(*array.BinaryBuilder).Append(r.schema)
			}
		}
	})
}

// tableSchema reads a table's schema with a query that reads no rows.
func (q *sqlService) tableSchema(ctx context.Context, name string) (*arrow.Schema, error) {
	res, err := q.s.engine.Query(ctx, engine.Query{SQL: "SELECT * FROM " + quoteName(name) + " LIMIT 0", NoCache: true})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		q.s.Logger.Debug("table schema not available", logTable, name, logging.ErrorKey, err)
		return arrow.NewSchema(nil, nil), nil
	}
	defer res.Release()
	return res.Schema, nil
}

func (q *sqlService) GetFlightInfoPrimaryKeys(ctx context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.catalogInfo(ctx, desc, schema_ref.PrimaryKeys)
}

// DoGetPrimaryKeys reports the spicepod's primary_key of a dataset, when the
// server was given PrimaryKeys.
func (q *sqlService) DoGetPrimaryKeys(ctx context.Context, ref flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	var table string
	var cols []string
	if q.s.PrimaryKeys != nil && catalogMatches(ref.Catalog) && (ref.DBSchema == nil || strings.EqualFold(*ref.DBSchema, DBSchema)) {
		for _, t := range q.s.engine.Tables() {
			if strings.EqualFold(t.Name, ref.Table) {
				table, cols = t.Name, q.s.PrimaryKeys(t.Name)
			}
		}
	}
	return q.records(ctx, schema_ref.PrimaryKeys, func(b *array.RecordBuilder) {
		for i, col := range cols {
			b.Field(0).(*array.StringBuilder).Append(Catalog)
			b.Field(1).(*array.StringBuilder).Append(DBSchema)
			b.Field(2).(*array.StringBuilder).Append(table)
			b.Field(3).(*array.StringBuilder).Append(col)
			b.Field(4).(*array.Int32Builder).Append(int32(i + 1))
			b.Field(5).AppendNull()
		}
	})
}

func (q *sqlService) GetFlightInfoSqlInfo(ctx context.Context, cmd flightsql.GetSqlInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	q.stampCatalog(ctx)
	return q.BaseServer.GetFlightInfoSqlInfo(ctx, cmd, desc)
}

func (q *sqlService) DoGetSqlInfo(ctx context.Context, cmd flightsql.GetSqlInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	q.stampCatalog(ctx)
	return q.BaseServer.DoGetSqlInfo(ctx, cmd)
}

// catalogMatches reports whether a requested catalog (nil: any) is ours.
func catalogMatches(c *string) bool {
	return c == nil || strings.EqualFold(*c, Catalog)
}

// like matches s against a SQL LIKE pattern (nil: any): % is any run of
// characters, _ any one character, \ escapes the next. Matching ignores case, as
// table names do in this runtime (DuckDB folds identifiers).
func like(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	var re strings.Builder
	re.WriteString("(?is)^")
	escaped := false
	for _, r := range *pattern {
		switch {
		case escaped:
			re.WriteString(regexp.QuoteMeta(string(r)))
			escaped = false
		case r == '\\':
			escaped = true
		case r == '%':
			re.WriteString(".*")
		case r == '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	ok, err := regexp.MatchString(re.String(), s)
	return err == nil && ok
}
