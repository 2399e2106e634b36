package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestParseWritesFlags(t *testing.T) {
	rt := []string{"--docker", "/bin/true", "--accelerated-runtime", "http://127.0.0.1:1", "--materialized-runtime", "http://127.0.0.1:2"}
	for _, tc := range []struct {
		name string
		args []string
		err  string // a part of the error; none when empty
		rate []float64
		step time.Duration
		ref  int
		mode string
	}{
		{name: "defaults", args: rt, ref: bench.DefaultRefine, step: bench.DefaultWriteStep, mode: bench.RuntimesPause},
		{name: "smoke", args: append([]string{"--rates", "100,500", "--step", "10s", "--refine", "0", "--command-side", "stop"}, rt...),
			rate: []float64{100, 500}, step: 10 * time.Second, ref: -1, mode: bench.RuntimesStop},
		{name: "no runtimes", args: []string{"--docker", "/bin/true"}, err: "--accelerated-runtime and --materialized-runtime are required"},
		{name: "bad mode", args: append([]string{"--command-side", "kill"}, rt...), err: `--command-side "kill"`},
		{name: "bad rate", args: append([]string{"--rates", "100,-1"}, rt...), err: "not a positive rate"},
		{name: "no docker", args: append(slices.Clone(rt), "--docker", "/nonexistent/docker"), err: "the runtimes are switched off with it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseWritesFlags(tc.args, io.Discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := o.Config
			if !slices.Equal(c.Rates, tc.rate) || c.Step != tc.step || c.Refine != tc.ref {
				t.Fatalf("rates %v step %s refine %d; want %v %s %d", c.Rates, c.Step, c.Refine, tc.rate, tc.step, tc.ref)
			}
			if got := c.Runtimes.(*bench.DockerRuntimes).Mode; got != tc.mode {
				t.Fatalf("mode %q, want %q", got, tc.mode)
			}
		})
	}
}
