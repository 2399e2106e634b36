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

// heavyOptions are the flags of bench heavy.
type heavyOptions struct {
	stackOptions
	cfg    bench.HeavyConfig
	paths  string
	orders int64
}

// heavyFlags is the flag set of bench heavy.
func heavyFlags(o *heavyOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench heavy", flag.ContinueOnError)
	o.urlFlag(fs)
	fs.StringVar(&o.accRuntime, "accelerated-runtime", "http://127.0.0.1:8090", "runtime 1's HTTP API, where the heavy queries go; key from $ACCELERATED_API_KEY")
	fs.StringVar(&o.paths, "paths", "/ranking-accelerated,/ranking-materialized", "comma-separated api paths read")
	fs.IntVar(&o.cfg.Concurrency, "c", 20, "connections of each closed loop")
	fs.DurationVar(&o.cfg.Duration, "z", 10*time.Second, "length of each path's loop, per phase")
	fs.IntVar(&o.cfg.Heavy, "heavy", bench.DefaultHeavyQueries, "heavy queries kept running at once")
	fs.StringVar(&o.cfg.SQL, "sql", bench.DefaultHeavySQL, "the heavy query; %d becomes a number unique to each query sent")
	fs.DurationVar(&o.cfg.Settle, "settle", 2*time.Second, "how long the heavy queries run before the loaded phase is measured")
	fs.Int64Var(&o.orders, "orders", bench.DefaultHeavyOrders, "seed orders to at least this many first, so that each cross join is heavy (0: as they are)")
	o.postgresFlag(fs, "Postgres to seed orders in")
	o.resultFlags(fs, "bench-heavy", "the table")
	return fs
}

func runHeavy(ctx context.Context, o *heavyOptions, stdout io.Writer) error {
	o.cfg.Paths = strings.Split(o.paths, ",")
	api := bench.NewClient(o.url, o.cfg.Concurrency, 0)
	defer api.Close()
	if status, _, msg := api.Do(ctx, http.MethodGet, "/readyz", nil, ""); status/100 != 2 {
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
	acc, _ := o.runtimes()
	var hdr http.Header
	if acc.APIKey != "" {
		hdr = http.Header{"X-Api-Key": {acc.APIKey}}
	}
	// Heavy queries run until the runtime stops them.
	rt := bench.NewClient(acc.URL, o.cfg.Heavy, 10*time.Minute)
	defer rt.Close()
	res := bench.RunHeavy(ctx, api, rt, hdr, o.cfg)
	res.Orders = orders
	md := bench.HeavyMarkdown(res)
	fmt.Fprint(stdout, md)
	if err := o.publish(stdout, "# Heavy queries\n\n"+md, res, []string{"heavy-latest"}, "bench-heavy", md, res.Started); err != nil {
		return err
	}
	return ctx.Err()
}

// seedAndSync grows orders to --orders and waits until runtime 1 reflects a
// write after them; it returns the orders counted.
func seedAndSync(ctx context.Context, o *heavyOptions, api *bench.Client, stdout io.Writer) (int64, error) {
	pg, err := o.openPostgres(ctx, stdout)
	if err != nil {
		return 0, err
	}
	defer pg.Close(context.WithoutCancel(ctx))
	if _, err := pg.SeedTo(ctx, o.orders); err != nil {
		return 0, err
	}
	cu, err := bench.Sync(ctx, api, []bench.Probe{{Hop: "runtime 1", URL: bench.PathAccelerated}}, 10*time.Minute)
	if err == nil && !cu[0].OK {
		err = fmt.Errorf("runtime 1 did not reflect the seeded orders in 10 minutes: %s", cu[0].Why)
	}
	if err != nil {
		return 0, err
	}
	return pg.Count(ctx)
}
