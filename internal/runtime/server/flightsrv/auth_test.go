//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

const testKey = "s3cret-key"

const rankingsSQL = "select name, count from rankings order by count desc limit 5"

// withKeys requires keys; the tests of wrong keys send many, so the throttle
// lets them all through.
func withKeys(keys ...string) func(*flightsrv.Server) {
	return func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys(keys...)
		s.Throttle = &apikey.Throttle{Burst: 1 << 20}
	}
}

func basicAuth(ctx context.Context, user, password string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization",
		"Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
}

// query runs the rankings with GetFlightInfo and DoGet on ctx's credentials.
func queryRankings(ctx context.Context, c flight.Client) ([]string, error) {
	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(rankingsSQL)})
	if err != nil {
		return nil, err
	}
	s, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return nil, err
	}
	rd, err := flight.NewRecordReader(s)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	var out []string
	for rd.Next() {
		out = append(out, recordRows(rd.RecordBatch())...)
	}
	return out, rd.Err()
}

// TestAPIKeys: with keys, the Go SDK's Basic handshake (key as password)
// returns a bearer token that authorizes calls; a key sent directly works too;
// anything else is Unauthenticated, the handshake included.
func TestAPIKeys(t *testing.T) {
	r := newRecipe(t, nil, withKeys("other-key", testKey))
	c := newPlainClient(t, r.srv)
	ctx := testContext(t)

	// Handshake as the Spice SDKs do: empty user, the key as password.
	authed, err := c.AuthenticateBasicToken(ctx, "", testKey)
	if err != nil {
		t.Fatalf("handshake with the key: %v", err)
	}
	md, _ := metadata.FromOutgoingContext(authed)
	if v := md.Get("authorization"); len(v) != 1 || v[0] == "Bearer "+testKey {
		t.Fatalf("authorization after the handshake = %q, want one token that is not the key", v)
	}
	if got, err := queryRankings(authed, c); err != nil || !equal(got, wantRankings) {
		t.Errorf("with the handshake's token: %q, %v; want %q", got, err, wantRankings)
	}

	for _, tt := range []struct {
		name string
		ctx  context.Context
	}{
		{"bearer key", metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+testKey)},
		{"x-api-key", metadata.AppendToOutgoingContext(ctx, "x-api-key", testKey)},
		{"basic on the call", basicAuth(ctx, "any-user", testKey)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := queryRankings(tt.ctx, c); err != nil || !equal(got, wantRankings) {
				t.Errorf("%q, %v; want %q", got, err, wantRankings)
			}
		})
	}

	for _, tt := range []struct {
		name string
		ctx  context.Context
		msg  string
	}{
		{"no credentials", ctx, "requires an API key"},
		{"wrong bearer", metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer not-a-key"), "invalid credentials"},
		{"wrong x-api-key", metadata.AppendToOutgoingContext(ctx, "x-api-key", "not-a-key"), "invalid credentials"},
		{"wrong basic password", basicAuth(ctx, "", "not-a-key"), "invalid credentials"},
		{"key as user", basicAuth(ctx, testKey, ""), "invalid credentials"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.GetFlightInfo(tt.ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(rankingsSQL)})
			wantCode(t, err, codes.Unauthenticated, tt.msg, "runtime.auth.api-key.keys")
			s, err := c.DoGet(tt.ctx, &flight.Ticket{Ticket: []byte(rankingsSQL)})
			if err == nil {
				_, err = s.Recv() // a stream's status arrives with its first read
			}
			wantCode(t, err, codes.Unauthenticated)
			_, err = c.AuthenticateBasicToken(tt.ctx, "", "not-a-key")
			wantCode(t, err, codes.Unauthenticated)
		})
	}

	// Flight SQL calls (GetTables through the SDK) are covered the same way.
	fsql := newClient(t, r.srv)
	if _, err := fsql.GetTables(ctx, nil); err == nil {
		t.Error("Flight SQL GetTables without credentials succeeded")
	}
	if _, err := fsql.GetTables(authed, nil); err != nil {
		t.Errorf("Flight SQL GetTables with the token: %v", err)
	}
}

// TestAPIKeys_TokenOfAnotherServer: a token is only good for the run of the
// server that issued it.
func TestAPIKeys_TokenOfAnotherServer(t *testing.T) {
	r1 := newRecipe(t, nil, withKeys(testKey))
	r2 := newRecipe(t, nil, withKeys(testKey))
	ctx := testContext(t)
	authed, err := newPlainClient(t, r1.srv).AuthenticateBasicToken(ctx, "", testKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = queryRankings(authed, newPlainClient(t, r2.srv))
	wantCode(t, err, codes.Unauthenticated, "handshake again")
}

// TestTLS serves Flight over TLS with a certificate made in the test: a client
// trusting its CA handshakes and queries; a plaintext client fails.
func TestTLS(t *testing.T) {
	certs := testcert.New(t)
	r := newRecipe(t, nil, func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys(testKey)
		s.GRPCOptions = append(s.GRPCOptions, grpc.Creds(credentials.NewTLS(certs.ServerConfig(t))))
	})
	ctx := testContext(t)
	c, err := flight.NewClientWithMiddleware(r.srv.Addr(), nil, nil,
		grpc.WithTransportCredentials(credentials.NewTLS(certs.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	authed, err := c.AuthenticateBasicToken(ctx, "", testKey)
	if err != nil {
		t.Fatalf("handshake over TLS: %v", err)
	}
	if got, err := queryRankings(authed, c); err != nil || !equal(got, wantRankings) {
		t.Errorf("over TLS: %q, %v; want %q", got, err, wantRankings)
	}

	plain := newPlainClient(t, r.srv)
	if _, err := plain.AuthenticateBasicToken(ctx, "", testKey); err == nil {
		t.Error("a plaintext client completed a handshake with the TLS server")
	}
}

// TestAPIKeyAccess: a read-only key (handshake token or sent directly) queries
// and subscribes; a Flight SQL update is refused with PermissionDenied and a
// hint to use a :rw key; a read-write key gets past that check (the runtime
// takes no writes: Unimplemented). Each handshake's token keeps its key's level.
func TestAPIKeyAccess(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) {
		s.APIKeys = []apikey.Key{{Secret: "reader", Access: apikey.ReadOnly}, {Secret: "admin", Access: apikey.ReadWrite}}
	})
	c := newPlainClient(t, r.srv)
	fsql := newClient(t, r.srv)
	ctx := testContext(t)
	roToken, err := c.AuthenticateBasicToken(ctx, "", "reader")
	if err != nil {
		t.Fatalf("handshake with the read-only key: %v", err)
	}
	rwToken, err := c.AuthenticateBasicToken(ctx, "", "admin")
	if err != nil {
		t.Fatalf("handshake with the read-write key: %v", err)
	}
	roMD, _ := metadata.FromOutgoingContext(roToken)
	rwMD, _ := metadata.FromOutgoingContext(rwToken)
	if ro, rw := roMD.Get("authorization"), rwMD.Get("authorization"); len(ro) != 1 || len(rw) != 1 || ro[0] == rw[0] {
		t.Fatalf("tokens ro=%q rw=%q, want one each and different", ro, rw)
	}

	for _, tt := range []struct {
		name     string
		ctx      context.Context
		isWriter bool
	}{
		{"read-only token", roToken, false},
		{"read-only x-api-key", metadata.AppendToOutgoingContext(ctx, "x-api-key", "reader"), false},
		{"read-only bearer key", metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer reader"), false},
		{"read-write token", rwToken, true},
		{"read-write x-api-key", metadata.AppendToOutgoingContext(ctx, "x-api-key", "admin"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := queryRankings(tt.ctx, c); err != nil || !equal(got, wantRankings) {
				t.Errorf("query: %q, %v; want %q", got, err, wantRankings)
			}
			rd, err := subscribe(tt.ctx, c, subscribeTo("rankings"))
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			if got := next(t, rd); !equal(got.rows, wantRankings) {
				t.Errorf("subscription snapshot %q, want %q", got.rows, wantRankings)
			}
			rd.Release()
			_, err = fsql.ExecuteUpdate(tt.ctx, "delete from orders")
			if tt.isWriter {
				wantCode(t, err, codes.Unimplemented, "takes no writes")
			} else {
				wantCode(t, err, codes.PermissionDenied, "read-only", ":rw")
			}
		})
	}

	_, err = fsql.ExecuteUpdate(metadata.AppendToOutgoingContext(ctx, "x-api-key", "admin:rw"), "delete from orders")
	wantCode(t, err, codes.Unauthenticated, "invalid credentials")
}

// TestNoKeysAllowsWrites: without keys every call passes the access check.
func TestNoKeysAllowsWrites(t *testing.T) {
	r := newRecipe(t, nil, nil)
	_, err := newClient(t, r.srv).ExecuteUpdate(testContext(t), "delete from orders")
	wantCode(t, err, codes.Unimplemented, "takes no writes")
}
