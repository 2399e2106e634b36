package flightsrv

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// sqlService implements Flight SQL over the engine. Unimplemented commands
// (transactions, updates, Substrait, ingestion) answer Unimplemented through
// the embedded BaseServer.
type sqlService struct {
	flightsql.BaseServer
	s *Server
}

// run executes a query with the request's minimum position and cache control and
// stamps the response headers with what the answer reflects.
func (q *sqlService) run(ctx context.Context, sql string, args []any) (*engine.Result, error) {
	query, err := queryOf(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	res, err := q.s.engine.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	setHeader(ctx, res.Position, res.Cache)
	return res, nil
}

// flightInfo executes a query and holds its result for the DoGet of the returned
// ticket, which runs payload again should the result be gone by then.
func (q *sqlService) flightInfo(ctx context.Context, sql string, args []any, kind byte, payload []byte, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	res, err := q.run(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(withColumnMetadata(res.Schema), q.s.Allocator),
		FlightDescriptor: desc,
		TotalRecords:     res.Rows,
		TotalBytes:       res.Bytes,
	}
	id := q.s.tickets.put(res) // res belongs to the tickets from here on
	ticket, err := flightsql.CreateStatementQueryTicket(encodeTicket(id, kind, payload))
	if err != nil {
		return nil, err
	}
	info.Endpoint = []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}}
	return info, nil
}

// stream sends a result's records, releasing it when done.
func (q *sqlService) stream(ctx context.Context, res *engine.Result) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema := withColumnMetadata(res.Schema)
	recs := withSchema(schema, res.Records)
	res.Release()
	rdr, err := array.NewRecordReader(schema, recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk)
	go flight.StreamChunksFromReader(ctx, rdr, ch)
	return schema, ch, nil
}

// doGetSQL runs sql and streams the answer (a ticket that is raw SQL, or a
// statement ticket whose held result is gone).
func (q *sqlService) doGetSQL(ctx context.Context, sql string, args []any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	res, err := q.run(ctx, sql, args)
	if err != nil {
		return nil, nil, err
	}
	return q.stream(ctx, res)
}

// describe returns the schema of a statement's result without reading its rows,
// binding NULL to each of its params placeholders.
func (q *sqlService) describe(ctx context.Context, sql string, params int) (*arrow.Schema, position.LSN, error) {
	args := make([]any, params)
	body := strings.TrimRight(strings.TrimSpace(sql), "; \t\r\n")
	query, err := queryOf(ctx, "SELECT * FROM (\n"+body+"\n) AS spice_describe LIMIT 0", args)
	if err != nil {
		return nil, 0, err
	}
	query.NoCache = true
	res, err := q.s.engine.Query(ctx, query)
	var qe *engine.QueryError
	if errors.As(err, &qe) {
		// Not wrappable as a subquery: run it as written, so that the error, if
		// any, is the one the statement itself gets (a refused INSERT, say).
		query.SQL = sql
		res, err = q.s.engine.Query(ctx, query)
	}
	if err != nil {
		return nil, 0, err
	}
	defer res.Release()
	return res.Schema, res.Position, nil
}

func (q *sqlService) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.flightInfo(ctx, cmd.GetQuery(), nil, kindSQL, []byte(cmd.GetQuery()), desc)
}

func (q *sqlService) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	return q.schemaResult(ctx, cmd.GetQuery())
}

func (q *sqlService) schemaResult(ctx context.Context, sql string) (*flight.SchemaResult, error) {
	schema, pos, err := q.describe(ctx, sql, countParams(sql))
	if err != nil {
		return nil, err
	}
	setHeader(ctx, pos, engine.CacheBypass)
	return &flight.SchemaResult{Schema: flight.SerializeSchema(withColumnMetadata(schema), q.s.Allocator)}, nil
}

func (q *sqlService) DoGetStatement(ctx context.Context, cmd flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	res, err := q.statementResult(ctx, cmd.GetStatementHandle())
	if err != nil {
		return nil, nil, err
	}
	return q.stream(ctx, res)
}

// statementResult answers a statement ticket: the result GetFlightInfo holds
// for it, else its query run again. The response headers are set.
func (q *sqlService) statementResult(ctx context.Context, handle []byte) (*engine.Result, error) {
	id, kind, payload, err := decodeTicket(handle)
	if err != nil {
		return nil, err
	}
	if res := q.s.tickets.take(id); res != nil {
		setHeader(ctx, res.Position, res.Cache)
		return res, nil
	}
	switch kind {
	case kindSQL:
		return q.run(ctx, string(payload), nil)
	case kindPrepared:
		st, args, err := q.bound(payload)
		if err != nil {
			return nil, err
		}
		return q.run(ctx, st.sql, args)
	default:
		return nil, invalidf("ticket kind %q was not issued by this server; call GetFlightInfo and use its ticket", kind)
	}
}

// CreatePreparedStatement describes the statement's result by running it with
// NULL parameters under LIMIT 0, and its parameters with ParamTypes. Clients
// may send values of other types: the server binds what arrives.
func (q *sqlService) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var out flightsql.ActionCreatePreparedStatementResult
	st := &prepared{sql: req.GetQuery(), params: countParams(req.GetQuery())}
	schema, _, err := q.describe(ctx, st.sql, st.params)
	switch {
	case err == nil:
		st.schema = withColumnMetadata(schema)
	case st.params > 0 && isQueryError(err):
		// Some statements cannot run with NULL parameters; their schema is
		// known at execution.
	default:
		return out, err
	}
	notUpdate := false
	out.Handle = []byte(q.s.prepared.add(st))
	out.DatasetSchema = st.schema
	out.ParameterSchema = q.paramSchema(ctx, st)
	out.IsUpdate = &notUpdate
	return out, nil
}

func isQueryError(err error) bool {
	var qe *engine.QueryError
	return errors.As(err, &qe)
}

func (q *sqlService) ClosePreparedStatement(_ context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	if h := req.GetPreparedStatementHandle(); len(h) >= idLen {
		q.s.prepared.remove(string(h[:idLen]))
	}
	return nil
}

// DoPutPreparedStatementQuery binds one row of parameters. The returned handle
// carries the parameters, so binding keeps no state and concurrent executions of
// one statement with different parameters do not interfere.
func (q *sqlService) DoPutPreparedStatementQuery(_ context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	h := cmd.GetPreparedStatementHandle()
	if len(h) < idLen {
		return nil, invalidf("prepared statement handle of %d bytes was not issued by this server; prepare the statement first", len(h))
	}
	id := h[:idLen]
	if _, err := q.s.prepared.get(string(id)); err != nil {
		return nil, err
	}
	var rec arrow.RecordBatch
	defer func() {
		if rec != nil {
			rec.Release()
		}
	}()
	for rdr.Next() {
		r := rdr.RecordBatch()
		if r.NumRows() == 0 {
			continue
		}
		if rec != nil || r.NumRows() > 1 {
			return nil, invalidf("parameters bind more than one row; execute the statement once per row")
		}
		r.Retain()
		rec = r
	}
	if err := rdr.Err(); err != nil {
		return nil, invalidf("read parameters: %v", err)
	}
	if rec == nil {
		return id, nil
	}
	if _, err := argsOf(rec); err != nil {
		return nil, err
	}
	params, err := encodeParams(rec, q.s.Allocator)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(nil), id...), params...), nil
}

// bound resolves a (bound) prepared statement handle to its statement and args.
func (q *sqlService) bound(handle []byte) (*prepared, []any, error) {
	if len(handle) < idLen {
		return nil, nil, invalidf("prepared statement handle of %d bytes was not issued by this server; prepare the statement first", len(handle))
	}
	st, err := q.s.prepared.get(string(handle[:idLen]))
	if err != nil {
		return nil, nil, err
	}
	if len(handle) == idLen {
		return st, nil, nil
	}
	args, err := decodeParams(handle[idLen:], q.s.Allocator)
	if err != nil {
		return nil, nil, err
	}
	return st, args, nil
}

func (q *sqlService) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	h := cmd.GetPreparedStatementHandle()
	st, args, err := q.bound(h)
	if err != nil {
		return nil, err
	}
	return q.flightInfo(ctx, st.sql, args, kindPrepared, h, desc)
}

func (q *sqlService) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return q.doGetPrepared(ctx, cmd.GetPreparedStatementHandle())
}

func (q *sqlService) doGetPrepared(ctx context.Context, handle []byte) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	st, args, err := q.bound(handle)
	if err != nil {
		return nil, nil, err
	}
	return q.doGetSQL(ctx, st.sql, args)
}

func (q *sqlService) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	st, _, err := q.bound(cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return q.schemaResult(ctx, st.sql)
}

// paramSchema describes a statement's parameters, named 1..n, when the server
// has ParamTypes; nil otherwise or when they cannot be told.
func (q *sqlService) paramSchema(ctx context.Context, st *prepared) *arrow.Schema {
	if st.params == 0 || q.s.ParamTypes == nil {
		return nil
	}
	types, err := q.s.ParamTypes(ctx, st.sql)
	if err != nil || len(types) == 0 {
		return nil
	}
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		fields[i] = arrow.Field{Name: strconv.Itoa(i + 1), Type: t, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}
