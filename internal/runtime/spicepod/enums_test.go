package spicepod_test

import (
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// parseAcceleration parses one dataset with time_column ts and the given
// acceleration lines (indented for the acceleration block).
func parseAcceleration(tb testing.TB, dataset, acceleration string) (*spicepod.Dataset, error) {
	tb.Helper()
	yaml := "version: v1\nkind: Spicepod\nname: t\ndatasets:\n  - from: postgres:public.orders\n    name: orders\n    time_column: ts\n" +
		dataset + "    acceleration:\n      enabled: true\n" + acceleration
	pod, err := spicepod.Parse([]byte(yaml), "spicepod.yaml", nil)
	if err != nil {
		return nil, err
	}
	return &pod.Datasets[0], nil
}

func TestEnumsParseToTheirConstants(t *testing.T) {
	tests := []struct {
		name         string
		dataset, acc string
		check        func(d *spicepod.Dataset) (got, want any)
	}{
		{"default engine", "", "", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.Engine, spicepod.EngineArrow }},
		{"engine duckdb", "", "      engine: duckdb\n", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.Engine, spicepod.EngineDuckDB }},
		{"default mode", "", "", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.Mode, spicepod.ModeMemory }},
		{"mode file", "", "      mode: file\n", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.Mode, spicepod.ModeFile }},
		{"default refresh", "", "", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.RefreshMode, spicepod.RefreshFull }},
		{"append", "", "      refresh_mode: append\n", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.RefreshMode, spicepod.RefreshAppend }},
		{"changes", "", "      refresh_mode: changes\n", func(d *spicepod.Dataset) (any, any) { return d.Acceleration.RefreshMode, spicepod.RefreshChanges }},
		{"default on_zero_results", "", "", func(d *spicepod.Dataset) (any, any) {
			return d.Acceleration.OnZeroResults, spicepod.ZeroResultsReturnEmpty
		}},
		{"use_source", "", "      on_zero_results: use_source\n", func(d *spicepod.Dataset) (any, any) {
			return d.Acceleration.OnZeroResults, spicepod.ZeroResultsUseSource
		}},
		{"upsert", "", "      primary_key: id\n      on_conflict:\n        id: upsert\n", func(d *spicepod.Dataset) (any, any) {
			return d.Acceleration.OnConflict["id"], spicepod.ConflictUpsert
		}},
		{"unique index", "", "      indexes:\n        \"(id, ts)\": unique\n", func(d *spicepod.Dataset) (any, any) {
			return d.Acceleration.Indexes["(id, ts)"], spicepod.IndexUnique
		}},
		{"default ready_state", "", "", func(d *spicepod.Dataset) (any, any) { return d.ReadyState, spicepod.ReadyOnLoad }},
		{"on_registration", "    ready_state: on_registration\n", "", func(d *spicepod.Dataset) (any, any) {
			return d.ReadyState, spicepod.ReadyOnRegistration
		}},
		{"unset time_format", "", "", func(d *spicepod.Dataset) (any, any) { return d.TimeFormat, spicepod.TimeFormat("") }},
		{"unix_millis", "    time_format: unix_millis\n", "", func(d *spicepod.Dataset) (any, any) {
			return d.TimeFormat, spicepod.TimeFormatUnixMillis
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseAcceleration(t, tc.dataset, tc.acc)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tc.check(d); got != want {
				t.Fatalf("got %#v, want %#v", got, want)
			}
		})
	}
}

func TestEnumRefusesUnknownValue(t *testing.T) {
	_, err := parseAcceleration(t, "", "      refresh_mode: chnges\n")
	if err == nil || !strings.Contains(err.Error(), "full, append, changes") {
		t.Fatalf("err=%v, want one listing full, append, changes", err)
	}
}

func TestRefreshModeStreams(t *testing.T) {
	for mode, want := range map[spicepod.RefreshMode]bool{
		spicepod.RefreshFull: false, spicepod.RefreshAppend: false, spicepod.RefreshChanges: true,
	} {
		if got := mode.Streams(); got != want {
			t.Errorf("%s.Streams()=%t, want %t", mode, got, want)
		}
	}
}
