//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

func TestParseParams(t *testing.T) {
	for _, tc := range []struct {
		params  map[string]string
		target  string
		tls     bool
		wantErr string
	}{
		{params: map[string]string{"flightsql_endpoint": "http://accelerated:50051"}, target: "accelerated:50051"},
		{params: map[string]string{"flightsql_endpoint": "https://flight.example.com"}, target: "flight.example.com:443", tls: true},
		{params: map[string]string{"flightsql_endpoint": "grpc+tls://10.0.0.1:443"}, target: "10.0.0.1:443", tls: true},
		{params: map[string]string{"flightsql_endpoint": "localhost:50051"}, target: "localhost:50051"},
		{params: map[string]string{"flightsql_endpoint": "http://[::1]:50051/"}, target: "[::1]:50051"},
		{params: map[string]string{}, wantErr: "flightsql_endpoint is required"},
		{params: map[string]string{"flightsql_endpoint": "localhost"}, wantErr: "not an endpoint"},
		{params: map[string]string{"flightsql_endpoint": "ftp://host:21"}, wantErr: "scheme ftp"},
		{params: map[string]string{"flightsql_endpoint": "http://host:1/path"}, wantErr: "path"},
		{params: map[string]string{"flightsql_endpoint": "http://h:1", "flightsql_pasword": "x"}, wantErr: "flightsql_pasword"},
	} {
		cfg, err := flightsqlsrc.ParseParams(tc.params)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err=%v, want one mentioning %q", tc.params, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.params, err)
			continue
		}
		if cfg.Endpoint.Target != tc.target || cfg.Endpoint.TLS != tc.tls {
			t.Errorf("%v: target=%s tls=%v, want %s %v", tc.params, cfg.Endpoint.Target, cfg.Endpoint.TLS, tc.target, tc.tls)
		}
	}
}

func TestScan(t *testing.T) {
	u := newUpstream(t)
	endpoint := "http://" + u.srv.Addr()
	// Credentials: a Basic handshake, then the bearer token on every call.
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint, "flightsql_username": "reader", "flightsql_password": "secret"}, "orders")

	rows, fields, pos, err := scan(t, src, engine.ScanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fields, []string{"id", "product_id", "count"}) || len(rows) != 3 || pos != 100 {
		t.Errorf("scan: fields=%q rows=%q position=%s, want 3 rows of id, product_id, count at 0/64", fields, rows, pos)
	}
	rows, fields, _, err = scan(t, src, engine.ScanRequest{Columns: []string{"count", "id"}, Where: "product_id <> 2", Since: &engine.Bound{Column: "id", Value: int64(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fields, []string{"count", "id"}) || !slices.Equal(rows, []string{"30|3"}) {
		t.Errorf("narrowed scan: fields=%q rows=%q, want [count id] [30|3]", fields, rows)
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Errorf("ping: %v", err)
	}

	// A table the upstream does not have: the error lists what it has.
	_, _, _, err = scan(t, newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "nope"), engine.ScanRequest{})
	for _, part := range []string{"table nope not found", endpoint, "spice.public.orders, spice.public.products, spice.public.rankings"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("unknown table: err=%v, want one mentioning %q", err, part)
		}
	}
	// A pattern matching several tables is ambiguous.
	_, _, _, err = scan(t, newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "%"), engine.ScanRequest{})
	if err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous table: err=%v, want one saying ambiguous", err)
	}
	// A scan that fails upstream names the endpoint and carries the upstream's message.
	_, _, _, err = scan(t, src, engine.ScanRequest{Where: "no_such_column = 1"})
	if err == nil || !strings.Contains(err.Error(), endpoint) || !strings.Contains(err.Error(), "no_such_column") {
		t.Errorf("bad filter: err=%v, want one naming the endpoint and the column", err)
	}
}

func TestScanUpstreamDown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	src := newSource(t, map[string]string{"flightsql_endpoint": "http://" + addr}, "rankings")
	_, _, _, err = scan(t, src, engine.ScanRequest{})
	if err == nil || !strings.Contains(err.Error(), "http://"+addr) || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("err=%v, want one saying the endpoint is unavailable", err)
	}
}

// TestWatchUnsupported: a Flight SQL server of another kind has no spice.watch;
// Watch says so at once, so that the engine polls instead.
func TestWatchUnsupported(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	flight.RegisterFlightServiceServer(gs, flightsql.NewFlightServer(&flightsql.BaseServer{}))
	go gs.Serve(lis)
	defer gs.Stop()

	src := newSource(t, map[string]string{"flightsql_endpoint": lis.Addr().String()}, "rankings")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = src.Watch(ctx, func() { t.Error("changed called") })
	if err == nil || !strings.Contains(err.Error(), "cannot push changes") {
		t.Errorf("err=%v, want one saying the upstream cannot push changes", err)
	}
	if ctx.Err() != nil {
		t.Error("Watch kept retrying instead of giving up")
	}
}
