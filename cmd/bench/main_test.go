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

func TestHelpNamesEverySubcommand(t *testing.T) {
	var out strings.Builder
	if code := run(context.Background(), []string{"--help"}, io.Discard, &out); code != 0 {
		t.Fatalf("exit=%d", code)
	}
	for _, want := range []string{"writes", "heavy", "failover", "restart", "-quick", "-scale"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench --help lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run(context.Background(), []string{"writes", "--help"}, io.Discard, &out); code != 0 || !strings.Contains(out.String(), "-backlog") {
		t.Errorf("bench writes --help: exit=%d\n%s", code, out.String())
	}
}

// scale parses args as bench's own flags.
func scale(t *testing.T, args ...string) (*scaleOptions, error) {
	t.Helper()
	o := &scaleOptions{}
	fs := scaleFlags(o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.resolve(fs)
}

func TestScaleFlags(t *testing.T) {
	o, err := scale(t, "--quick", "-c", "7", "--scale", "10k,1M")
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if c.Duration != 3*time.Second || c.Concurrency != 7 || c.FreshnessWindow != 5*time.Second || !slices.Equal(c.Scale, []int64{10_000, 1_000_000}) {
		t.Fatalf("quick: z=%v c=%d freshness=%v scale=%v; want the quick z and window, the given -c and --scale", c.Duration, c.Concurrency, c.FreshnessWindow, c.Scale)
	}
	if o, _ := scale(t, "--quick", "-n", "500"); o.cfg.Requests != 500 || o.cfg.Duration != 0 {
		t.Fatalf("n=%d z=%v, want an explicit -n to beat the quick -z", o.cfg.Requests, o.cfg.Duration)
	}
	o, err = scale(t, "--rate", "200,1000", "--warmup", "0", "--write-rate", "0")
	if err != nil {
		t.Fatal(err)
	}
	c = o.cfg
	if c.Requests != bench.DefaultRequests || c.Concurrency != bench.DefaultConcurrency || c.Scale != nil || !slices.Equal(c.Rates, []float64{200, 1000}) {
		t.Fatalf("config=%+v, want the recipe's -n20000 -c100 on current data", c)
	}
	if c.Warmup != 0 || c.WriteRate != 0 || o.postgresURL != DefaultPostgresURL || o.out != DefaultOutDir {
		t.Fatalf("warmup=%v write rate=%v options=%+v", c.Warmup, c.WriteRate, o.stackOptions)
	}
	for _, args := range [][]string{{"--scale", "1M,10k"}, {"--scale", "lots"}, {"--rate", "-3"}, {"-c", "0"}, {"--freshness-concurrency", "0"}} {
		if _, err := scale(t, args...); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	for _, args := range [][]string{{"--scale", "1M,10k"}, {"stray"}, {"writes", "--command-side", "kill", "--accelerated-runtime", "x", "--materialized-runtime", "y"}, {"writes"}, {"restart", "--kinds", "nap"}} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("exit=%d on %q, want 2", code, args)
		}
	}
}

// fakeAPI answers every path with 200 and the position of the last write: the
// smallest api the command can measure. It honours Spice-Min-Position
// trivially, as Postgres does: a token it handed out is never ahead of it.
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
	page := filepath.Join(dir, "benchmarks.md")
	const block = "# Benchmarks\n\n<!-- generated:bench begin -->\nold\n<!-- generated:bench end -->\n"
	for _, quick := range []bool{true, false} {
		if err := os.WriteFile(page, []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		args := []string{"--url", fakeAPI(t), "--quick=" + map[bool]string{true: "true", false: "false"}[quick], "-n", "20", "-c", "2", "--rounds", "2",
			"--warmup", "10ms", "--freshness-window", "100ms", "--changes-window", "100ms", "--write-rate", "50", "--grace", "500ms",
			"--freshness-concurrency", "4", "--postgres-url", "", "--project", "none", "--out", dir, "--docs", page}
		if code := run(context.Background(), args, &out, &out); code != 0 {
			t.Fatalf("exit=%d:\n%s", code, out.String())
		}
		latest, err := os.ReadFile(filepath.Join(dir, "latest.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"/ranking-materialized (cache off)", "at most 4 such reads in flight per hop", "| Postgres (`/ranking`, baseline) | idle |"} {
			if !strings.Contains(string(latest), want) {
				t.Errorf("latest.md lacks %q", want)
			}
		}
		if strings.Contains(string(latest), "VIOLATED") {
			t.Errorf("latest.md reports a violation of an api that cannot violate:\n%s", latest)
		}
		doc, _ := os.ReadFile(page)
		if updated := !strings.Contains(string(doc), "\nold\n"); updated == quick || (updated && !strings.Contains(string(doc), "_Generated ")) {
			t.Errorf("quick=%v: docs page updated=%v:\n%s", quick, updated, doc)
		}
	}
	if md, _ := filepath.Glob(filepath.Join(dir, "*Z.md")); len(md) == 0 {
		t.Fatalf("timestamped results: %v", md)
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
	for _, args := range [][]string{
		{"--url", url, "--quick", "--postgres-url", "", "--out", t.TempDir()},
		{"heavy", "--url", url, "--orders", "0", "--out", t.TempDir()},
	} {
		if code := run(context.Background(), args, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "api unreachable") {
			t.Fatalf("exit=%d, want 1 saying why: %q", code, stderr.String())
		}
	}
}
