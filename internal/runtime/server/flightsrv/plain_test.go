//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

func newPlainClient(t *testing.T, srv *flightsrv.Server) flight.Client {
	t.Helper()
	c, err := flight.NewClientWithMiddleware(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestPlainFlight does what the Spice Go SDK does: a Basic handshake with an
// empty user and password that sends no message, then GetFlightInfo with raw SQL
// bytes and DoGet of the first endpoint, with the bearer token.
func TestPlainFlight(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newPlainClient(t, r.srv)
	ctx := testContext(t)

	basic := metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(":")))
	hs, err := c.Handshake(basic)
	if err != nil {
		t.Fatal(err)
	}
	// The header arrives before the client sends anything.
	hdr, err := hs.Header()
	if err != nil {
		t.Fatal(err)
	}
	auth := hdr.Get("authorization")
	if len(auth) != 1 || !strings.HasPrefix(auth[0], "Bearer ") || len(auth[0]) <= len("Bearer ") {
		t.Fatalf("authorization header=%q, want one Bearer token", auth)
	}
	if _, err := hs.Recv(); err != nil {
		t.Fatalf("handshake response: %v", err)
	}
	hs.CloseSend()

	// The SDK's own call succeeds too.
	if _, err := c.AuthenticateBasicToken(ctx, "", ""); err != nil {
		t.Fatalf("AuthenticateBasicToken: %v", err)
	}

	call := metadata.AppendToOutgoingContext(ctx, "authorization", auth[0])
	sql := "select name, count from rankings order by count desc limit 5"
	info, err := c.GetFlightInfo(call, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(sql)})
	if err != nil {
		t.Fatal(err)
	}
	got, fields := readTicket(t, c, call, info.Endpoint[0].Ticket.Ticket)
	if !equal(got, wantRankings) {
		t.Errorf("rows=%q, want %q", got, wantRankings)
	}
	if want := []string{"name", "count"}; !slices.Equal(fields, want) {
		t.Errorf("fields=%q, want %q", fields, want)
	}

	// A ticket that is SQL text runs directly; the schema comes also for no rows.
	got, fields = readTicket(t, c, call, []byte("SELECT id, name FROM products WHERE id = 3"))
	if want := []string{"3|nintendo"}; !slices.Equal(got, want) || !slices.Equal(fields, []string{"id", "name"}) {
		t.Errorf("raw ticket rows=%q fields=%q, want %q and [id name]", got, fields, want)
	}
	got, fields = readTicket(t, c, call, []byte("SELECT id, name FROM products WHERE false"))
	if len(got) != 0 || !slices.Equal(fields, []string{"id", "name"}) {
		t.Errorf("zero rows: rows=%q fields=%q, want none and [id name]", got, fields)
	}

	// A PATH descriptor reads the table.
	info, err = c.GetFlightInfo(call, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"products"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readTicket(t, c, call, info.Endpoint[0].Ticket.Ticket); len(got) != 3 {
		t.Errorf("path rows=%q, want 3", got)
	}

	// GetSchema with raw SQL, as the spice.ai connector asks for a table's schema.
	res, err := c.GetSchema(call, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("SELECT * FROM orders")})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := flight.DeserializeSchema(res.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldNames(schema), []string{"id", "product_id", "count"}; !slices.Equal(got, want) {
		t.Errorf("schema fields=%q, want %q", got, want)
	}

	// Errors of raw SQL tickets arrive on the stream.
	s, err := c.DoGet(call, &flight.Ticket{Ticket: []byte("SELECT * FROM nope")})
	if err == nil {
		_, err = s.Recv()
	}
	wantCode(t, err, codes.InvalidArgument, "nope")
}

// readTicket reads a DoGet stream whole and returns its rows and field names.
func readTicket(t *testing.T, c flight.Client, ctx context.Context, ticket []byte) ([]string, []string) {
	t.Helper()
	s, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rd, err := flight.NewRecordReader(s, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	defer rd.Release()
	return rows(t, rd), fieldNames(rd.Schema())
}
