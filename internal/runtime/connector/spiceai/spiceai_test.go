//go:build duckdb_arrow

package spiceai_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/spiceai"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

func newSource(t *testing.T, params map[string]string, table string) *spiceai.Source {
	t.Helper()
	cfg, err := spiceai.ParseParams(params)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := spiceai.NewSource(cfg, table)
	src.Allocator = mem
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

func scan(t *testing.T, src engine.Source) ([]string, []string, position.LSN, error) {
	t.Helper()
	var rows, fields []string
	var pos position.LSN
	err := src.Scan(context.Background(), engine.ScanRequest{}, func(s engine.Snapshot) error {
		pos = s.Position
		for _, f := range s.Reader.Schema().Fields() {
			fields = append(fields, f.Name)
		}
		for s.Reader.Next() {
			rec := s.Reader.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				vals := make([]string, rec.NumCols())
				for j, col := range rec.Columns() {
					vals[j] = strings.Clone(col.ValueStr(i))
				}
				rows = append(rows, strings.Join(vals, "|"))
			}
		}
		return s.Reader.Err()
	})
	return rows, fields, pos, err
}

func TestParseParams(t *testing.T) {
	cfg, err := spiceai.ParseParams(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Endpoint.Target, "flight.spiceai.io:443"; got != want || !cfg.Endpoint.TLS {
		t.Errorf("default endpoint=%s tls=%v, want %s over TLS", got, cfg.Endpoint.TLS, want)
	}
	if _, err := spiceai.ParseParams(map[string]string{"spiceai_apikey": "x"}); err == nil || !strings.Contains(err.Error(), "spiceai_apikey") {
		t.Errorf("misspelt param: err=%v, want one naming it", err)
	}
}

// TestScan reads a table of a runtime over plain Flight, as upstream's spice.ai
// connector does.
func TestScan(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, nil)
	endpoint := "http://" + srv.Addr()

	src := newSource(t, map[string]string{"spiceai_endpoint": endpoint, "spiceai_api_key": "key"}, "rankings")
	rows, fields, pos, err := scan(t, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nintendo|30", "the most delicious chocalate|20", "the most beautiful flower|10"}
	if !slices.Equal(rows, want) || !slices.Equal(fields, []string{"name", "count"}) || pos != 100 {
		t.Errorf("rows=%q fields=%q position=%s, want %q of name, count at 0/64", rows, fields, pos, want)
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Errorf("ping: %v", err)
	}

	_, _, _, err = scan(t, newSource(t, map[string]string{"spiceai_endpoint": endpoint}, "nope"))
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), endpoint) {
		t.Errorf("unknown table: err=%v, want one naming the table and the endpoint", err)
	}
}

// TestSubscribe: a spice.ai dataset with refresh_mode: changes subscribes to
// the runtime's view as a flightsql one does, with the API key's handshake.
func TestSubscribe(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) { s.APIKeys = apikey.ReadOnlyKeys("key") })

	src := newSource(t, map[string]string{"spiceai_endpoint": "http://" + srv.Addr(), "spiceai_api_key": "key"}, "rankings")
	st, err := src.Subscribe(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rd := st.Snapshot()
	defer rd.Release()
	var rows []string
	for rd.Next() {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			rows = append(rows, rec.Column(0).ValueStr(i)+"|"+rec.Column(1).ValueStr(i))
		}
	}
	slices.Sort(rows)
	want := []string{"nintendo|30", "the most beautiful flower|10", "the most delicious chocalate|20"}
	if err := rd.Err(); err != nil || !st.Complete() || !slices.Equal(rows, want) || st.Position != 100 || st.Mode == "" {
		t.Errorf("snapshot %q at %s (mode %q, complete %v, err %v), want %q at 0/64 with a mode", rows, st.Position, st.Mode, st.Complete(), err, want)
	}
}
