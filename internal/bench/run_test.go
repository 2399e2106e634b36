package bench_test

import (
	"context"
	"errors"
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
)

// fakeAPI fakes the api at its HTTP edge: POST /orders commits at the next
// position, and each ranking path reports the position of the last commit older
// than its lag, as a replica chain would.
type fakeAPI struct {
	lags map[string]time.Duration

	mu      sync.Mutex
	commits []commit
}

type commit struct {
	at  time.Time
	lsn position.LSN
}

func newFakeAPI(tb testing.TB) *httptest.Server {
	tb.Helper()
	f := &fakeAPI{
		lags:    map[string]time.Duration{bench.PathRanking: 0, bench.PathAccelerated: 5 * ms, bench.PathMaterialized: 15 * ms},
		commits: []commit{{at: time.Now(), lsn: 0x1000000}},
	}
	srv := httptest.NewServer(f)
	tb.Cleanup(srv.Close)
	return srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == bench.PathOrders:
		f.mu.Lock()
		c := commit{at: time.Now(), lsn: f.commits[len(f.commits)-1].lsn + 0x100}
		f.commits = append(f.commits, c)
		f.mu.Unlock()
		w.Header().Set(position.HeaderPosition, c.lsn.String())
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`))
	case r.Method == http.MethodGet && r.URL.Path == bench.PathNoop:
		_, _ = w.Write([]byte("ok\n"))
	case r.Method == http.MethodGet:
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
	min, _ := position.Parse(r.Header.Get(position.HeaderMinPosition))
	pos := f.at(lag)
	for deadline := time.Now().Add(200 * ms); pos < min && time.Now().Before(deadline); pos = f.at(lag) {
		time.Sleep(ms)
	}
	if pos < min {
		http.Error(w, "not there yet", http.StatusGatewayTimeout)
		return
	}
	w.Header().Set(position.HeaderPosition, pos.String())
	if r.URL.Path != bench.PathRanking {
		status := "HIT"
		if strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
			status = "BYPASS"
		}
		w.Header().Set(bench.HeaderCacheStatus, status)
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
	return bench.Config{
		BaseURL: url, Requests: 60, Concurrency: 4, Rounds: 3, Warmup: 30 * ms,
		Rates: []float64{100}, OpenDuration: 150 * ms, WriteRate: 50,
		Pollers: 1, PollInterval: 2 * ms, FreshnessWindow: 300 * ms, Grace: 2 * time.Second,
		SyncTimeout: 5 * time.Second, Timeout: 5 * time.Second,
	}
}

func TestRunner_Run(t *testing.T) {
	srv := newFakeAPI(t)
	var out strings.Builder
	r := bench.NewRunner(quickConfig(srv.URL))
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
	for _, hop := range []string{bench.HopPostgres, bench.HopAccelerated, bench.HopMaterialized} {
		for _, phase := range []string{bench.PhaseIdle, bench.PhaseLoad} {
			f := findFresh(s.Freshness, hop, phase)
			if f == nil || f.Reached == 0 || f.Unreached != 0 {
				t.Errorf("freshness %s %s=%+v, want every write seen", hop, phase, f)
			}
		}
	}
	md := bench.Markdown(rep)
	if !strings.Contains(md, "| /ranking-materialized (cache off) | 100.00% |") {
		t.Errorf("markdown lacks the materialized row:\n%s", md)
	}
	if !strings.Contains(out.String(), "sync: done") {
		t.Errorf("progress lacks the sync:\n%s", out.String())
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
