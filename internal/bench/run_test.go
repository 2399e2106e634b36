package bench_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// fakeAPI fakes the api at its HTTP edge, and a runtime's POST /v1/sql: POST
// /orders commits at the next position, and each read reports the position of the
// last commit older than its path's lag, as a replica chain would. A read with
// Spice-Min-Position waits until that position is old enough, as the servers do
// (here for 200 ms at most, then 504); on a path that lies, it answers at once one
// below the position asked for.
type fakeAPI struct {
	lags map[string]time.Duration
	lie  map[string]bool

	mu      sync.Mutex
	commits []commit
	minRead map[string]int // reads with Spice-Min-Position, per path
}

type commit struct {
	at  time.Time
	lsn position.LSN
}

const (
	pathSQL      = "/v1/sql"
	rankingSQL   = "SELECT name, count FROM rankings"
	runtimeKey   = "runtime-key" // the fake runtime's API key
	watermarkSQL = "SELECT 1 FROM orders WHERE false"
)

func newFakeAPI(tb testing.TB, lie ...string) (*fakeAPI, *httptest.Server) {
	tb.Helper()
	f := &fakeAPI{
		lags:    map[string]time.Duration{bench.PathRanking: 0, bench.PathAccelerated: 5 * ms, bench.PathMaterialized: 15 * ms, pathSQL: 5 * ms},
		lie:     map[string]bool{},
		commits: []commit{{at: time.Now(), lsn: 0x1000000}},
		minRead: map[string]int{},
	}
	for _, p := range lie {
		f.lie[p] = true
	}
	srv := httptest.NewServer(f)
	tb.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAPI) minReads(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.minRead[path]
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == bench.PathOrders:
		f.mu.Lock()
		c := commit{at: time.Now(), lsn: f.commits[len(f.commits)-1].lsn + 0x100}
		f.commits = append(f.commits, c)
		f.mu.Unlock()
		w.Header().Set(wire.HeaderPosition, c.lsn.String())
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`))
	case r.Method == http.MethodGet && (r.URL.Path == bench.PathNoop || r.URL.Path == "/readyz"):
		_, _ = w.Write([]byte("ok\n"))
	case r.Method == http.MethodGet, r.Method == http.MethodPost && r.URL.Path == pathSQL:
		f.ranking(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPI) ranking(w http.ResponseWriter, r *http.Request) {
	lag, ok := f.lags[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == pathSQL && r.Header.Get("X-Api-Key") != runtimeKey {
		http.Error(w, "API key required", http.StatusUnauthorized)
		return
	}
	min, _ := position.Parse(r.Header.Get(wire.HeaderMinPosition))
	if !min.IsZero() {
		key := r.URL.Path
		if key == pathSQL {
			body, _ := io.ReadAll(r.Body)
			key = string(body)
		}
		f.mu.Lock()
		f.minRead[key]++
		f.mu.Unlock()
	}
	pos := f.at(lag)
	for deadline := time.Now().Add(200 * ms); pos < min && time.Now().Before(deadline); pos = f.at(lag) {
		time.Sleep(ms)
	}
	switch {
	case f.lie[r.URL.Path] && !min.IsZero():
		pos = min - 1
	case pos < min:
		http.Error(w, "position not reached in 200ms", http.StatusGatewayTimeout)
		return
	}
	w.Header().Set(wire.HeaderPosition, pos.String())
	if r.URL.Path != bench.PathRanking {
		status := "HIT"
		if strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
			status = "BYPASS"
		}
		w.Header().Set(wire.HeaderCacheStatus, status)
	}
	_, _ = w.Write([]byte("==== Leading Products ====\n"))
}

// at returns the position of the last commit at least lag old.
func (f *fakeAPI) at(lag time.Duration) position.LSN {
	f.mu.Lock()
	defer f.mu.Unlock()
	cut := time.Now().Add(-lag)
	i, _ := slices.BinarySearchFunc(f.commits, cut, func(c commit, t time.Time) int { return c.at.Compare(t) })
	if i < len(f.commits) && !f.commits[i].at.After(cut) {
		i++
	}
	return f.commits[max(i-1, 0)].lsn
}

// quickConfig is a run of a second or two.
func quickConfig(url string) bench.Config {
	return bench.Config{Settings: bench.Settings{
		BaseURL: url, Requests: 60, Concurrency: 4, Rounds: 3, Warmup: 30 * ms,
		Rates: []float64{100}, OpenDuration: 150 * ms, WriteRate: 50,
		FreshnessConcurrency: 8, FreshnessWindow: 300 * ms, Grace: 2 * time.Second,
		SyncTimeout: 5 * time.Second, Timeout: 5 * time.Second,
	}}
}

func TestRunner_Run(t *testing.T) {
	fake, srv := newFakeAPI(t)
	var out strings.Builder
	cfg := quickConfig(srv.URL)
	cfg.RuntimeHops, cfg.Accelerated = true, bench.RuntimeEndpoint{URL: srv.URL, APIKey: runtimeKey}
	r := bench.NewRunner(cfg)
	r.Out = &out
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got, want := len(rep.Sizes), 1; got != want {
		t.Fatalf("sizes=%d, want %d", got, want)
	}
	s := rep.Sizes[0]
	if got, want := len(s.Closed), len(bench.Scenarios()); got != want {
		t.Fatalf("scenarios=%d, want %d", got, want)
	}
	for _, c := range s.Closed {
		if c.Summary.Requests != 60 || c.Summary.OK != 60 {
			t.Errorf("%s: %d requests, %d ok; want 60, 60", c.Target.Name, c.Summary.Requests, c.Summary.OK)
		}
		if c.Target.NoCache && c.Summary.Cache["BYPASS"] != 60 {
			t.Errorf("%s: cache %v, want BYPASS only", c.Target.Name, c.Summary.Cache)
		}
		if c.Target.Path != bench.PathRanking && c.VsRanking <= 0 {
			t.Errorf("%s: no ratio to /ranking", c.Target.Name)
		}
	}
	if len(s.Open) != 1 || s.Open[0].Results[0].Summary.Requests == 0 {
		t.Errorf("open loop=%+v, want requests at 100/s", s.Open)
	}
	if s.Writer.OK == 0 {
		t.Fatalf("writer=%+v, want writes", s.Writer)
	}
	measured := 0
	for _, hop := range []string{bench.HopPostgres, bench.HopAccelerated, bench.HopMaterialized, bench.HopAcceleratedRuntime} {
		for _, phase := range []string{bench.PhaseIdle, bench.PhaseLoad} {
			f := findFresh(s.Freshness, hop, phase)
			if f == nil || f.Reached == 0 || f.Unreached != 0 || f.Violations != 0 || f.Reached != f.Writes {
				t.Errorf("freshness %s %s=%+v, want every write seen", hop, phase, f)
				continue
			}
			if hop == bench.HopPostgres {
				measured += f.Writes
			}
		}
	}
	// One read per write and hop, not polling: /ranking had at least a read for
	// each write of the phases, and at most one for each write of the run.
	if got := fake.minReads(bench.PathRanking); got < measured || got > int(s.Writer.OK) {
		t.Errorf("reads of /ranking with %s=%d, want between %d and %d", wire.HeaderMinPosition, got, measured, s.Writer.OK)
	}
	if got, want := fake.minReads(rankingSQL), fake.minReads(bench.PathRanking); got != want {
		t.Errorf("reads of the ranking on %s=%d, want %d as /ranking", pathSQL, got, want)
	}
	// The watermark hop reads every write of the freshness window, once.
	if wm := findFresh(s.Watermarks, bench.HopWatermarkAccelerated, bench.PhaseIdle); wm == nil || wm.Reached == 0 || wm.Reached != wm.Writes ||
		fake.minReads(watermarkSQL) < wm.Writes {
		t.Errorf("watermark freshness=%+v after %d reads, want every write of the window seen", wm, fake.minReads(watermarkSQL))
	}
	md := bench.Markdown(rep)
	if !strings.Contains(md, "| /ranking-materialized (cache off) | 100.00% |") {
		t.Errorf("markdown lacks the materialized row:\n%s", md)
	}
	if !strings.Contains(out.String(), "sync: done") {
		t.Errorf("progress lacks the sync:\n%s", out.String())
	}
}

// A hop that answers below the Spice-Min-Position it was asked for is reported as
// violating read-your-writes, and none of its writes counts as seen.
func TestRunner_Violation(t *testing.T) {
	_, srv := newFakeAPI(t, pathSQL)
	cfg := quickConfig(srv.URL)
	cfg.RuntimeHops, cfg.Materialized = true, bench.RuntimeEndpoint{URL: srv.URL, APIKey: runtimeKey}
	var out strings.Builder
	r := bench.NewRunner(cfg)
	r.Out = &out
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := rep.Sizes[0]
	f := findFresh(s.Freshness, bench.HopMaterializedRuntime, bench.PhaseLoad)
	if f == nil || f.Writes == 0 || f.Violations != f.Writes || f.Reached != 0 {
		t.Fatalf("freshness=%+v, want every write a violation", f)
	}
	if ok := findFresh(s.Freshness, bench.HopMaterialized, bench.PhaseLoad); ok == nil || ok.Violations != 0 || ok.Reached != ok.Writes {
		t.Errorf("materialized via the api=%+v, want every write seen", ok)
	}
	md := bench.Markdown(rep)
	if !strings.Contains(md, "> **READ-YOUR-WRITES VIOLATED** on materialized runtime (HTTP `/v1/sql`, no api) (under load)") {
		t.Errorf("markdown lacks the violation:\n%s", md)
	}
	if !strings.Contains(out.String(), "READ-YOUR-WRITES VIOLATED on materialized runtime") {
		t.Errorf("progress lacks the violation:\n%s", out.String())
	}
}

func findFresh(fs []bench.Freshness, hop, phase string) *bench.Freshness {
	for i := range fs {
		if fs[i].Hop == hop && fs[i].Phase == phase {
			return &fs[i]
		}
	}
	return nil
}

func TestRunner_Unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	_ = ln.Close()
	_, err = bench.NewRunner(quickConfig(url)).Run(context.Background())
	if !errors.Is(err, bench.ErrUnreachable) {
		t.Fatalf("err=%v, want ErrUnreachable", err)
	}
}

func TestRunner_ScaleNeedsPostgres(t *testing.T) {
	cfg := quickConfig("http://127.0.0.1:1")
	cfg.Scale = []int64{1000}
	if _, err := bench.NewRunner(cfg).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "postgres") {
		t.Fatalf("err=%v, want a request for postgres", err)
	}
}
