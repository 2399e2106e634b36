package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

func TestMarkdown(t *testing.T) {
	rep := chaos.Report{Started: time.Unix(0, 0), Settings: "Workload: test.", Results: []chaos.Result{
		{Fault: "kill-accelerated", Description: "kill it", Writes: 10, Acked: 9, Recover: 2500 * time.Millisecond,
			Recovered: true, Converged: true, ReadFindings: chaos.ReadFindings{ErrorSeconds: map[string]int{chaos.EndpointAccelerated: 3, chaos.EndpointMaterialized: 2},
				PlainErrorSeconds: map[string]int{chaos.EndpointAccelerated: 3}}},
		{Fault: "kill-api", Description: "kill the api", Writes: 5, Acked: 4, Recover: time.Minute,
			State: chaos.StateFindings{Lost: []chaos.Missing{{ID: 7, Where: chaos.InAccelerated}}},
			Start: 1200 * time.Millisecond, Beyond: 4 * time.Second,
			Details: []string{"after the quiet period: order 7 missing in accelerated"}},
		{Fault: "overload", Description: "write more", Writes: 100, Acked: 100, Recover: 4 * time.Second, Recovered: true,
			Converged: true, Load: &chaos.LoadFindings{Rate: 50, Overload: 340, Achieved: 210.4, Skipped: 3,
				BaseRSS: map[string]int64{chaos.ServiceAccelerated: 100 << 20}, PeakRSS: map[string]int64{chaos.ServiceAccelerated: 150 << 20},
				LagSeconds: map[string]float64{chaos.ServiceAccelerated: 1.5}, LagBytes: map[string]int64{chaos.ServiceAccelerated: 2048},
				Behind: map[string]int64{chaos.ServiceMaterialized: 4096}, CatchUp: 4 * time.Second}},
	}}
	md := chaos.Markdown(rep)
	for _, want := range []string{
		"| kill-accelerated | 0 | 0 | 3 | 2 (0) | - | 2.5 s | 0.0 s | met | 9/10 | 0 | 0 | yes | 0 | 0 | 0 | 0 |",
		"| kill-api | 0 | 0 | 0 | 0 | 1.2 s | not in 60.0 s | 4.0 s | **missed** | 4/5 | 1 | 0 | **no** |",
		"| overload | 0 | 0 | 0 | 0 | - | 4.0 s | 0.0 s | **missed** |",
		"| overload | 50 -> 340 | 210 | 3 | 100 -> 150 | n/a -> n/a | 1.5 s / 2 KiB | not reported | 0 KiB | 4 KiB | 4.0 s |",
		"- `kill-api`: after the quiet period: order 7 missing in accelerated",
		"- `kill-accelerated`: kill it.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
