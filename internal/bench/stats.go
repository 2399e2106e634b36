package bench

import (
	"maps"
	"net/http"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Recorder collects the results of one scenario. Latencies, from vegeta's
// estimator, count only requests that got an answer, as oha's do; failed
// requests count in the total and the error distribution. Safe for
// concurrent use.
type Recorder struct {
	mu  sync.Mutex
	lat vegeta.LatencyMetrics
	s   Summary
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{s: Summary{StatusCodes: map[int]int64{}, Errors: map[string]int64{}, Cache: map[string]int64{}}}
}

// Record adds one result with its latency (from its due time in an open loop).
func (r *Recorder) Record(res *vegeta.Result, latency time.Duration) {
	r.Add(int(res.Code), res.Error, latency, int64(res.BytesIn), res.Headers)
}

// Add adds one request: its status (ErrorStatus with transport's error when
// no answer came), latency, body size and answer header.
func (r *Recorder) Add(status int, transport string, latency time.Duration, bytes int64, hdr http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Requests++
	r.s.Bytes += bytes
	if status == ErrorStatus {
		r.s.Errors[errorKind(transport)]++
		return
	}
	r.s.StatusCodes[status]++
	if status/100 == 2 {
		r.s.OK++
	}
	if c := hdr.Get(wire.HeaderCacheStatus); c != "" {
		r.s.Cache[c]++
	}
	r.lat.Add(latency)
}

// AddElapsed adds wall time spent running this scenario (one slice of a round).
func (r *Recorder) AddElapsed(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Elapsed += d
}

// Summary is what oha prints for a run, with p90 and p99.9.
type Summary struct {
	Requests    int64            `json:"requests"`
	OK          int64            `json:"ok"` // 2xx answers
	StatusCodes map[int]int64    `json:"status_codes"`
	Errors      map[string]int64 `json:"errors,omitempty"`
	Cache       map[string]int64 `json:"cache,omitempty"`
	Elapsed     time.Duration    `json:"elapsed_ns"`
	Bytes       int64            `json:"bytes"`
	Fastest     time.Duration    `json:"fastest_ns"`
	Average     time.Duration    `json:"average_ns"`
	Slowest     time.Duration    `json:"slowest_ns"`
	P50         time.Duration    `json:"p50_ns"`
	P90         time.Duration    `json:"p90_ns"`
	P99         time.Duration    `json:"p99_ns"`
	P999        time.Duration    `json:"p999_ns"`
}

// Summary returns the statistics of everything recorded so far.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	s.StatusCodes, s.Errors, s.Cache = maps.Clone(s.StatusCodes), maps.Clone(s.Errors), maps.Clone(s.Cache)
	if answers := s.Requests - sum(s.Errors); answers > 0 {
		s.Fastest, s.Slowest, s.Average = r.lat.Min, r.lat.Max, r.lat.Total/time.Duration(answers)
		s.P50, s.P90, s.P99, s.P999 = r.lat.Quantile(0.5), r.lat.Quantile(0.9), r.lat.Quantile(0.99), r.lat.Quantile(0.999)
	}
	return s
}

// SuccessRate is the share of requests answered 2xx; stricter than oha's,
// which counts any HTTP answer.
func (s Summary) SuccessRate() float64 { return ratio(float64(s.OK), float64(s.Requests)) }

// RPS is requests per second of the scenario's own running time.
func (s Summary) RPS() float64 { return ratio(float64(s.Requests), s.Elapsed.Seconds()) }

// GoodRPS is 2xx answers per second: what ratios compare, so that a path that
// fails fast never looks fast.
func (s Summary) GoodRPS() float64 { return ratio(float64(s.OK), s.Elapsed.Seconds()) }

// BytesPerRequest is the mean response body size.
func (s Summary) BytesPerRequest() float64 { return ratio(float64(s.Bytes), float64(s.Requests)) }

// Non2xx counts the requests not answered 2xx, failed ones included.
func (s Summary) Non2xx() int64 { return s.Requests - s.OK }

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func sum[K comparable](m map[K]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
