package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

const metricsText = `# HELP process_resident_memory_bytes_total not this one
process_resident_memory_bytes_total 1
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.234567e+08
`

func TestParseRSS(t *testing.T) {
	got, ok := bench.ParseRSS(strings.NewReader(metricsText))
	if !ok || got != 123456700 {
		t.Fatalf("rss=%d %v, want 123456700", got, ok)
	}
	if _, ok := bench.ParseRSS(strings.NewReader("go_goroutines 3\n")); ok {
		t.Fatal("found rss in metrics without it")
	}
	got, ok = bench.ParseRSS(strings.NewReader(`process_resident_memory_bytes{job="x"} 42` + "\n"))
	if !ok || got != 42 {
		t.Fatalf("labelled rss=%d %v, want 42", got, ok)
	}
}

func TestParseMemUsage(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"123.5MiB / 1.944GiB\n", 129499136},
		{"2GiB / 8GiB", 2 << 30},
		{"512KiB / 1GiB", 512 << 10},
	} {
		got, err := bench.ParseMemUsage(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseMemUsage(%q)=%d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if _, err := bench.ParseMemUsage("--"); err == nil {
		t.Error("parsed garbage")
	}
}

func TestReadMemory(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(metricsText))
	}))
	defer srv.Close()
	m := bench.ReadMemory(context.Background(), srv.Client(), "", bench.MemorySource{Runtime: "accelerated", MetricsURL: srv.URL + "/metrics"})
	if m.Bytes != 123456700 || m.Source != srv.URL+"/metrics" {
		t.Fatalf("memory=%+v", m)
	}
	none := bench.ReadMemory(context.Background(), srv.Client(), "", bench.MemorySource{Runtime: "materialized"})
	if none.Bytes != 0 || none.Source != "n/a" {
		t.Fatalf("memory without sources=%+v, want n/a", none)
	}
}
