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
			Recovered: true, Converged: true, ErrorSeconds: map[string]int{chaos.EndpointAccelerated: 3, chaos.EndpointMaterialized: 2},
			PlainErrorSeconds: map[string]int{chaos.EndpointAccelerated: 3}},
		{Fault: "kill-api", Description: "kill the api", Writes: 5, Acked: 4, Recover: time.Minute, Lost: 1,
			Details: []string{"after the quiet period: order 7 missing in accelerated"}},
	}}
	md := chaos.Markdown(rep)
	for _, want := range []string{
		"| kill-accelerated | 0 | 0 | 3 | 2 (0) | 2.5 s | 9/10 | 0 | 0 | yes | 0 | 0 | 0 | 0 |",
		"| kill-api | 0 | 0 | 0 | 0 | not in 60.0 s | 4/5 | 1 | 0 | **no** |",
		"- `kill-api`: after the quiet period: order 7 missing in accelerated",
		"- `kill-accelerated`: kill it.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
