//go:build duckdb_arrow

package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

var eventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "ts", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String},
}, nil)

func appendPod(overlap string) string {
	pod := `version: v1
kind: Spicepod
name: append
datasets:
  - from: test:events
    name: events
    time_column: ts
    time_format: unix_seconds
    acceleration:
      refresh_mode: append
`
	if overlap != "" {
		pod += "      refresh_append_overlap: " + overlap + "\n"
	}
	return pod
}

// TestAppendRefresh loads (100,a) (200,b), then lets the source commit more rows
// and refreshes once: rows read again are dropped, rows at the boundary and
// within the overlap are kept, each exactly once.
func TestAppendRefresh(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overlap   string
		later     [][]any // the source's rows at the refresh
		wantSince int64
		want      []string
	}{
		{
			name:      "a row committed later at the boundary is kept",
			later:     [][]any{{100, "a"}, {200, "b"}, {200, "c"}, {300, "d"}},
			wantSince: 200,
			want:      []string{"100|a", "200|b", "200|c", "300|d"},
		},
		{
			name:      "an identical row committed later at the boundary is kept",
			later:     [][]any{{100, "a"}, {200, "b"}, {200, "b"}, {300, "d"}},
			wantSince: 200,
			want:      []string{"100|a", "200|b", "200|b", "300|d"},
		},
		{
			name:      "the overlap reads earlier rows again without duplicating them",
			overlap:   "150s",
			later:     [][]any{{100, "a"}, {200, "b"}, {300, "d"}},
			wantSince: 50,
			want:      []string{"100|a", "200|b", "300|d"},
		},
		{
			name:      "a late row within the overlap is caught",
			overlap:   "60s",
			later:     [][]any{{100, "a"}, {150, "x"}, {200, "b"}, {300, "d"}},
			wantSince: 140,
			want:      []string{"100|a", "150|x", "200|b", "300|d"},
		},
		{
			name:      "a late row before the boundary is not read without an overlap",
			later:     [][]any{{100, "a"}, {150, "x"}, {200, "b"}, {300, "d"}},
			wantSince: 200,
			want:      []string{"100|a", "200|b", "300|d"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			events := runtimetest.NewSource(t, mem, eventsSchema)
			events.Set(t, 100, []any{100, "a"}, []any{200, "b"})
			e := runtimetest.NewEngine(t, appendPod(tc.overlap), map[string]engine.Source{"events": events}, nil)
			runtimetest.WaitReady(t, e)

			events.Set(t, 200, tc.later...)
			if err := e.Refresh("events"); err != nil {
				t.Fatal(err)
			}
			runtimetest.WaitWatermark(t, e, "events", 200)
			got, pos := mustQuery(t, e, "SELECT ts, v FROM events ORDER BY ts, v")
			if !equal(got, tc.want) || pos != 200 {
				t.Fatalf("events after the append = %q at %s, want %q at 0/C8", got, pos, tc.want)
			}
			reqs := events.Requests()
			if reqs[0].Since != nil {
				t.Fatalf("first load scanned since %v, want every row", reqs[0].Since.Value)
			}
			last := reqs[len(reqs)-1].Since
			if last == nil || last.Column != "ts" || last.Value != tc.wantSince {
				t.Fatalf("append scanned since %+v, want ts >= %d", last, tc.wantSince)
			}
		})
	}
}

func retryPod(acceleration string) string {
	return `version: v1
kind: Spicepod
name: retry
datasets:
  - from: test:products
    name: products
    acceleration:
` + acceleration
}

// TestRefreshRetries fails refreshes after the first load. A failing refresh
// keeps the last good data served and records the error; retries follow
// refresh_retry_*.
func TestRefreshRetries(t *testing.T) {
	refused := errors.New("connection refused")
	renamed := [][]any{{1, "rose"}, {2, "chocolate"}, {3, "switch"}}
	oldRows := threeProducts
	newRows := []string{"1|rose", "2|chocolate", "3|switch"}
	for _, tc := range []struct {
		name         string
		acceleration string
		failNext     int // scans that fail after the load
		trigger      int // refreshes asked for before the new data arrives
		wantFailures int64
	}{
		{
			name:         "retried until success within max attempts",
			acceleration: "      refresh_retry_max_attempts: 3\n",
			failNext:     2, trigger: 1, wantFailures: 2,
		},
		{
			name:         "given up after max attempts, the next refresh succeeds",
			acceleration: "      refresh_retry_max_attempts: 2\n",
			failNext:     2, trigger: 2, wantFailures: 2,
		},
		{
			name:         "not retried when disabled",
			acceleration: "      refresh_retry_enabled: false\n",
			failNext:     1, trigger: 2, wantFailures: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedMem(t)
			products, _ := runtimetest.RecipeSources(t, mem, 100)
			e := runtimetest.NewEngine(t, retryPod(tc.acceleration), map[string]engine.Source{"products": products}, nil)
			runtimetest.WaitReady(t, e)

			products.FailNext(tc.failNext, refused)
			products.Set(t, 200, renamed...)
			if err := e.Refresh("products"); err != nil {
				t.Fatal(err)
			}
			if tc.trigger > 1 {
				// The refresh gives up: the last good data is still served, the
				// error is recorded, and nothing more happens until asked.
				runtimetest.WaitFor(t, e, "the refresh to give up", func() bool {
					return status(t, e, "products").Failures >= tc.wantFailures
				})
				st := status(t, e, "products")
				if !st.Ready || st.State != engine.StateReady || !strings.Contains(st.LastError, refused.Error()) || st.Fresh {
					t.Fatalf("status after a failed refresh = ready %v, state %s, last error %q, fresh %v; want ready, ready, %q, not fresh",
						st.Ready, st.State, st.LastError, st.Fresh, refused)
				}
				if got, pos := mustQuery(t, e, "SELECT id, name FROM products ORDER BY id"); !equal(got, oldRows) || pos != 100 {
					t.Fatalf("products after a failed refresh = %q at %s, want the last good %q at 0/64", got, pos, oldRows)
				}
				if err := e.Refresh("products"); err != nil {
					t.Fatal(err)
				}
			}
			runtimetest.WaitWatermark(t, e, "products", 200)
			if got, _ := mustQuery(t, e, "SELECT id, name FROM products ORDER BY id"); !equal(got, newRows) {
				t.Fatalf("products after the refresh = %q, want %q", got, newRows)
			}
			st := status(t, e, "products")
			if st.Failures != tc.wantFailures || st.LastError != "" || !st.Fresh {
				t.Fatalf("status = failures %d, last error %q, fresh %v; want %d, none, fresh", st.Failures, st.LastError, st.Fresh, tc.wantFailures)
			}
			if got, want := products.Scans(), 1+int(tc.wantFailures)+1; got != want {
				t.Fatalf("source scanned %d times, want %d (load, %d failures, success)", got, want, tc.wantFailures)
			}
		})
	}
}

// TestOnZeroResults asks the acceleration for a row only the source has (it
// was added after the load): use_source answers from the source, return_empty
// answers nothing; a query with rows never reads the source.
func TestOnZeroResults(t *testing.T) {
	for _, tc := range []struct {
		onZero string
		want   []string
	}{
		{onZero: "use_source", want: []string{"4|mario"}},
		{onZero: "return_empty", want: []string{}},
	} {
		t.Run(tc.onZero, func(t *testing.T) {
			mem := checkedMem(t)
			products, _ := runtimetest.RecipeSources(t, mem, 100)
			e := runtimetest.NewEngine(t, retryPod(fmt.Sprintf("      on_zero_results: %s\n", tc.onZero)),
				map[string]engine.Source{"products": products}, nil)
			runtimetest.WaitReady(t, e)
			products.Set(t, 200, []any{1, "the most beautiful flower"}, []any{4, "mario"})
			scans := products.Scans()

			if got, _ := mustQuery(t, e, "SELECT id, name FROM products WHERE id = 1"); !equal(got, []string{"1|the most beautiful flower"}) {
				t.Fatalf("query with rows = %q", got)
			}
			if products.Scans() != scans {
				t.Fatal("a query with rows read the source")
			}
			got, pos := mustQuery(t, e, "SELECT id, name FROM products WHERE id = 4")
			if !equal(got, tc.want) {
				t.Fatalf("query without rows in the acceleration = %q, want %q", got, tc.want)
			}
			if pos != 100 {
				t.Fatalf("answer position = %s, want the acceleration's 0/64", pos)
			}
		})
	}
}

// TestAppendRefreshTimestamps runs an append with overlap on timestamp time
// columns, with and without a time zone: the boundary read back from DuckDB and
// moved by the overlap must compare with both.
func TestAppendRefreshTimestamps(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, typ := range []*arrow.TimestampType{{Unit: arrow.Microsecond}, {Unit: arrow.Microsecond, TimeZone: "UTC"}} {
		t.Run(typ.String(), func(t *testing.T) {
			mem := checkedMem(t)
			schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: typ}, {Name: "v", Type: arrow.BinaryTypes.String}}, nil)
			events := runtimetest.NewSource(t, mem, schema)
			events.Set(t, 100, []any{t0, "a"}, []any{t0.Add(time.Minute), "b"})
			e := runtimetest.NewEngine(t, `version: v1
kind: Spicepod
name: append
datasets:
  - from: test:events
    name: events
    time_column: ts
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 30s
`, map[string]engine.Source{"events": events}, nil)
			runtimetest.WaitReady(t, e)

			events.Set(t, 200, []any{t0, "a"}, []any{t0.Add(40 * time.Second), "late"}, []any{t0.Add(time.Minute), "b"},
				[]any{t0.Add(time.Minute), "c"}, []any{t0.Add(2 * time.Minute), "d"})
			if err := e.Refresh("events"); err != nil {
				t.Fatal(err)
			}
			runtimetest.WaitWatermark(t, e, "events", 200)
			got, _ := mustQuery(t, e, "SELECT strftime(ts, '%H:%M:%S'), v FROM events ORDER BY ts, v")
			want := []string{"12:00:00|a", "12:00:40|late", "12:01:00|b", "12:01:00|c", "12:02:00|d"}
			if !equal(got, want) {
				t.Fatalf("events after the append = %q, want %q", got, want)
			}
			reqs := events.Requests()
			if since := reqs[len(reqs)-1].Since; since == nil || !since.Value.(time.Time).Equal(t0.Add(30*time.Second)) {
				t.Fatalf("append scanned since %+v, want ts >= 12:00:30", since)
			}
		})
	}
}
