package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of the heavy-query scenario.
const (
	DefaultHeavyQueries = 6
	// DefaultHeavySQL runs for minutes on any machine: a sum over ten billion
	// generated rows, which the runtime classes as heavy (a table function). %d
	// makes each text distinct: the runtime runs identical concurrent queries
	// once and shares the answer, so six copies of one text would be one query.
	DefaultHeavySQL = "select sum(hash(range + %d)) from range(10000000000)"
)

// HeavyConfig is the heavy-query scenario: closed loops on Paths of the api
// (results cache bypassed),
// first with the runtime idle, then while Heavy ad-hoc queries run on the
// runtime at Runtime (its Spice HTTP API) without pause, each replaced as soon
// as it ends (by its deadline, say).
type HeavyConfig struct {
	Paths       []string
	Concurrency int
	Duration    time.Duration // per path and phase
	Heavy       int
	SQL         string
	// SQL is the heavy query; a %d in it is replaced by a number unique to each
	// query sent, so that no two run as one.
	// Settle is how long the heavy queries run before the loaded phase is
	// measured, so they hold their slots when it starts.
	Settle time.Duration
}

// HeavyResult is what the scenario measured: per path, the reads while idle and
// while loaded; and how the heavy queries themselves ended.
type HeavyResult struct {
	Idle, Loaded map[string]Summary
	// HeavyEnded counts the heavy queries that ended during the run, by status
	// ("200", "504", or a transport error); HeavyStarted how many were sent.
	HeavyEnded   map[string]int64
	HeavyStarted int64
}

// RunHeavy runs the scenario: api is the api's client, runtime the runtime's
// (with its API key in header, when it wants one).
func RunHeavy(ctx context.Context, api, runtime *Client, header http.Header, cfg HeavyConfig) HeavyResult {
	if cfg.SQL == "" {
		cfg.SQL = DefaultHeavySQL
	}
	res := HeavyResult{Idle: map[string]Summary{}, Loaded: map[string]Summary{}, HeavyEnded: map[string]int64{}}
	for _, p := range cfg.Paths {
		res.Idle[p] = closedLoop(ctx, api, p, cfg.Concurrency, cfg.Duration)
	}

	heavyCtx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range cfg.Heavy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for heavyCtx.Err() == nil {
				mu.Lock()
				res.HeavyStarted++
				sql := cfg.SQL
				if strings.Contains(sql, "%d") {
					sql = fmt.Sprintf(sql, res.HeavyStarted)
				}
				mu.Unlock()
				hdr := header.Clone()
				if hdr == nil {
					hdr = http.Header{}
				}
				hdr.Set("Content-Type", "text/plain")
				s, _ := runtime.Do(heavyCtx, http.MethodPost, "/v1/sql", hdr, strings.NewReader(sql))
				if heavyCtx.Err() != nil {
					return
				}
				kind := s.Err
				if s.Status != ErrorStatus {
					kind = strconv.Itoa(s.Status)
				}
				mu.Lock()
				res.HeavyEnded[kind]++
				mu.Unlock()
				if s.Status/100 != 2 && s.Status != http.StatusGatewayTimeout {
					// Refused at once (busy, unauthorized): do not spin.
					sleepUntil(heavyCtx, time.Now().Add(200*time.Millisecond))
				}
			}
		}()
	}
	sleepUntil(ctx, time.Now().Add(cfg.Settle))
	for _, p := range cfg.Paths {
		res.Loaded[p] = closedLoop(ctx, api, p, cfg.Concurrency, cfg.Duration)
	}
	stop()
	wg.Wait()
	return res
}

// closedLoop reads path with the results cache bypassed (a hit would never
// reach DuckDB, where the heavy queries compete) and summarizes the answers.
func closedLoop(ctx context.Context, c *Client, path string, conns int, d time.Duration) Summary {
	rec := NewRecorder()
	c.Closed(ctx, Target{Name: path, Path: path, NoCache: true}, conns, 0, d, rec)
	return rec.Summary()
}

// HeavyMarkdown renders the result as a Markdown table, idle and loaded side by
// side with their ratios.
func HeavyMarkdown(cfg HeavyConfig, res HeavyResult) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	ratio := func(a, b time.Duration) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", float64(a)/float64(b))
	}
	fmt.Fprintf(&b, "## Ranking reads under %d heavy queries (closed loop of %d connections, %s per phase)\n\n",
		cfg.Heavy, cfg.Concurrency, cfg.Duration)
	fmt.Fprintf(&b, "| path | phase | reads | req/s | non-2xx | p50 | p99 |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, p := range cfg.Paths {
		for _, ph := range []struct {
			name string
			s    Summary
		}{{"idle", res.Idle[p]}, {"heavy", res.Loaded[p]}} {
			fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %d | %s | %s |\n", p, ph.name, ph.s.Requests,
				ph.s.RPS(), ph.s.Non2xx(), ms(ph.s.P50), ms(ph.s.P99))
		}
		fmt.Fprintf(&b, "| %s | heavy / idle | | | | %s | %s |\n", p,
			ratio(res.Loaded[p].P50, res.Idle[p].P50), ratio(res.Loaded[p].P99, res.Idle[p].P99))
	}
	fmt.Fprintf(&b, "\nheavy queries sent: %d; ended during the run, by status: %v\n", res.HeavyStarted, res.HeavyEnded)
	fmt.Fprintf(&b, "heavy query: `%s`\n", cfg.SQL)
	return b.String()
}
