package spicepod_test

import (
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

func TestSubscriptionSettings(t *testing.T) {
	const head = "version: v1\nkind: Spicepod\nname: p\ndatasets:\n  - from: %s\n    name: rankings\n    acceleration:\n      refresh_mode: changes\n"
	for _, tc := range []struct {
		name, from, extra string
		wantErr           string // "" when the spicepod is valid
	}{
		{name: "flightsql", from: "flightsql:rankings"},
		{name: "spice.ai", from: "spice.ai:rankings"},
		{name: "flightsql with refresh_sql", from: "flightsql:rankings", extra: "      refresh_sql: SELECT * FROM rankings LIMIT 1\n",
			wantErr: "refresh_sql: cannot narrow a subscription"},
		{name: "spice.ai with a data window", from: "spice.ai:rankings", extra: "      refresh_data_window: 1h\n",
			wantErr: "refresh_data_window: cannot narrow a subscription"},
		{name: "a postgres dataset is no subscription", from: "postgres:public.rankings", extra: "      refresh_sql: SELECT * FROM rankings LIMIT 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := strings.Replace(head, "%s", tc.from, 1) + tc.extra
			_, err := spicepod.Parse([]byte(pod), "spicepod.yaml", lookup)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("parse: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err=%v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
