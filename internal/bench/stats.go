package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// ErrorStatus is the status of a request that got no HTTP answer (refused,
// reset, timed out); the error's kind says why.
const ErrorStatus = 0

// maxMessage bounds the part of a failed answer's body kept as its reason.
const maxMessage = 200

// Recorder collects the results of one scenario. Latencies, from vegeta's
// estimator, count only requests that got an answer, as oha's do; failed
// requests count in the total and the error distribution. Safe for
// concurrent use.
type Recorder struct {
	mu      sync.Mutex
	lat     vegeta.LatencyMetrics
	answers int64
	codes   map[int]int64
	errs    map[string]int64
	cache   map[string]int64
	bytes   int64
	count   int64
	elapsed time.Duration
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{codes: map[int]int64{}, errs: map[string]int64{}, cache: map[string]int64{}}
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
	r.count++
	r.bytes += bytes
	if status == ErrorStatus {
		r.errs[errorKind(transport)]++
		return
	}
	r.codes[status]++
	if c := hdr.Get(wire.HeaderCacheStatus); c != "" {
		r.cache[c]++
	}
	r.answers++
	r.lat.Add(latency)
}

// AddElapsed adds wall time spent running this scenario (one slice of a round).
func (r *Recorder) AddElapsed(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.elapsed += d
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
	s := Summary{Requests: r.count, StatusCodes: maps.Clone(r.codes), Errors: maps.Clone(r.errs),
		Cache: maps.Clone(r.cache), Elapsed: r.elapsed, Bytes: r.bytes}
	for code, n := range r.codes {
		if code/100 == 2 {
			s.OK += n
		}
	}
	if r.answers == 0 {
		return s
	}
	s.Fastest, s.Slowest = r.lat.Min, r.lat.Max
	s.Average = r.lat.Total / time.Duration(r.answers)
	s.P50, s.P90, s.P99, s.P999 = r.lat.Quantile(0.5), r.lat.Quantile(0.9), r.lat.Quantile(0.99), r.lat.Quantile(0.999)
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

// Do sends one request and reads the whole answer: its status (ErrorStatus
// when none came), its header, and why it failed (the transport error's kind,
// or the first line of a non-2xx body).
func (c *Client) Do(ctx context.Context, method, path string, hdr http.Header, body io.Reader) (int, http.Header, string) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return ErrorStatus, nil, "bad request: " + err.Error()
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return ErrorStatus, nil, errorKind(err.Error())
	}
	defer resp.Body.Close()
	var msg string
	if resp.StatusCode/100 != 2 {
		msg = firstLine(resp.Body)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return ErrorStatus, nil, "read body: " + errorKind(err.Error())
	}
	return resp.StatusCode, resp.Header, msg
}

// statusText is "status 504", or the transport error when no answer came.
func statusText(status int, msg string) string {
	if status == ErrorStatus {
		return msg
	}
	return fmt.Sprintf("status %d", status)
}

// errorKind names a transport error by kind, so the distribution groups like
// with like instead of listing every port number.
func errorKind(msg string) string {
	for _, k := range []struct{ kind, substr string }{
		{"canceled", "context canceled"}, {"timeout", "deadline exceeded"}, {"timeout", "Timeout"},
		{"timeout", "timeout"}, {"connection refused", "connection refused"},
		{"connection reset", "connection reset"}, {"connection reset", "broken pipe"},
		{"connection closed early", "EOF"},
	} {
		if strings.Contains(msg, k.substr) {
			return k.kind
		}
	}
	return msg[:min(len(msg), 80)]
}

// firstLine reads the first line of r, at most maxMessage bytes of it.
func firstLine(r io.Reader) string {
	line, _ := bufio.NewReader(io.LimitReader(r, maxMessage)).ReadString('\n')
	return strings.TrimSpace(line)
}
