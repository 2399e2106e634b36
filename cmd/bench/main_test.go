package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

func TestParseFlags_Quick(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "-c", "7", "--scale", "10k,1M"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if got, want := c.Duration, 3*time.Second; got != want {
		t.Fatalf("z=%v, want the quick %v", got, want)
	}
	if got, want := c.Concurrency, 7; got != want {
		t.Fatalf("c=%d, want the given %d", got, want)
	}
	if got, want := c.Scale, []int64{10_000, 1_000_000}; !slices.Equal(got, want) {
		t.Fatalf("scale=%v, want the given %v", got, want)
	}
	if got, want := c.FreshnessWindow, 5*time.Second; got != want {
		t.Fatalf("freshness window=%v, want %v", got, want)
	}
}

// An explicit -n beats the quick run's -z.
func TestParseFlags_QuickWithN(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "-n", "500"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Requests != 500 || o.Config.Duration != 0 {
		t.Fatalf("n=%d z=%v, want 500 requests", o.Config.Requests, o.Config.Duration)
	}
}

func TestParseFlags_Defaults(t *testing.T) {
	o, err := parseFlags([]string{"--rate", "200,1000", "--warmup", "0", "--write-rate", "0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.Requests != bench.DefaultRequests || c.Concurrency != bench.DefaultConcurrency || c.Scale != nil {
		t.Fatalf("config=%+v, want the recipe's -n20000 -c100 on current data", c)
	}
	if got, want := c.Rates, []float64{200, 1000}; !slices.Equal(got, want) {
		t.Fatalf("rates=%v, want %v", got, want)
	}
	if c.Warmup >= 0 || c.WriteRate != 0 {
		t.Fatalf("warmup=%v write rate=%v, want none and 0", c.Warmup, c.WriteRate)
	}
	if got, want := c.FreshnessConcurrency, bench.DefaultFreshnessConcurrency; got != want {
		t.Fatalf("freshness concurrency=%d, want %d", got, want)
	}
	if o.PostgresURL != DefaultPostgresURL || o.OutDir != DefaultOutDir {
		t.Fatalf("options=%+v", o)
	}
}

func TestParseFlags_Errors(t *testing.T) {
	for _, args := range [][]string{
		{"--scale", "1M,10k"},
		{"--scale", "lots"},
		{"--rate", "-3"},
		{"-c", "0"},
		{"--freshness-concurrency", "0"},
		{"--pollers", "2"}, // gone: freshness no longer polls
		{"stray"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	if code := run(context.Background(), []string{"--scale", "1M,10k"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("exit=%d on bad flags, want 2", code)
	}
}

// fakeAPI answers every path with 200 and the position of the last write: the
// smallest api the command can measure. It honours Spice-Min-Position trivially,
// as Postgres does: a token it handed out is never ahead of it.
func fakeAPI(tb testing.TB) string {
	var lsn atomic.Uint64
	lsn.Store(0x100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set(wire.HeaderPosition, position.LSN(lsn.Add(1)).String())
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.Header().Set(wire.HeaderPosition, position.LSN(lsn.Load()).String())
		_, _ = w.Write([]byte("ok\n"))
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	args := []string{"--url", fakeAPI(t), "--quick", "-n", "20", "-c", "2", "--rounds", "2", "--warmup", "10ms",
		"--freshness-window", "100ms", "--write-rate", "50", "--grace", "500ms", "--freshness-concurrency", "4",
		"--postgres-url", "", "--docker", "", "--out", dir}
	if code := run(context.Background(), args, &out, &out); code != 0 {
		t.Fatalf("exit=%d:\n%s", code, out.String())
	}
	for _, name := range []string{"latest.md", "latest.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "/ranking-materialized (cache off)") {
			t.Errorf("%s lacks the scenarios", name)
		}
	}
	md, _ := filepath.Glob(filepath.Join(dir, "*Z.md"))
	js, _ := filepath.Glob(filepath.Join(dir, "*Z.json"))
	if len(md) != 1 || len(js) != 1 {
		t.Fatalf("timestamped results: %v %v", md, js)
	}
	latest, _ := os.ReadFile(filepath.Join(dir, "latest.md"))
	for _, want := range []string{"at most 4 such reads in flight per hop", "| Postgres (`/ranking`, baseline) | idle |"} {
		if !strings.Contains(string(latest), want) {
			t.Errorf("latest.md lacks %q", want)
		}
	}
	if strings.Contains(string(latest), "VIOLATED") {
		t.Errorf("latest.md reports a violation of an api that cannot violate:\n%s", latest)
	}
	for _, want := range []string{"goals at current data:", "oha -n 20 -c 2 ", "results: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRun_Unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	_ = ln.Close()
	var stderr strings.Builder
	args := []string{"--url", url, "--quick", "--postgres-url", "", "--docker", "", "--out", t.TempDir()}
	if code := run(context.Background(), args, io.Discard, &stderr); code != 1 {
		t.Fatalf("exit=%d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "api unreachable") {
		t.Fatalf("stderr=%q, want the reason", stderr.String())
	}
}
