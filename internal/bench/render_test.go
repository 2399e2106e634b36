package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func fixedReport() *bench.Report {
	return &bench.Report{
		Header: bench.Header{Started: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Command: "go run ./cmd/bench -z 10s --scale 100k",
			Machine: bench.Machine{Cores: 2, CPU: "Test CPU", MemoryBytes: 8 << 30, OS: "linux/amd64", Kernel: "6.1", GoVersion: "go1.26", Docker: "28.2.2"},
			Notes:   []string{"a note <with> markup"}},
		Settings: bench.Settings{
			BaseURL: "http://localhost:9999", Duration: 10 * time.Second, Concurrency: 100, Rounds: 10,
			Warmup: 2 * time.Second, Rates: []float64{200}, OpenDuration: 10 * time.Second, MaxInFlight: 1000,
			WriteRate: 100, FreshnessConcurrency: 128, FreshnessWindow: 15 * time.Second,
		},
		Sizes: []bench.SizeResult{fixedSize(), func() bench.SizeResult { s := fixedSize(); s.Orders = 1_000_000; return s }()},
	}
}

func TestMarkdown(t *testing.T) {
	md := bench.Markdown(fixedReport())
	for _, want := range []string{
		"Run of 2026-03-04 05:06:07 UTC against http://localhost:9999",
		"go run ./cmd/bench -z 10s --scale 100k",
		"| 2 | Test CPU | 8GiB | linux/amd64 | 6.1 | go1.26 | 28.2.2 |",
		"## 100,000 orders",
		"## 1,000,000 orders",
		"| Scenario | Success Rate | Total Time (secs) | Slowest (ms) | Fastest (ms) | Average (ms) | Requests/sec | p50 (ms) | p99 (ms) | p99.9 (ms) | ratio vs /ranking | % of ceiling |",
		"| /ranking-materialized (cache on) | 100.00% | 2.0000 | 16.00 | 0.50 | 2.67 | 12000.0 | 2.00 | 8.00 | 12.00 | 25.18x | 60.0% |",
		"| /ranking (Postgres) | 95.30% |",
		"| /ranking (Postgres) | 1000 | 200×953, 500×47 | 4.00 | 14 B |",
		"### Open loop at 200 req/s",
		"| /ranking-materialized (cache on) | 100.00% | 200.0 | 0.75 | 1.50 | 3.00 | 4.50 | 6.00 | 200×2000 |",
		"at most 128 such reads in flight per hop; a 15s window",
		"| Hop | Phase | Writes | Seen | Not seen | Violations | p50 (ms) | p99 (ms) | Max (ms) |",
		"| accelerated (`/ranking-accelerated`) | under load | 100 | 100 | 0 | 0 | 20.00 | 80.00 | 90.00 |",
		"| materialized (`/ranking-materialized`, end to end) | under load | 100 | 99 | 1 (status 504×1) | 0 | 60.00 | 200.00 | 300.00 |",
		`- materialized, under load, status 504: "position 0/1100 not reached in 10s"`,
		"runtime 1 150MiB (container of accelerated); runtime 2 n/a (n/a);",
		"| /ranking-accelerated (cache off) 2xx req/s >= 5x /ranking | 4.2x | **MISS** |",
		"| write-to-visible p99 < 100 ms, accelerated hop | p99 80.00 ms under load (idle: 9.00 ms) | **PASS** |",
		"## Scale: requests/sec and p99 by size",
		"| 1,000,000 orders | 20000.0 (p99 8.00 ms) | 500.0 (p99 8.00 ms) |",
		"oha -z 10s -c 100 'http://localhost:9999/ranking'",
		"oha -z 10s -c 100 -H 'Cache-Control: no-cache' 'http://localhost:9999/ranking-materialized'",
		"oha -z 10s -c 1000 -q 200 --latency-correction 'http://localhost:9999/noop'",
		"- a note <with> markup",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

func TestMarkdown_Violation(t *testing.T) {
	r := fixedReport()
	f := &r.Sizes[0].Freshness[2]
	f.Reached, f.Unreached, f.Violations, f.Violation = 97, 3, 2, "asked for 0/1100, answered 200 at 0/10FF"
	md := bench.Markdown(r)
	banner := "> **READ-YOUR-WRITES VIOLATED** on materialized (`/ranking-materialized`, end to end) (under load): 2 answers at a position below their Spice-Min-Position (first: asked for 0/1100, answered 200 at 0/10FF)."
	i, j := strings.Index(md, banner), strings.Index(md, "| Hop | Phase |")
	if i < 0 || i > j {
		t.Fatalf("banner at %d, table at %d; want the banner first:\n%s", i, j, md)
	}
	if row := "| materialized (`/ranking-materialized`, end to end) | under load | 100 | 97 | 1 (status 504×1) | 2 |"; !strings.Contains(md, row) {
		t.Errorf("markdown lacks %q", row)
	}
}

// The p99 goal names the connections the run had.
func TestMarkdown_Connections(t *testing.T) {
	r := fixedReport()
	r.Settings.Concurrency = 50
	if md, want := bench.Markdown(r), "| /ranking-materialized p99 < 10 ms at 100 connections | 8.00 ms at 50 connections | **PASS** |"; !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
}

func TestMarkdown_CurrentDataNoWrites(t *testing.T) {
	r := fixedReport()
	r.Sizes = []bench.SizeResult{{Orders: -1}}
	md := bench.Markdown(r)
	for _, want := range []string{"## current data", "Not measured: no writes"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
