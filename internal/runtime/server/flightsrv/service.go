package flightsrv

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// flightSQLTypePrefix starts the type URL of every Flight SQL command.
const flightSQLTypePrefix = "type.googleapis.com/arrow.flight.protocol.sql."

// service answers plain Flight around the Flight SQL router: command and ticket
// bytes that are not a Flight SQL message are SQL text, the handshake answers at
// once, and the spice.watch action streams change notices.
type service struct {
	flight.FlightServer // the Flight SQL router
	s                   *Server
	sql                 *sqlService
}

// isFlightSQL reports whether b is a protobuf Any holding a Flight SQL message.
func isFlightSQL(b []byte) bool {
	// An Any starts with its type URL, field 1 (tag 0x0a); SQL text never does,
	// so a query ticket is told apart without parsing it.
	if len(b) == 0 || b[0] != 0x0a {
		return false
	}
	var a anypb.Any
	if err := proto.Unmarshal(b, &a); err != nil {
		return false
	}
	return strings.HasPrefix(a.GetTypeUrl(), flightSQLTypePrefix)
}

// rawSQL returns the SQL a plain Flight descriptor asks for: its command bytes
// when they are not Flight SQL, or SELECT * of the table a path names.
func rawSQL(desc *flight.FlightDescriptor) (string, bool, error) {
	if desc.GetType() == flight.DescriptorPATH {
		if len(desc.GetPath()) == 0 {
			return "", true, invalidf("descriptor has an empty path; name a dataset or view")
		}
		parts := make([]string, len(desc.GetPath()))
		for i, p := range desc.GetPath() {
			parts[i] = engine.Ident(p)
		}
		return "SELECT * FROM " + strings.Join(parts, "."), true, nil
	}
	if isFlightSQL(desc.GetCmd()) {
		return "", false, nil
	}
	if strings.TrimSpace(string(desc.GetCmd())) == "" {
		return "", true, invalidf("descriptor has an empty command; send SQL text or a Flight SQL command")
	}
	return string(desc.GetCmd()), true, nil
}

// Handshake answers at once, without waiting for a client message: the Go SDK
// sends none and reads the header first. Without API keys any Basic
// credentials are accepted; with keys the password must be one (auth.go). The
// bearer token returned is what clients send on later calls; it carries the
// key's access (read-only or read-write).
func (v *service) Handshake(stream flight.FlightService_HandshakeServer) error {
	a, err := v.s.handshakeAuth(stream.Context())
	if err != nil {
		return err
	}
	token := v.s.tokens[a]
	if err := stream.SetHeader(metadata.Pairs(wire.MetadataAuthorization, "Bearer "+token)); err != nil {
		return err
	}
	return stream.Send(&flight.HandshakeResponse{Payload: []byte(token)})
}

// checkBasic refuses Basic credentials that are not base64 of user:password.
func checkBasic(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(wire.MetadataAuthorization) {
		scheme, cred, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Basic") {
			continue
		}
		cred = strings.TrimSpace(cred)
		b, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(cred)
		}
		if err != nil || !strings.Contains(string(b), ":") {
			return ErrUnauthenticated
		}
	}
	return nil
}

func (v *service) GetFlightInfo(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	sql, raw, err := rawSQL(desc)
	if err != nil {
		return nil, err
	}
	if !raw {
		return v.FlightServer.GetFlightInfo(ctx, desc)
	}
	return v.sql.flightInfo(ctx, sql, nil, kindSQL, []byte(sql), desc)
}

func (v *service) GetSchema(ctx context.Context, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	sql, raw, err := rawSQL(desc)
	if err != nil {
		return nil, err
	}
	if !raw {
		return v.FlightServer.GetSchema(ctx, desc)
	}
	return v.sql.schemaResult(ctx, sql)
}

// DoGet runs a ticket that is SQL text directly, and answers a Flight SQL
// statement ticket itself; other Flight SQL tickets go to the router. Both
// answers are sent by send, which sends a cached result as the messages
// encoded by its first answer.
func (v *service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	ctx := stream.Context()
	if isFlightSQL(t.GetTicket()) {
		handle, ok := statementTicket(t.GetTicket())
		if !ok {
			return v.FlightServer.DoGet(t, stream)
		}
		res, err := v.sql.statementResult(ctx, handle)
		if err != nil {
			return err
		}
		return send(ctx, stream, res)
	}
	if strings.TrimSpace(string(t.GetTicket())) == "" {
		return invalidf("empty ticket; use the ticket of a GetFlightInfo answer, or SQL text")
	}
	res, err := v.sql.run(ctx, string(t.GetTicket()), nil)
	if err != nil {
		return err
	}
	return send(ctx, stream, res)
}

// statementTicketType is the type URL of a Flight SQL statement ticket.
const statementTicketType = flightSQLTypePrefix + "TicketStatementQuery"

// statementTicket returns the statement handle of a Flight SQL statement
// ticket (the ticket of GetFlightInfo's answer); ok is false for any other
// ticket.
func statementTicket(b []byte) (handle []byte, ok bool) {
	var a anypb.Any
	if err := proto.Unmarshal(b, &a); err != nil || a.GetTypeUrl() != statementTicketType {
		return nil, false
	}
	var t pb.TicketStatementQuery
	if err := proto.Unmarshal(a.GetValue(), &t); err != nil {
		return nil, false
	}
	return t.GetStatementHandle(), true
}

func (v *service) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if a.GetType() == wire.ActionWatch {
		return v.s.watch(a.GetBody(), stream)
	}
	return v.FlightServer.DoAction(a, stream)
}

// ListActions lists the actions this server performs: prepared statements
// and spice.watch (the Flight SQL library lists every action it knows of,
// transactions and cancellation included, which this server answers
// Unimplemented).
func (v *service) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range []*flight.ActionType{
		{Type: flightsql.CreatePreparedStatementActionType, Description: "Flight SQL: prepare a statement"},
		{Type: flightsql.ClosePreparedStatementActionType, Description: "Flight SQL: close a prepared statement"},
		{Type: wire.ActionWatch, Description: watchDescription},
	} {
		if err := stream.Send(a); err != nil {
			return err
		}
	}
	return nil
}

// position returns the watermark of a dataset or view, or the least of all when
// table is empty.
func (s *Server) position(table string) (position.LSN, error) {
	if table != "" {
		return s.engine.Watermark(table)
	}
	var out position.LSN
	for i, t := range s.engine.Tables() {
		wm, err := s.engine.Watermark(t.Name)
		if err != nil {
			return 0, err
		}
		if i == 0 || wm < out {
			out = wm
		}
	}
	return out, nil
}
