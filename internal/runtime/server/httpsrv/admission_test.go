//go:build duckdb_arrow

package httpsrv_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// crossJoin is a query of light shape (it reads only accelerated datasets)
// that runs for minutes: a 24-way cross join of the recipe's three orders. n
// makes its text unique.
func crossJoin(n int) string {
	from := make([]string, 24)
	for i := range from {
		from[i] = fmt.Sprintf("orders o%d", i)
	}
	return fmt.Sprintf("SELECT count(*) + %d FROM %s", n, strings.Join(from, ", "))
}

// Heavy queries whose texts are new and whose shape looks light (cross joins
// over the accelerated tables, each text unique) leave the light lane to the
// rankings: they are moved to the heavy lane, or stopped and queued there, and
// the rankings keep answering.
func TestUniqueCrossJoinsDoNotStarveTheRankings(t *testing.T) {
	e, url := MustServer(t, func(e *engine.Engine) {
		e.Admission = engine.Admission{Slots: 4, HeavySlots: 2, QueueTimeout: 3 * time.Second,
			LightBudget: 500 * time.Millisecond}
		e.QueryTimeout = 5 * time.Minute
	}, nil)
	if code, _, body := post(context.Background(), t, url, runtimetest.RankingsSQL); code != http.StatusOK {
		t.Fatalf("first ranking read: %d %q", code, body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	const attackers = 6
	for i := 0; i < attackers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(ctx, t, url, crossJoin(i))
		}()
	}
	runtimetest.WaitFor(t, e, "the six cross joins to hold or wait for slots, none on trial", func() bool {
		s := e.Admission.Stats()
		return s.Running+s.QueuedLight+s.QueuedHeavy == attackers && s.OnTrial == 0
	})

	const reads = 20
	ok := 0
	for i := 0; i < reads; i++ {
		code, _, body := post(context.Background(), t, url, runtimetest.RankingsSQL)
		if code == http.StatusOK && strings.Contains(body, "nintendo") {
			ok++
		} else {
			t.Logf("ranking read %d: %d %q", i, code, body)
		}
	}
	if ok != reads {
		t.Fatalf("%d of %d ranking reads answered while six unique cross joins ran, want all", ok, reads)
	}
	s := e.Admission.Stats()
	if got, want := s.RunningHeavy, 2; got != want {
		t.Errorf("heavy lane runs %d queries, want %d (the cross joins, moved there)", got, want)
	}
	if got := s.Moved + s.Restarted; got < 1 {
		t.Errorf("%d queries left the light lane, want the one on trial moved or stopped", got)
	}
}
