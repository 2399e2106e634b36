package bench_test

import (
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// within reports whether got is within HDR's 0.1% precision (plus one unit) of want.
func within(got, want time.Duration) bool {
	tol := want/1000 + time.Microsecond
	return got >= want-tol && got <= want+tol
}

func TestRecorder_Percentiles(t *testing.T) {
	rec := bench.NewRecorder()
	var wg sync.WaitGroup
	for w := range 4 { // the workers of a scenario share one recorder
		wg.Go(func() {
			for i := w + 1; i <= 1000; i += 4 {
				rec.Record(bench.Sample{Latency: time.Duration(i) * time.Millisecond, Status: 200, Bytes: 14})
			}
		})
	}
	wg.Wait()
	rec.AddElapsed(2 * time.Second)
	s := rec.Summary()

	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"fastest", s.Fastest, 1 * time.Millisecond},
		{"slowest", s.Slowest, 1000 * time.Millisecond},
		{"average", s.Average, 500500 * time.Microsecond},
		{"p50", s.P50, 500 * time.Millisecond},
		{"p90", s.P90, 900 * time.Millisecond},
		{"p99", s.P99, 990 * time.Millisecond},
		{"p99.9", s.P999, 999 * time.Millisecond},
	} {
		if !within(c.got, c.want) {
			t.Errorf("%s=%v, want %v", c.name, c.got, c.want)
		}
	}
	if got, want := s.Requests, int64(1000); got != want {
		t.Fatalf("requests=%d, want %d", got, want)
	}
	if got, want := s.RPS(), 500.0; got != want {
		t.Fatalf("rps=%v, want %v", got, want)
	}
	if got, want := s.BytesPerRequest(), 14.0; got != want {
		t.Fatalf("bytes/request=%v, want %v", got, want)
	}
	if got, want := s.SuccessRate(), 1.0; got != want {
		t.Fatalf("success=%v, want %v", got, want)
	}
}

func TestRecorder_StatusesAndErrors(t *testing.T) {
	rec := bench.NewRecorder()
	for range 95 {
		rec.Record(bench.Sample{Latency: time.Millisecond, Status: 200, Cache: "HIT"})
	}
	for range 3 {
		rec.Record(bench.Sample{Latency: 2 * time.Second, Status: 500})
	}
	for range 2 { // no answer: counted, but no latency
		rec.Record(bench.Sample{Latency: time.Minute, Status: bench.ErrorStatus, Err: "timeout"})
	}
	s := rec.Summary()
	if got, want := s.Requests, int64(100); got != want {
		t.Fatalf("requests=%d, want %d", got, want)
	}
	if got, want := s.OK, int64(95); got != want {
		t.Fatalf("ok=%d, want %d", got, want)
	}
	if got, want := s.Non2xx(), int64(5); got != want {
		t.Fatalf("non-2xx=%d, want %d", got, want)
	}
	if got, want := s.SuccessRate(), 0.95; got != want {
		t.Fatalf("success=%v, want %v", got, want)
	}
	if got, want := s.StatusCodes[500], int64(3); got != want {
		t.Fatalf("500s=%d, want %d", got, want)
	}
	if got, want := s.Errors["timeout"], int64(2); got != want {
		t.Fatalf("timeouts=%d, want %d", got, want)
	}
	if got, want := s.Cache["HIT"], int64(95); got != want {
		t.Fatalf("hits=%d, want %d", got, want)
	}
	if !within(s.Slowest, 2*time.Second) {
		t.Fatalf("slowest=%v, want 2s: failed requests carry no latency", s.Slowest)
	}
}

func TestRecorder_Clamps(t *testing.T) {
	rec := bench.NewRecorder()
	rec.Record(bench.Sample{Latency: 0, Status: 204})
	rec.Record(bench.Sample{Latency: time.Hour, Status: 204})
	s := rec.Summary()
	if got, want := s.Fastest, time.Microsecond; got != want {
		t.Fatalf("fastest=%v, want %v", got, want)
	}
	if !within(s.Slowest, bench.MaxLatency) {
		t.Fatalf("slowest=%v, want the clamp %v", s.Slowest, bench.MaxLatency)
	}
}

func TestSummary_Empty(t *testing.T) {
	s := bench.NewRecorder().Summary()
	if s.RPS() != 0 || s.SuccessRate() != 0 || s.BytesPerRequest() != 0 || s.P99 != 0 {
		t.Fatalf("empty summary=%+v, want zeros", s)
	}
}
