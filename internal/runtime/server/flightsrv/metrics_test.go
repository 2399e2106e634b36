//go:build duckdb_arrow

package flightsrv_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newRecipe(t, nil, func(s *flightsrv.Server) { s.Metrics = flightsrv.NewMetrics(reg) })
	c := newClient(t, r.srv)
	ctx := testContext(t)
	info, err := c.Execute(ctx, "SELECT * FROM products")
	if err != nil {
		t.Fatal(err)
	}
	doGet(t, c, info)
	if _, err := c.Execute(ctx, "SELECT * FROM nope"); err == nil {
		t.Fatal("bad query succeeded")
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	observed := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "flight_requests":
				counts[labels["method"]+" "+labels["code"]] = m.GetCounter().GetValue()
			case "flight_request_duration_ms":
				observed[labels["method"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	for key, want := range map[string]float64{"GetFlightInfo OK": 1, "DoGet OK": 1, "GetFlightInfo InvalidArgument": 1} {
		if got := counts[key]; got != want {
			t.Errorf("flight_requests{%s}=%v, want %v (all: %v)", key, got, want, counts)
		}
	}
	if got, want := observed["GetFlightInfo"], uint64(2); got != want {
		t.Errorf("flight_request_duration_ms{GetFlightInfo} count=%d, want %d", got, want)
	}
}
