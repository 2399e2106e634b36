package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
	"github.com/cqrs-spice/cqrs/internal/position"
)

func count(n int64) *int64 { return &n }

// healthy is a stack holding acks 1..3 once everywhere, with equal rankings.
func healthy() ([]chaos.Ack, chaos.State) {
	acks := []chaos.Ack{{ID: 1, ProductID: 1, Count: 2}, {ID: 2, ProductID: 2, Count: 5}, {ID: 3, ProductID: 1, Count: 1}}
	tallies := map[int64]chaos.Tally{1: {Orders: 2, Sum: 3}, 2: {Orders: 1, Sum: 5}}
	ranking := []chaos.RankRow{{"b", count(5)}, {"a", count(3)}, {"c", nil}}
	s := chaos.State{
		PostgresIDs:    map[int64]int{1: 1, 2: 1, 3: 1},
		AcceleratedIDs: map[int64]int{1: 1, 2: 1, 3: 1},
		Postgres:       tallies,
		Accelerated:    map[int64]chaos.Tally{1: {Orders: 2, Sum: 3}, 2: {Orders: 1, Sum: 5}},
		Products:       map[int64]string{1: "a", 2: "b", 3: "c"},
		Rankings: map[string][]chaos.RankRow{
			chaos.EndpointRanking: ranking, chaos.EndpointAccelerated: ranking, chaos.EndpointMaterialized: ranking,
		},
	}
	return acks, s
}

func TestCheckStateHealthy(t *testing.T) {
	acks, s := healthy()
	if f := chaos.CheckState(acks, s); !f.Converged() {
		t.Fatalf("a healthy stack: %s", f.Summary())
	}
}

func TestCheckStateReportsLostRow(t *testing.T) {
	acks, s := healthy()
	delete(s.AcceleratedIDs, 3)
	s.Accelerated[1] = chaos.Tally{Orders: 1, Sum: 2}
	f := chaos.CheckState(acks, s)
	if got, want := len(f.Lost), 1; got != want {
		t.Fatalf("lost=%d, want %d: %s", got, want, f.Summary())
	}
	if got, want := f.Lost[0], (chaos.Missing{ID: 3, Where: chaos.InAccelerated}); got != want {
		t.Fatalf("lost %+v, want %+v", got, want)
	}
	if len(f.Mismatches) != 1 || !strings.Contains(f.Mismatches[0], "product 1 (a)") {
		t.Fatalf("mismatches %q, want product 1's tallies", f.Mismatches)
	}
}

func TestCheckStateReportsLostInPostgres(t *testing.T) {
	acks, s := healthy()
	delete(s.PostgresIDs, 2)
	f := chaos.CheckState(acks, s)
	if len(f.Lost) != 1 || f.Lost[0].Where != chaos.InPostgres || f.Lost[0].ID != 2 {
		t.Fatalf("lost %+v, want order 2 in postgres", f.Lost)
	}
}

func TestCheckStateReportsDoubledRow(t *testing.T) {
	acks, s := healthy()
	s.AcceleratedIDs[2] = 2
	s.Accelerated[2] = chaos.Tally{Orders: 2, Sum: 10}
	f := chaos.CheckState(acks, s)
	if got, want := len(f.Doubled), 1; got != want {
		t.Fatalf("doubled=%d, want %d: %s", got, want, f.Summary())
	}
	if got, want := f.Doubled[0], (chaos.Doubled{ID: 2, Where: chaos.InAccelerated, Copies: 2}); got != want {
		t.Fatalf("doubled %+v, want %+v", got, want)
	}
	if len(f.Lost) != 0 {
		t.Fatalf("lost %+v, want none", f.Lost)
	}
}

func TestCheckStateReportsStaleRanking(t *testing.T) {
	acks, s := healthy()
	s.Rankings[chaos.EndpointMaterialized] = []chaos.RankRow{{"b", count(5)}, {"a", count(2)}, {"c", nil}}
	delete(s.Rankings, chaos.EndpointAccelerated)
	f := chaos.CheckState(acks, s)
	if got, want := len(f.Mismatches), 2; got != want {
		t.Fatalf("mismatches %q, want %d", f.Mismatches, want)
	}
	if !strings.Contains(f.Summary(), "/ranking-materialized shows [b:5,a:2,c:null], Postgres [b:5,a:3,c:null]") ||
		!strings.Contains(f.Summary(), "/ranking-accelerated did not answer") {
		t.Fatalf("summary %q", f.Summary())
	}
}

func TestTopFive(t *testing.T) {
	names := map[int64]string{1: "f", 2: "e", 3: "d", 4: "c", 5: "b", 6: "a", 7: "z"}
	tallies := map[int64]chaos.Tally{1: {1, 10}, 2: {1, 10}, 3: {1, 30}, 4: {2, 5}, 7: {1, 1}}
	got := chaos.RowsString(chaos.TopFive(tallies, names))
	if want := "[d:30,e:10,f:10,c:5,z:1]"; got != want {
		t.Fatalf("TopFive = %s, want %s", got, want)
	}
	got = chaos.RowsString(chaos.TopFive(map[int64]chaos.Tally{2: {1, 1}}, map[int64]string{1: "b", 2: "c", 3: "a"}))
	if want := "[c:1,a:null,b:null]"; got != want {
		t.Fatalf("TopFive = %s, want %s", got, want)
	}
}

func at(s int) time.Time {
	return time.Unix(1_700_000_000, 0).Add(time.Duration(s) * 100 * time.Millisecond)
}

func TestCheckReadsReportsStaleRead(t *testing.T) {
	reads := []chaos.Read{
		{Reader: "r1", Endpoint: chaos.EndpointAccelerated, At: at(1), Status: 200, MinPosition: 100, Position: 100},
		{Reader: "r1", Endpoint: chaos.EndpointAccelerated, At: at(2), Status: 200, MinPosition: 200, Position: 150},
		{Reader: "r1", Endpoint: chaos.EndpointAccelerated, At: at(3), Status: 504, MinPosition: 300},
	}
	f := chaos.CheckReads(reads, []string{chaos.EndpointAccelerated})
	if got, want := len(f.RYW), 1; got != want {
		t.Fatalf("RYW violations %v, want %d", f.RYW, want)
	}
	if !strings.Contains(f.RYW[0].Detail, "answered 0/96, asked at least 0/C8") {
		t.Fatalf("detail %q", f.RYW[0].Detail)
	}
	if len(f.Monotonic) != 0 || len(f.Unexpected) != 0 {
		t.Fatalf("monotonic %v, unexpected %v, want none", f.Monotonic, f.Unexpected)
	}
}

func TestCheckReadsReportsBackwardsRead(t *testing.T) {
	reads := []chaos.Read{
		{Reader: "r1", Endpoint: chaos.EndpointMaterialized, At: at(1), Status: 200, Position: 500},
		{Reader: "r2", Endpoint: chaos.EndpointMaterialized, At: at(2), Status: 200, Position: 400}, // another reader: fine
		{Reader: "r1", Endpoint: chaos.EndpointMaterialized, At: at(3), Status: 200, Position: 0},   // unknown: skipped
		{Reader: "r1", Endpoint: chaos.EndpointMaterialized, At: at(4), Status: 200, Position: 450},
		{Reader: "r1", Endpoint: chaos.EndpointMaterialized, At: at(5), Status: 200, Position: 500},
	}
	f := chaos.CheckReads(reads, nil)
	if got, want := len(f.Monotonic), 1; got != want {
		t.Fatalf("monotonic violations %v, want %d", f.Monotonic, want)
	}
	if !strings.Contains(f.Monotonic[0].Detail, "r1 /ranking-materialized went back from 0/1F4") {
		t.Fatalf("detail %q", f.Monotonic[0].Detail)
	}
}

func TestCheckReadsErrorWindowAndUnexpected(t *testing.T) {
	reads := []chaos.Read{
		{Reader: "w", Endpoint: chaos.EndpointOrders, At: at(0), Status: 201},
		{Reader: "r", Endpoint: chaos.EndpointAccelerated, At: at(1), Status: 503},
		{Reader: "r", Endpoint: chaos.EndpointAccelerated, At: at(2), Status: 0},
		{Reader: "r", Endpoint: chaos.EndpointAccelerated, At: at(15), Status: 504, MinPosition: 7},
		{Reader: "r", Endpoint: chaos.EndpointAccelerated, At: at(40), Took: 2 * time.Second, Status: 0}, // seconds 4, 5, 6
		{Reader: "r", Endpoint: chaos.EndpointRanking, At: at(16), Status: 500},
	}
	f := chaos.CheckReads(reads, []string{chaos.EndpointAccelerated})
	if got, want := f.ErrorSeconds[chaos.EndpointAccelerated], 5; got != want {
		t.Fatalf("error seconds of /ranking-accelerated = %d, want %d", got, want)
	}
	if got, want := f.PlainErrorSeconds[chaos.EndpointAccelerated], 4; got != want {
		t.Fatalf("error seconds of /ranking-accelerated without a token = %d, want %d", got, want)
	}
	if got, want := f.Unexpected[chaos.EndpointRanking], 1; got != want {
		t.Fatalf("unexpected on /ranking = %d, want %d", got, want)
	}
	if got := f.Unexpected[chaos.EndpointAccelerated]; got != 0 {
		t.Fatalf("unexpected on the allowed endpoint = %d, want 0", got)
	}
	if got := f.ErrorSeconds[chaos.EndpointOrders]; got != 0 {
		t.Fatalf("error seconds of /orders = %d, want 0", got)
	}
}

func TestCheckWatermarks(t *testing.T) {
	s := func(rt, ds string, i int, wm position.LSN) chaos.WatermarkSample {
		return chaos.WatermarkSample{Runtime: rt, Dataset: ds, At: at(i), Watermark: wm}
	}
	got := chaos.CheckWatermarks([]chaos.WatermarkSample{
		s("accelerated", "orders", 1, 10),
		s("accelerated", "orders", 2, 0), // restarting: unknown
		s("accelerated", "orders", 3, 12),
		s("materialized", "rankings", 4, 5),
		s("accelerated", "orders", 5, 11),
		s("accelerated", "products", 6, 3),
	})
	if len(got) != 1 || !strings.Contains(got[0].Detail, "accelerated orders went back from 0/C to 0/B") {
		t.Fatalf("violations %v, want accelerated orders 12 -> 11", got)
	}
}

func TestErrorsBeyond(t *testing.T) {
	end := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return end.Add(d) }
	for _, tc := range []struct {
		name  string
		reads []chaos.Read
		want  time.Duration
	}{
		{"none failed", []chaos.Read{{At: at(time.Second), Status: 200}}, 0},
		{"failed during the fault only", []chaos.Read{{At: at(-3 * time.Second), Took: time.Second, Status: 503}}, 0},
		{"a failure ending after the fault", []chaos.Read{
			{At: at(-time.Second), Took: 2500 * time.Millisecond, Status: 504},
			{At: at(time.Second), Status: 200},
		}, 1500 * time.Millisecond},
		{"no answer, the latest counts", []chaos.Read{
			{At: at(500 * time.Millisecond), Took: 100 * time.Millisecond},
			{At: at(2 * time.Second), Took: time.Second, Status: 503},
		}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chaos.ErrorsBeyond(tc.reads, end); got != tc.want {
				t.Errorf("ErrorsBeyond = %s, want %s", got, tc.want)
			}
		})
	}
}
