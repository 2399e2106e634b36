//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// materializedPod is the recipe's second spicepod without refresh_check_interval:
// every refresh after the first load comes from the upstream's change notices.
func materializedPod(endpoint string) string {
	return `version: v1
kind: Spicepod
name: materialized
datasets:
  - from: flightsql:rankings
    name: rankings
    params:
      flightsql_endpoint: ` + endpoint + `
    acceleration:
      enabled: true
      refresh_mode: full
`
}

func refreshes(t *testing.T, e *engine.Engine, name string) int64 {
	t.Helper()
	st, err := e.StatusOf(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Refreshes
}

// TestChain runs the recipe's two runtimes: B materializes A's rankings view
// through the flightsql connector, follows A's changes through spice.watch, keeps
// its data while A is down and recovers when A is back on the same port.
func TestChain(t *testing.T) {
	a := newUpstream(t)
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")
	b := runtimetest.NewEngine(t, materializedPod(endpoint), map[string]engine.Source{"rankings": src},
		func(e *engine.Engine) { e.Cache = engine.NewCache(0, time.Minute) })
	runtimetest.WaitReady(t, b)

	fromA, posA := query(t, a.engine, rankingsQuery)
	fromB, posB := query(t, b, rankingsQuery)
	if !equal(fromA, wantRankings) || !equal(fromB, fromA) {
		t.Fatalf("B=%q A=%q, want both %q", fromB, fromA, wantRankings)
	}
	if posA != 100 || posB != posA {
		t.Errorf("position B=%s A=%s, want both 0/64", posB, posA)
	}

	// The second read of unchanged data is a cache hit. A refresh caused by
	// the first change notice (sent when B starts watching) may land between
	// two reads and rightly invalidate: then read twice again.
	for attempt := 0; ; attempt++ {
		before := refreshes(t, b, "rankings")
		queryCache(t, b, rankingsQuery)
		_, _, cache := queryCache(t, b, rankingsQuery)
		if cache == engine.CacheHit {
			break
		}
		if refreshes(t, b, "rankings") == before || attempt == 10 {
			t.Fatalf("B's second answer: cache=%s with no refresh in between, want HIT", cache)
		}
	}

	// A new order in A reaches B without polling: B has no refresh interval. B's
	// results cache, whose entries live a minute, does not hide it.
	a.change(t, 200, 0)
	runtimetest.WaitWatermark(t, b, "rankings", 200)
	got, pos, cache := queryCache(t, b, rankingsQuery)
	if !equal(got, wantChangedRankings) || pos != 200 || cache != engine.CacheMiss {
		t.Errorf("B after the change=%q at %s (%s), want %q at 0/C8 (MISS)", got, pos, cache, wantChangedRankings)
	}

	// A goes away: B keeps its data, and its refresh fails with a clear error.
	addr := a.srv.Addr()
	runtimetest.StopServer(t, a.srv)
	if err := b.Refresh("rankings"); err != nil {
		t.Fatal(err)
	}
	var st engine.Status
	runtimetest.WaitFor(t, b, "B's refresh to fail", func() bool {
		st, _ = b.StatusOf(context.Background(), "rankings")
		return st.LastError != ""
	})
	if st.Fresh || !st.Ready {
		t.Errorf("status while A is down: fresh=%v ready=%v, want not fresh, ready", st.Fresh, st.Ready)
	}
	for _, part := range []string{"rankings", endpoint, "unavailable", "keeps its last data"} {
		if !strings.Contains(st.LastError, part) {
			t.Errorf("last error %q does not mention %q", st.LastError, part)
		}
	}
	if got, pos := query(t, b, rankingsQuery); !equal(got, wantChangedRankings) || pos != 200 {
		t.Errorf("B while A is down=%q at %s, want %q at 0/C8", got, pos, wantChangedRankings)
	}

	// A comes back on the same port with newer data: B catches up by itself.
	a.change(t, 300, 100)
	a.srv = runtimetest.StartServerAt(t, addr, a.engine, a.mem, nil)
	runtimetest.WaitWatermark(t, b, "rankings", 300)
	want := []string{"the most beautiful flower|135", "nintendo|30", "the most delicious chocalate|20"}
	if got, _ := query(t, b, rankingsQuery); !equal(got, want) {
		t.Errorf("B after A is back=%q, want %q", got, want)
	}
	runtimetest.WaitFor(t, b, "B to be fresh again", func() bool {
		st, _ = b.StatusOf(context.Background(), "rankings")
		return st.Fresh && st.LastError == ""
	})
	if wm, _ := b.Watermark("rankings"); wm != position.LSN(300) {
		t.Errorf("B watermark=%s, want 0/12C", wm)
	}
}
