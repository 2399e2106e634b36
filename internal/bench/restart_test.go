package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestParseStartLog(t *testing.T) {
	started := time.Date(2026, 12, 3, 12, 17, 40, 898_000_000, time.UTC)
	at := func(ms int) time.Time { return time.Date(2026, 12, 3, 12, 17, 40, ms*1_000_000, time.UTC) }
	tests := []struct {
		name string
		log  string
		want bench.StartLog
	}{
		{
			name: "memory mode: a snapshot",
			log: `time=2026-12-03T12:17:40.468Z level=INFO msg="memory budget" limit=2147483648 from="cgroup /sys/fs/cgroup/memory/memory.limit_in_bytes"
time=2026-12-03T12:17:40.898Z level=INFO msg="runtime started" spicepod=sample datasets=2 views=1 http=[::]:8090
time=2026-12-03T12:17:43.673Z level=INFO msg="snapshot taken" slot=spice_sample slot=spice_sample lsn=0/E284690 rows=1000006 took=2.501s`,
			want: bench.StartLog{FirstLine: at(468), Started: started, SnapshotRows: 1000006, SnapshotTook: 2501 * time.Millisecond},
		},
		{
			name: "file mode: restored and resumed",
			log: `time=2026-12-03T12:17:40.700Z level=INFO msg="restored dataset from file" dataset=products lsn=0/E28AF88
time=2026-12-03T12:17:40.700Z level=INFO msg="restored dataset from file" dataset=orders lsn=0/E28AF88
time=2026-12-03T12:17:40.898Z level=INFO msg="runtime started" spicepod=sample datasets=2 views=1
time=2026-12-03T12:17:41.000Z level=INFO msg="resuming from 0/E28AF88" slot=s slot=s lsn=0/E28AF88`,
			want: bench.StartLog{FirstLine: at(700), Started: started, ResumedFrom: "0/E28AF88", Restored: 2},
		},
		{
			name: "runtime 2: subscribed, JSON lines",
			log: `{"time":"2026-12-03T12:17:40.898Z","level":"INFO","msg":"runtime started","datasets":1}
{"time":"2026-12-03T12:17:41.1Z","level":"INFO","msg":"subscribed","dataset":"rankings"}`,
			want: bench.StartLog{FirstLine: started, Started: started, Subscribed: true},
		},
		{
			name: "a failed snapshot, then one that worked: the last counts",
			log: `time=2026-12-03T12:17:41Z level=INFO msg="snapshot taken" rows=10 took=1s
time=2026-12-03T12:17:42Z level=WARN msg="change feed failed; reconnecting" slot=s in=500ms err="slot \"s\" is active"
time=2026-12-03T12:17:43Z level=INFO msg="snapshot taken" rows=20 took=2s`,
			want: bench.StartLog{FirstLine: time.Date(2026, 12, 3, 12, 17, 41, 0, time.UTC), SnapshotRows: 20, SnapshotTook: 2 * time.Second, Reconnects: 1, FirstError: `slot "s" is active`},
		},
		{name: "nothing known", log: "garbage\nkey=\"unterminated\n{not json", want: bench.StartLog{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bench.ParseStartLog(tt.log); got != tt.want {
				t.Fatalf("ParseStartLog = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func restartResult(target, kind string, ready, caught time.Duration, rss int64, log bench.StartLog) bench.RestartResult {
	return bench.RestartResult{Orders: 1_000_000, Target: target, Kind: kind, Ready: ready, CaughtUp: caught, PeakRSS: rss, Log: log}
}

func TestSummarizeRestarts(t *testing.T) {
	snap := func(took time.Duration) bench.StartLog {
		return bench.StartLog{SnapshotRows: 1_000_000, SnapshotTook: took}
	}
	results := []bench.RestartResult{
		restartResult(bench.RestartMemory, bench.RestartStop, 3*time.Second, 3*time.Second, 100, snap(2*time.Second)),
		restartResult(bench.RestartMemory, bench.RestartStop, 5*time.Second, 0, 300, snap(4*time.Second)),
		restartResult(bench.RestartMemory, bench.RestartStop, 4*time.Second, 4*time.Second, 200, snap(time.Second)),
		{Orders: 1_000_000, Target: bench.RestartMemory, Kind: bench.RestartStop, Err: "boom"},
		restartResult(bench.RestartFile, bench.RestartKill, time.Second, 2*time.Second, 50, bench.StartLog{ResumedFrom: "0/1", Restored: 2}),
	}
	copies := []bench.CopyTiming{{Orders: 1_000_000, Took: time.Second}}
	got := bench.SummarizeRestarts(results, copies)
	if len(got) != 2 {
		t.Fatalf("got %d summaries, want 2 (one per target and kind): %+v", len(got), got)
	}
	mem := got[0]
	if mem.Target != bench.RestartMemory || mem.Runs != 4 || mem.Failed != 1 {
		t.Fatalf("memory summary = %+v, want 4 runs, 1 failed", mem)
	}
	if mem.ReadyMedian != 4*time.Second || mem.ReadyMax != 5*time.Second {
		t.Fatalf("ready median, max = %s, %s; want 4s, 5s", mem.ReadyMedian, mem.ReadyMax)
	}
	if mem.CaughtUpMedian != 4*time.Second || mem.NotCaughtUp != 1 {
		t.Fatalf("caught up median = %s, not caught up %d; want 4s, 1", mem.CaughtUpMedian, mem.NotCaughtUp)
	}
	if mem.PeakRSS != 300 {
		t.Fatalf("peak RSS = %d, want the worst, 300", mem.PeakRSS)
	}
	if mem.SnapshotRate != 500_000 || mem.CopyRate != 1_000_000 {
		t.Fatalf("snapshot rate %v, copy rate %v; want the median 500000 and 1000000", mem.SnapshotRate, mem.CopyRate)
	}
	if mem.VsCopy != 0.5 {
		t.Fatalf("vs COPY = %v, want the median rate over the size's COPY rate, 0.5, as no run has its own COPY", mem.VsCopy)
	}
	if f := got[1]; f.SnapshotRate != 0 || !strings.Contains(f.Path, "resumed from 0/1") {
		t.Fatalf("file summary = %+v, want no snapshot rate and a resumed path", f)
	}
}

func TestRestartGoals(t *testing.T) {
	sum := func(kind string, worst time.Duration, failed int) bench.RestartSummary {
		return bench.RestartSummary{Orders: 10, Target: bench.RestartFile, Kind: kind, Runs: 3, Failed: failed, ReadyMax: worst}
	}
	tests := []struct {
		name string
		sums []bench.RestartSummary
		want string // status; "" for no goal line
	}{
		{"within the bound", []bench.RestartSummary{sum(bench.RestartStop, time.Second, 0), sum(bench.RestartKill, 5*time.Second, 0)}, "ok"},
		{"one kind over it", []bench.RestartSummary{sum(bench.RestartStop, time.Second, 0), sum(bench.RestartKill, 6*time.Second, 0)}, "MISS"},
		{"a failed restart", []bench.RestartSummary{sum(bench.RestartStop, time.Second, 1)}, "MISS"},
		{"the first start does not count", []bench.RestartSummary{sum(bench.RestartFirst, time.Minute, 0), sum(bench.RestartStop, time.Second, 0)}, "ok"},
		{"mode: file not measured", []bench.RestartSummary{{Orders: 10, Target: bench.RestartMemory, Kind: bench.RestartStop, Runs: 1, ReadyMax: time.Minute}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goals := bench.RestartGoals(tt.sums)
			if tt.want == "" {
				if len(goals) != 0 {
					t.Fatalf("goals = %+v, want none", goals)
				}
				return
			}
			if len(goals) != 1 || goals[0].Status != tt.want {
				t.Fatalf("goals = %+v, want one with status %s", goals, tt.want)
			}
		})
	}
}

func TestRestartMarkdown(t *testing.T) {
	rep := &bench.RestartReport{
		Header: bench.Header{Started: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}, Rounds: 1, WriteRate: 50,
		Copies: []bench.CopyTiming{{Orders: 1_000_000, Took: time.Second, Runs: 1}},
		Results: []bench.RestartResult{
			restartResult(bench.RestartMemory, bench.RestartKill, 3*time.Second, 3*time.Second, 100<<20,
				bench.StartLog{SnapshotRows: 1_000_000, SnapshotTook: 2 * time.Second}),
			restartResult(bench.RestartFile, bench.RestartKill, 6*time.Second, 0, 50<<20, bench.StartLog{ResumedFrom: "0/1"}),
			{Orders: 1_000_000, Target: bench.RestartMaterialized, Kind: bench.RestartStop, Err: "no process"},
		},
	}
	md := bench.RestartMarkdown(rep)
	for _, want := range []string{
		"| 1,000,000 | 1, mode: memory | kill | 1 | 3.00 (3.00) | n/a |",
		"| 500,000 | 0.50x |",
		"1,000,000 orders in 1s: 1,000,000 rows/s (median of 1)",
		"- MISS at 1,000,000 orders: kill: worst 6.00 s of 1",
		"n/a, 1 not in time",
		"failed: 2 (materialized) stop #0 at 1,000,000 orders: no process",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestSummarizeRestarts_CopyPerRun(t *testing.T) {
	run := func(snapshot, copyTook time.Duration) bench.RestartResult {
		r := restartResult(bench.RestartMemory, bench.RestartKill, time.Second, time.Second, 1,
			bench.StartLog{SnapshotRows: 1_000_000, SnapshotTook: snapshot})
		r.CopyTook = copyTook
		return r
	}
	// Each snapshot as fast as the COPY before it, on a machine whose speed varies:
	// the ratio is 1 whatever the size's median COPY says.
	results := []bench.RestartResult{run(time.Second, time.Second), run(4*time.Second, 4*time.Second), run(2*time.Second, 2*time.Second)}
	got := bench.SummarizeRestarts(results, []bench.CopyTiming{{Orders: 1_000_000, Took: 10 * time.Second, Runs: 3}})
	if len(got) != 1 || got[0].VsCopy != 1 {
		t.Fatalf("summaries %+v, want one with vs COPY 1", got)
	}
}
