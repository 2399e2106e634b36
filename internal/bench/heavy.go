package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the heavy-query scenario.
const (
	DefaultHeavyQueries = 6
	// DefaultHeavySQL is a cross join over the accelerated tables; %d makes
	// each text unique, so no text's history can mark it heavy before it runs
	// (the runtime also runs identical concurrent texts once).
	DefaultHeavySQL = "SELECT count(*) FROM orders a CROSS JOIN orders b WHERE a.count + b.count <> %d"
	// DefaultHeavyOrders is what orders is seeded to first: enough rows that
	// each cross join runs for minutes.
	DefaultHeavyOrders = 100_000
)

// HeavyConfig is the heavy-query scenario: closed loops on Paths of the api
// (results cache bypassed), first with the accelerated runtime idle, then
// while Heavy ad-hoc queries run on it (its Spice HTTP API) without pause,
// each replaced by a new unique text as soon as it ends.
type HeavyConfig struct {
	Paths       []string
	Concurrency int
	Duration    time.Duration // per path and phase
	Heavy       int
	// SQL is the heavy query (DefaultHeavySQL when empty); a %d in it becomes
	// a number unique to each query.
	SQL string
	// Settle is how long the heavy queries run before the loaded phase is
	// measured, so that they hold their slots when it starts.
	Settle time.Duration
}

// HeavyResult is what the scenario measured: per path, the reads while idle
// and while loaded, and how the heavy queries ended.
type HeavyResult struct {
	Started time.Time          `json:"started"`
	Config  HeavyConfig        `json:"config"`
	Orders  int64              `json:"orders"` // -1: not counted
	Idle    map[string]Summary `json:"idle"`
	Loaded  map[string]Summary `json:"loaded"`
	// HeavyEnded counts the heavy queries that ended during the run, by
	// status ("200", "503", or a transport error); HeavyStarted how many were sent.
	HeavyEnded   map[string]int64 `json:"heavy_ended"`
	HeavyStarted int64            `json:"heavy_started"`
}

// RunHeavy runs the scenario: api is the api's client, runtime the
// accelerated runtime's (with its API key in header, when it wants one).
func RunHeavy(ctx context.Context, api, runtime *Client, header http.Header, cfg HeavyConfig) HeavyResult {
	if cfg.SQL == "" {
		cfg.SQL = DefaultHeavySQL
	}
	res := HeavyResult{Started: time.Now(), Config: cfg, Orders: -1, Idle: map[string]Summary{}, Loaded: map[string]Summary{}, HeavyEnded: map[string]int64{}}
	// The reads bypass the results cache: a hit would never reach DuckDB,
	// where the heavy queries compete.
	reads := func(into map[string]Summary) {
		for _, p := range cfg.Paths {
			rec := NewRecorder()
			api.Closed(ctx, Target{Name: p, Path: p, NoCache: true}, cfg.Concurrency, 0, cfg.Duration, rec)
			into[p] = rec.Summary()
		}
	}
	reads(res.Idle)
	heavyCtx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var started atomic.Int64
	var wg sync.WaitGroup
	hdr := header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", "text/plain")
	for range cfg.Heavy {
		wg.Go(func() {
			for heavyCtx.Err() == nil {
				sql := cfg.SQL
				if strings.Contains(sql, "%d") {
					sql = fmt.Sprintf(sql, started.Add(1))
				}
				status, _, msg := runtime.Do(heavyCtx, http.MethodPost, "/v1/sql", hdr, sql)
				if heavyCtx.Err() != nil {
					return
				}
				mu.Lock()
				res.HeavyEnded[strings.TrimPrefix(statusText(status, msg), "status ")]++
				mu.Unlock()
				if status/100 != 2 && status != http.StatusGatewayTimeout {
					sleepUntil(heavyCtx, time.Now().Add(200*time.Millisecond)) // refused at once: do not spin
				}
			}
		})
	}
	sleepUntil(ctx, time.Now().Add(cfg.Settle))
	reads(res.Loaded)
	stop()
	wg.Wait()
	res.HeavyStarted = max(started.Load(), int64(cfg.Heavy))
	return res
}

// HeavyMarkdown renders the result: idle and heavy side by side, and how the
// heavy queries ended.
func HeavyMarkdown(h HeavyResult) string { return render("heavy-report", h) }
