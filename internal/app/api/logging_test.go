package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
)

// Anyone can make the api answer 504 (read while a runtime is slow); a burst of
// them writes one warn line, not one error line each.
func TestDependencyTimeoutsAreLoggedOncePerInterval(t *testing.T) {
	f := newFixture(t)
	f.accelerated = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		return ranking.Result{}, &ranking.SourceError{Source: "accelerated runtime", Addr: "accelerated:50051",
			Kind: ranking.ErrTimeout, Detail: "no answer within 15s"}
	}
	for i := 0; i < 50; i++ {
		if w := f.do(t, "GET", "/ranking-accelerated", ""); w.Code != 504 {
			t.Fatalf("status=%d, want 504", w.Code)
		}
	}
	logged := f.log.String()
	if got := strings.Count(logged, "status=504"); got != 1 {
		t.Fatalf("%d log lines for 50 answers 504, want 1:\n%s", got, logged)
	}
	if strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, "level=WARN") {
		t.Fatalf("log %q: want the line at warn level", logged)
	}
}
