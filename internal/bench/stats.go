package bench

import (
	"maps"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision: latencies are recorded in microseconds from 1 µs
// to MaxLatency with three significant digits, so every percentile is within 0.1%
// of the true value. Latencies outside the range are clamped, never dropped.
const (
	MaxLatency  = 5 * time.Minute
	sigFigures  = 3
	unitLatency = time.Microsecond
)

// ErrorStatus is the status code of a sample whose request got no HTTP answer
// (refused, reset, timed out); Sample.Err says why.
const ErrorStatus = 0

// Sample is the outcome of one request.
type Sample struct {
	Latency time.Duration
	Status  int    // HTTP status, or ErrorStatus
	Bytes   int64  // response body bytes
	Cache   string // Results-Cache-Status, if any
	// Err is the transport error's kind when Status is ErrorStatus, else the
	// first line of a non-2xx answer's body (Client.Do).
	Err string
}

// Recorder collects the samples of one scenario. Safe for concurrent use: the
// workers of a scenario share one Recorder, whose lock costs far less than the
// HTTP round trip it records.
type Recorder struct {
	mu      sync.Mutex
	hist    *hdrhistogram.Histogram
	codes   map[int]int64
	errs    map[string]int64
	cache   map[string]int64
	bytes   int64
	count   int64
	elapsed time.Duration
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		hist:  hdrhistogram.New(1, int64(MaxLatency/unitLatency), sigFigures),
		codes: map[int]int64{},
		errs:  map[string]int64{},
		cache: map[string]int64{},
	}
}

// Record adds one sample. Latencies count only for requests that got an answer,
// as oha's; failed requests count in the total and the error distribution.
func (r *Recorder) Record(s Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	r.bytes += s.Bytes
	if s.Status == ErrorStatus {
		r.errs[s.Err]++
		return
	}
	r.codes[s.Status]++
	if s.Cache != "" {
		r.cache[s.Cache]++
	}
	_ = r.hist.RecordValue(clampLatency(s.Latency))
}

// AddElapsed adds wall time spent running this scenario (one slice of a round).
func (r *Recorder) AddElapsed(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.elapsed += d
}

func clampLatency(d time.Duration) int64 {
	v := int64(d / unitLatency)
	switch {
	case v < 1:
		return 1
	case v > int64(MaxLatency/unitLatency):
		return int64(MaxLatency / unitLatency)
	}
	return v
}

// Summary is what oha prints for a run, plus the p90 and p99.9 the recipe's table
// lacks. Latencies come from the HDR histogram.
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
	s := Summary{
		Requests:    r.count,
		StatusCodes: maps.Clone(r.codes),
		Errors:      maps.Clone(r.errs),
		Cache:       maps.Clone(r.cache),
		Elapsed:     r.elapsed,
		Bytes:       r.bytes,
	}
	for code, n := range r.codes {
		if code >= 200 && code < 300 {
			s.OK += n
		}
	}
	if r.hist.TotalCount() == 0 {
		return s
	}
	at := func(q float64) time.Duration { return time.Duration(r.hist.ValueAtQuantile(q)) * unitLatency }
	s.Fastest = time.Duration(r.hist.Min()) * unitLatency
	s.Slowest = time.Duration(r.hist.Max()) * unitLatency
	s.Average = time.Duration(r.hist.Mean() * float64(unitLatency))
	s.P50, s.P90, s.P99, s.P999 = at(50), at(90), at(99), at(99.9)
	return s
}

// SuccessRate is the share of requests answered 2xx, in [0, 1]; 0 without
// requests. Stricter than oha's, which counts any HTTP answer as a success.
func (s Summary) SuccessRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.OK) / float64(s.Requests)
}

// RPS is requests per second of the scenario's own running time; 0 when it did not
// run.
func (s Summary) RPS() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Requests) / s.Elapsed.Seconds()
}

// GoodRPS is 2xx answers per second: what ratios compare, so that a path that
// fails fast never looks fast.
func (s Summary) GoodRPS() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.OK) / s.Elapsed.Seconds()
}

// BytesPerRequest is the mean response body size.
func (s Summary) BytesPerRequest() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.Requests)
}

// Non2xx counts the requests not answered 2xx, failed ones included.
func (s Summary) Non2xx() int64 { return s.Requests - s.OK }
