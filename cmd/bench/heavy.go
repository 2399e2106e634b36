package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

const heavyUsage = `bench heavy: the ranking reads with the runtime idle, then while heavy ad-hoc
queries run on it without pause (make bench-heavy). It shows whether cheap reads
keep answering when someone floods the runtime with expensive SQL.

usage: bench heavy [flags]

flags:
`

// heavy is `bench heavy`.
func heavy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench heavy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, heavyUsage); fs.PrintDefaults() }
	url := fs.String("url", DefaultURL, "base URL of the api")
	runtimeURL := fs.String("runtime-url", "http://127.0.0.1:8090", "the accelerated runtime's Spice HTTP API, where the heavy queries go")
	key := fs.String("api-key", "", "the runtime's API key (default $ACCELERATED_API_KEY)")
	paths := fs.String("paths", "/ranking-accelerated,/ranking-materialized", "comma-separated api paths read")
	var cfg bench.HeavyConfig
	fs.IntVar(&cfg.Concurrency, "c", 20, "connections of each closed loop")
	fs.DurationVar(&cfg.Duration, "z", 10*time.Second, "length of each path's loop, per phase")
	fs.IntVar(&cfg.Heavy, "heavy", bench.DefaultHeavyQueries, "heavy queries kept running at once")
	fs.StringVar(&cfg.SQL, "sql", bench.DefaultHeavySQL, "the heavy query; %d, if present, becomes a number unique to each query sent")
	fs.DurationVar(&cfg.Settle, "settle", 2*time.Second, "how long the heavy queries run before the loaded phase is measured")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	cfg.Paths = strings.Split(*paths, ",")
	if *key == "" {
		*key = envOr("ACCELERATED_API_KEY", "")
	}
	var hdr http.Header
	if *key != "" {
		hdr = http.Header{"X-Api-Key": {*key}}
	}
	api := bench.NewClient(*url, cfg.Concurrency, 0)
	defer api.Close()
	// Heavy queries run until the runtime's query deadline ends them.
	rt := bench.NewClient(*runtimeURL, cfg.Heavy, 10*time.Minute)
	defer rt.Close()
	if s, _ := api.Do(ctx, http.MethodGet, "/readyz", nil, nil); s.Status/100 != 2 {
		fmt.Fprintf(stderr, "bench heavy: the api at %s does not answer /readyz (%d %s): start the stack with make\n", *url, s.Status, s.Err)
		return 1
	}
	res := bench.RunHeavy(ctx, api, rt, hdr, cfg)
	fmt.Fprint(stdout, bench.HeavyMarkdown(cfg, res))
	return 0
}
