package bench_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// within reports whether got is within 2% of want: vegeta's quantile
// estimator is a t-digest.
func within(got, want time.Duration) bool {
	tol := want / 50
	return got >= want-tol && got <= want+tol
}

func TestRecorder_Percentiles(t *testing.T) {
	rec := bench.NewRecorder()
	var wg sync.WaitGroup
	for w := range 4 { // the workers of a scenario share one recorder
		wg.Go(func() {
			for i := w + 1; i <= 1000; i += 4 {
				rec.Add(200, "", time.Duration(i)*time.Millisecond, 14, nil)
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
		rec.Add(200, "", time.Millisecond, 0, http.Header{"Results-Cache-Status": {"HIT"}})
	}
	for range 3 {
		rec.Add(500, "", 2*time.Second, 0, nil)
	}
	for range 2 { // no answer: counted, but no latency
		rec.Add(bench.ErrorStatus, "timeout", time.Minute, 0, nil)
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

func TestSummary_Empty(t *testing.T) {
	s := bench.NewRecorder().Summary()
	if s.RPS() != 0 || s.SuccessRate() != 0 || s.BytesPerRequest() != 0 || s.P99 != 0 {
		t.Fatalf("empty summary=%+v, want zeros", s)
	}
}
