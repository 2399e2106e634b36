//go:build duckdb_arrow

package spiceai_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// TestScanWithKeyAndTLS reads a runtime that requires an API key, over TLS
// verified with spiceai_tls_ca_certificate_file; a wrong key is refused with an
// error naming spiceai_api_key.
func TestScanWithKeyAndTLS(t *testing.T) {
	certs := testcert.New(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys("the-key")
		s.GRPCOptions = append(s.GRPCOptions, grpc.Creds(credentials.NewTLS(certs.ServerConfig(t))))
	})
	endpoint := "grpc+tls://" + srv.Addr()

	src := newSource(t, map[string]string{"spiceai_endpoint": endpoint, "spiceai_api_key": "the-key",
		"spiceai_tls_ca_certificate_file": certs.CAFile}, "rankings")
	rows, _, _, err := scan(t, src)
	want := []string{"nintendo|30", "the most delicious chocalate|20", "the most beautiful flower|10"}
	if err != nil || !slices.Equal(rows, want) {
		t.Fatalf("rows=%q err=%v, want %q", rows, err, want)
	}

	bad := newSource(t, map[string]string{"spiceai_endpoint": endpoint, "spiceai_api_key": "wrong",
		"spiceai_tls_ca_certificate_file": certs.CAFile}, "rankings")
	_, _, _, err = scan(t, bad)
	if err == nil || !strings.Contains(err.Error(), "refused the API key") || !strings.Contains(err.Error(), "spiceai_api_key") {
		t.Errorf("wrong key: err=%v, want one naming spiceai_api_key", err)
	}
}
