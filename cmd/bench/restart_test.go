package main

import (
	"io"
	"slices"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestParseRestartFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantTargets []string
		wantKinds   []string
		wantSizes   []int64
		wantErr     bool
	}{
		{name: "defaults", wantTargets: []string{"memory", "materialized", "file"}, wantKinds: []string{"stop", "kill"}},
		{name: "sizes and one target", args: []string{"--sizes", "1M,10M", "--targets", "file", "--kinds", "kill"},
			wantTargets: []string{"file"}, wantKinds: []string{"kill"}, wantSizes: []int64{1_000_000, 10_000_000}},
		{name: "spaces and empty items", args: []string{"--targets", " memory, ,file"},
			wantTargets: []string{"memory", "file"}, wantKinds: []string{"stop", "kill"}},
		{name: "unknown target", args: []string{"--targets", "memory,disk"}, wantErr: true},
		{name: "no kind", args: []string{"--kinds", ","}, wantErr: true},
		{name: "bad size", args: []string{"--sizes", "lots"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseRestartFlags(tt.args, io.Discard)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseRestartFlags(%q) succeeded, want an error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.cfg.Targets, tt.wantTargets) || !slices.Equal(f.cfg.Kinds, tt.wantKinds) || !slices.Equal(f.cfg.Sizes, tt.wantSizes) {
				t.Fatalf("targets %v, kinds %v, sizes %v; want %v, %v, %v",
					f.cfg.Targets, f.cfg.Kinds, f.cfg.Sizes, tt.wantTargets, tt.wantKinds, tt.wantSizes)
			}
			if f.cfg.Rounds != bench.DefaultRestartRounds {
				t.Fatalf("rounds %d, want the default %d", f.cfg.Rounds, bench.DefaultRestartRounds)
			}
		})
	}
}
