package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// heavyOptions are the flags of bench heavy.
type heavyOptions struct {
	stackOptions
	cfg        bench.HeavyConfig
	runtimeURL string
	paths      string
	orders     int64
}

// heavyFlags is the flag set of bench heavy.
func heavyFlags(o *heavyOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench heavy", flag.ContinueOnError)
	o.apiFlags(fs)
	fs.StringVar(&o.runtimeURL, "runtime-url", "http://127.0.0.1:8090", "the accelerated runtime's Spice HTTP API, where the heavy queries go; key from $ACCELERATED_API_KEY")
	fs.StringVar(&o.paths, "paths", "/ranking-accelerated,/ranking-materialized", "comma-separated api paths read")
	fs.IntVar(&o.cfg.Concurrency, "c", 20, "connections of each closed loop")
	fs.DurationVar(&o.cfg.Duration, "z", 10*time.Second, "length of each path's loop, per phase")
	fs.IntVar(&o.cfg.Heavy, "heavy", bench.DefaultHeavyQueries, "heavy queries kept running at once")
	fs.StringVar(&o.cfg.SQL, "sql", bench.DefaultHeavySQL, "the heavy query; %d becomes a number unique to each query sent")
	fs.DurationVar(&o.cfg.Settle, "settle", 2*time.Second, "how long the heavy queries run before the loaded phase is measured")
	fs.Int64Var(&o.orders, "orders", bench.DefaultHeavyOrders, "seed orders to at least this many first, so that each cross join is heavy (0: as they are)")
	o.postgresFlag(fs, DefaultPostgresURL, "Postgres to seed orders in")
	o.resultFlags(fs, "docs page whose generated:bench-heavy block gets the table")
	return fs
}

func runHeavy(ctx context.Context, o *heavyOptions, stdout io.Writer) error {
	o.cfg.Paths = strings.Split(o.paths, ",")
	api := bench.NewClient(o.url, o.cfg.Concurrency, 0)
	defer api.Close()
	if status, _, msg := api.Do(ctx, http.MethodGet, "/readyz", nil, nil); status/100 != 2 {
		return fmt.Errorf("%w: the api at %s does not answer /readyz (%d %s): start the stack with make", bench.ErrUnreachable, o.url, status, msg)
	}
	orders := int64(-1)
	if o.orders > 0 {
		n, err := seedAndSync(ctx, o, api, stdout)
		if err != nil {
			return err
		}
		orders = n
	}
	var hdr http.Header
	if key := envOr("ACCELERATED_API_KEY", ""); key != "" {
		hdr = http.Header{"X-Api-Key": {key}}
	}
	// Heavy queries run until the runtime stops them.
	rt := bench.NewClient(o.runtimeURL, o.cfg.Heavy, 10*time.Minute)
	defer rt.Close()
	res := bench.RunHeavy(ctx, api, rt, hdr, o.cfg)
	res.Orders = orders
	md := bench.HeavyMarkdown(res)
	fmt.Fprint(stdout, md)
	js, err := json.MarshalIndent(struct {
		bench.HeavyResult
		Rows []bench.HeavyRow `json:"rows"`
	}{res, res.Rows()}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := save(o.out, map[string]string{"heavy-latest.md": "# Heavy queries\n\n" + md, "heavy-latest.json": string(js) + "\n"}, stdout); err != nil {
		return err
	}
	updateDocs(o.docs, "bench-heavy", md, res.Started, stdout)
	return ctx.Err()
}

// seedAndSync grows orders to --orders and waits until runtime 1 reflects a
// write after them; it returns the orders counted.
func seedAndSync(ctx context.Context, o *heavyOptions, api *bench.Client, stdout io.Writer) (int64, error) {
	pg, err := o.openPostgres(ctx)
	if err != nil {
		return 0, err
	}
	defer pg.Close(context.WithoutCancel(ctx))
	s := bench.NewSeeder(pg)
	s.Out = stdout
	if _, err := s.SeedTo(ctx, o.orders); err != nil {
		return 0, err
	}
	status, hdr, msg := api.Do(ctx, http.MethodPost, bench.PathOrders, nil, nil)
	if status/100 != 2 {
		return 0, fmt.Errorf("write an order after seeding: %s", msg)
	}
	min := http.Header{wire.HeaderMinPosition: {hdr.Get(wire.HeaderPosition)}}
	err = bench.Poll(ctx, 10*time.Minute, 500*time.Millisecond, "runtime 1 to reflect the seeded orders", func() bool {
		status, _, _ := api.Do(ctx, http.MethodGet, bench.PathAccelerated, min, nil)
		return status/100 == 2
	})
	if err != nil {
		return 0, err
	}
	return s.Count(ctx)
}
