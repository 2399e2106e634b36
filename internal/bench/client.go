package bench

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults of the load generator.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxInFlight = 1000
)

// ErrorStatus is the status of a request that got no HTTP answer (refused,
// reset, timed out); the error's kind says why.
const ErrorStatus = 0

// Target is one scenario: a GET of a path of the api, with or without the
// results cache.
type Target struct {
	Name    string `json:"name"` // "/ranking-accelerated (cache off)"
	Path    string `json:"path"` // "/ranking-accelerated"
	NoCache bool   `json:"no_cache"`
}

// Client sends the benchmark's requests, its load through vegeta's attacker.
// Its transport keeps as many idle connections as the load has workers, as
// oha does, and never asks for compression.
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// NewClient returns a Client for baseURL that keeps up to conns connections
// alive and gives up on a request after timeout (DefaultTimeout when zero).
func NewClient(baseURL string, conns int, timeout time.Duration) *Client {
	tr := &http.Transport{
		DialContext:  (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns: conns + 16, MaxIdleConnsPerHost: conns + 16, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true,
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Transport: tr, Timeout: timeout}}
}

// Close closes idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

// attack runs tr at p with workers (at most maxWorkers) for d (0: until the
// pacer stops), feeding each result to each; ctx's end stops it, and the
// requests in flight are awaited.
func (c *Client) attack(ctx context.Context, tr vegeta.Targeter, p vegeta.Pacer, d time.Duration, workers, maxWorkers int, each func(*vegeta.Result)) {
	a := vegeta.NewAttacker(vegeta.Client(c.HTTP), vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(maxWorkers)))
	defer context.AfterFunc(ctx, func() { a.Stop() })()
	for res := range a.Attack(tr, p, d, "") {
		each(res)
	}
}

func (c *Client) targeter(t Target) vegeta.Targeter {
	vt := vegeta.Target{Method: http.MethodGet, URL: c.BaseURL + t.Path}
	if t.NoCache {
		vt.Header = http.Header{wire.HeaderCacheControl: {wire.NoCache}}
	}
	return vegeta.NewStaticTargeter(vt)
}

// Closed runs a closed loop as oha -n/-z does: conc workers, each sending its
// next request as soon as its last was answered, until n requests (n > 0) or
// d has passed. Requests in flight at the end are awaited and counted; the
// wall time is added to rec.
func (c *Client) Closed(ctx context.Context, t Target, conc, n int, d time.Duration, rec *Recorder) {
	if conc <= 0 || (n <= 0 && d <= 0) {
		return
	}
	if n > 0 {
		d = 0
	}
	start := time.Now()
	c.attack(ctx, c.targeter(t), countPacer(n), d, conc, conc, func(r *vegeta.Result) { rec.Record(r, r.Latency) })
	rec.AddElapsed(time.Since(start))
}

// Open runs an open loop at rate for d: request i is due at start+i/rate
// whether or not earlier ones were answered, as oha -q --latency-correction
// and wrk2 do. Latency runs from the due time, so a server that falls behind
// is charged for the queue it causes. At most maxInFlight requests are
// outstanding; a due request waits for a free worker, and that wait counts.
func (c *Client) Open(ctx context.Context, t Target, rate float64, d time.Duration, maxInFlight int, rec *Recorder) {
	if rate <= 0 || d <= 0 {
		return
	}
	start := time.Now()
	c.attack(ctx, c.targeter(t), pacer{rate, d}, 0, min(maxInFlight, 16), maxInFlight, func(r *vegeta.Result) {
		rec.Record(r, sinceDue(start, rate, r))
	})
	// Never shorter than the schedule: the achieved rate is never above the
	// asked one for lack of a tail.
	rec.AddElapsed(max(d, time.Since(start)))
}

// pacer is a constant rate whose hit i is due at i/rate, the first at once
// (vegeta's constant pacer sends its first hit one interval late, and takes
// whole rates only); a hit that could not leave in time leaves as soon as it
// can, and its latency counts from its due time (sinceDue). It stops before
// the first hit due at or after d, when d is set.
type pacer struct {
	rate float64
	d    time.Duration
}

func (p pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due := time.Duration(float64(hits) / p.rate * float64(time.Second))
	return max(due-elapsed, 0), p.d > 0 && due >= p.d
}

func (p pacer) Rate(time.Duration) float64 { return p.rate }

// sinceDue is a result's latency counted from its due time at rate.
func sinceDue(start time.Time, rate float64, r *vegeta.Result) time.Duration {
	due := start.Add(time.Duration(float64(r.Seq) / rate * float64(time.Second)))
	return max(r.End().Sub(due), r.Latency)
}

// countPacer paces as fast as the workers go (a closed loop) and stops after
// n hits; never when n is 0.
type countPacer uint64

func (n countPacer) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, n > 0 && hits >= uint64(n)
}

func (countPacer) Rate(time.Duration) float64 { return 0 }

// RatePacer paces at a rate that may change while the attack runs and, unlike
// vegeta's own pacers, never catches up: a hit that could not leave in time
// because every worker was busy is skipped and counted, so a server that
// stalled is not met by a burst when it comes back.
type RatePacer struct {
	rate    atomic.Uint64 // hits per million seconds
	skipped atomic.Int64
	next    time.Duration // when the next hit is due; used by the attack's loop only
}

// NewRatePacer returns a pacer at rate hits per second.
func NewRatePacer(rate float64) *RatePacer {
	p := &RatePacer{}
	p.SetRate(rate)
	return p
}

// SetRate changes the rate from the next hit on; non-positive rates are ignored.
func (p *RatePacer) SetRate(rate float64) {
	if rate > 0 {
		p.rate.Store(uint64(rate * 1e6))
	}
}

// Rate is the current rate.
func (p *RatePacer) Rate(time.Duration) float64 { return float64(p.rate.Load()) / 1e6 }

// Skipped is how many hits were skipped.
func (p *RatePacer) Skipped() int64 { return p.skipped.Load() }

// Pace implements vegeta.Pacer.
func (p *RatePacer) Pace(elapsed time.Duration, _ uint64) (time.Duration, bool) {
	interval := time.Duration(float64(time.Second) / p.Rate(0))
	due := p.next
	if late := elapsed - due; late > interval {
		p.skipped.Add(int64(late / interval))
		due += late / interval * interval
	}
	p.next = due + interval
	return max(due-elapsed, 0), false
}

// Do sends one request to path, or to an absolute URL, and reads the whole
// answer: its status (ErrorStatus when none came), its header, and why it
// failed (the transport error's kind, or the first line of a non-2xx body).
func (c *Client) Do(ctx context.Context, method, path string, hdr http.Header, body string) (int, http.Header, string) {
	if !strings.Contains(path, "://") {
		path = c.BaseURL + path
	}
	req, err := http.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
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

// positionOf is the Spice-Position of a 2xx answer; zero otherwise.
func positionOf(status int, hdr http.Header) position.LSN {
	if status/100 != 2 {
		return 0
	}
	pos, _ := position.Parse(hdr.Get(wire.HeaderPosition))
	return pos
}

// statusText is "status 504", or the transport error when no answer came.
func statusText(status int, msg string) string {
	if status == ErrorStatus {
		return msg
	}
	return "status " + strconv.Itoa(status)
}

// errorKind names a transport error by kind, so the distribution groups like
// with like instead of listing every port number.
func errorKind(msg string) string {
	for _, k := range [][2]string{
		{"canceled", "context canceled"}, {"timeout", "deadline exceeded"}, {"timeout", "Timeout"},
		{"timeout", "timeout"}, {"connection refused", "connection refused"},
		{"connection reset", "connection reset"}, {"connection reset", "broken pipe"},
		{"connection closed early", "EOF"},
	} {
		if strings.Contains(msg, k[1]) {
			return k[0]
		}
	}
	return msg[:min(len(msg), 80)]
}

// firstLine reads the first line of r, at most 200 bytes of it.
func firstLine(r io.Reader) string {
	line, _ := bufio.NewReader(io.LimitReader(r, 200)).ReadString('\n')
	return strings.TrimSpace(line)
}
