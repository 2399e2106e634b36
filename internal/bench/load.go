package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults of the load generator.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxInFlight = 1000
)

// Target is one scenario: a GET of a path of the API, with or without the results
// cache.
type Target struct {
	Name    string `json:"name"` // "/ranking-accelerated (cache off)"
	Path    string `json:"path"` // "/ranking-accelerated"
	NoCache bool   `json:"no_cache"`
}

// Client sends the benchmark's requests. Its transport keeps as many idle
// connections as the load has workers, as oha does, and never compresses.
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// NewClient returns a Client for baseURL that keeps up to conns connections alive
// and gives up on a request after timeout (DefaultTimeout when zero).
func NewClient(baseURL string, conns int, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Transport: tr, Timeout: timeout}}
}

// Close closes idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

// Do sends one request and reads the whole answer. The sample's latency runs from
// the call to the last byte of the body. The header is nil when no answer came.
func (c *Client) Do(ctx context.Context, method, path string, hdr http.Header, body io.Reader) (Sample, http.Header) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return Sample{Status: ErrorStatus, Err: "bad request: " + err.Error()}, nil
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Sample{Latency: time.Since(start), Status: ErrorStatus, Err: errorKind(err)}, nil
	}
	var msg string
	var head int64
	if resp.StatusCode/100 != 2 {
		var b strings.Builder
		head, _ = io.Copy(&b, io.LimitReader(resp.Body, maxMessage))
		msg = firstLine(strings.NewReader(b.String()))
	}
	n, err := io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	s := Sample{Latency: time.Since(start), Status: resp.StatusCode, Bytes: head + n, Cache: resp.Header.Get(wire.HeaderCacheStatus), Err: msg}
	if err != nil {
		s.Status, s.Err = ErrorStatus, "read body: "+errorKind(err)
	}
	return s, resp.Header
}

// Get sends the target's request.
func (c *Client) Get(ctx context.Context, t Target) Sample {
	var hdr http.Header
	if t.NoCache {
		hdr = http.Header{wire.HeaderCacheControl: {wire.NoCache}}
	}
	s, _ := c.Do(ctx, http.MethodGet, t.Path, hdr, nil)
	return s
}

// errorKind names a transport error by kind, so the error distribution groups
// like with like instead of listing every port number.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed early"
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// Closed runs a closed loop as oha -n/-z does: conc workers, each sending its next
// request as soon as its last was answered, until n requests were sent (n > 0) or
// d has passed (n == 0). Requests in flight at the end are awaited and counted. The
// wall time is added to rec. A cancelled ctx stops the loop early; requests it cut
// short are not recorded.
func (c *Client) Closed(ctx context.Context, t Target, conc, n int, d time.Duration, rec *Recorder) {
	if conc <= 0 || (n <= 0 && d <= 0) {
		return
	}
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				if (n > 0 && left.Add(-1) < 0) || (n <= 0 && !time.Now().Before(deadline)) {
					return
				}
				s := c.Get(ctx, t)
				if ctx.Err() != nil {
					return
				}
				rec.Record(s)
			}
		})
	}
	wg.Wait()
	rec.AddElapsed(time.Since(start))
}

// Open runs an open loop at a fixed rate for d: request i is due at start+i/rate
// whether or not earlier ones were answered, as oha -q --latency-correction and
// wrk2 do. Latency runs from the due time, so a server that falls behind is charged
// for the queue it causes (no coordinated omission). At most maxInFlight requests
// are outstanding (DefaultMaxInFlight when zero); a due request waits for a free
// slot, and that wait counts in its latency.
func (c *Client) Open(ctx context.Context, t Target, rate float64, d time.Duration, maxInFlight int, rec *Recorder) {
	if rate <= 0 || d <= 0 {
		return
	}
	start := time.Now()
	pace(ctx, rate, d, maxInFlight, func(due time.Time) {
		s := c.Get(ctx, t)
		if ctx.Err() != nil {
			return
		}
		s.Latency = time.Since(due)
		rec.Record(s)
	})
	// The schedule's length, or longer when the answers took longer: the achieved
	// rate is never above the asked one for lack of a tail.
	rec.AddElapsed(max(d, time.Since(start)))
}

// pace calls send in a goroutine of its own at start+i/rate for i = 0, 1, ... until
// d has passed (d <= 0: until ctx ends), with at most maxInFlight calls running,
// and returns once every call has returned.
func pace(ctx context.Context, rate float64, d time.Duration, maxInFlight int, send func(due time.Time)) {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	slots := make(chan struct{}, maxInFlight)
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if (d > 0 && due.Sub(start) >= d) || !sleepUntil(ctx, due) {
			break
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			send(due)
		})
	}
	wg.Wait()
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
