//go:build duckdb_arrow

package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// Memory budget. --memory-limit is what the whole process may use; it is split
// so that everything the runtime holds has its own bound inside it:
//
//	DuckDB memory_limit      1/2   (its operators; beyond it they spill or fail)
//	Go soft limit (GC)       2/5   (debug.SetMemoryLimit, unless GOMEMLIMIT is set)
//	  results cache          1/16  (at most the spicepod's cache_max_size)
//	  Flight held results    1/16
//	  one query's result     1/32  (at most duckdb.DefaultMaxResultBytes), per slot
//	  prepared statements    1/64
//	  parsed-query caches    1/128 each (engine plans, DuckDB inspections)
//
// The Go items add up to about 3/10 of the limit with the default four query
// slots, inside the Go share.
type budget struct {
	Limit          int64
	Source         string // where Limit came from, for the start-up log
	DuckDB         int64
	GoSoft         int64
	ResultsCache   int64
	Tickets        int64
	MaxResultBytes int64
	Prepared       int64
	PlanCache      int64
	InspectCache   int64
}

func newBudget(limit int64, source string, maxResult int64) budget {
	b := budget{Limit: limit, Source: source}
	b.DuckDB = limit / 2
	b.GoSoft = limit * 2 / 5
	b.ResultsCache = limit / 16
	b.Tickets = limit / 16
	b.MaxResultBytes = min(maxResult, limit/32)
	b.Prepared = limit / 64
	b.PlanCache = limit / 128
	b.InspectCache = limit / 128
	return b
}

// memoryLimitFlag parses --memory-limit: a size such as 2GiB or 1.5GB, or "auto".
type memoryLimitFlag struct {
	bytes int64 // 0: auto
}

func (f *memoryLimitFlag) String() string {
	if f.bytes == 0 {
		return "auto"
	}
	return strconv.FormatInt(f.bytes, 10)
}

func (f *memoryLimitFlag) Set(s string) error {
	if s == "auto" || s == "" {
		f.bytes = 0
		return nil
	}
	n, err := spicepod.ParseByteSize(s)
	if err != nil {
		return err
	}
	if n < 64<<20 {
		return fmt.Errorf("%d bytes is too little to run; give at least 64MiB", n)
	}
	f.bytes = n
	return nil
}

// detectMemoryLimit returns the cgroup's memory limit (v2 memory.max, v1
// memory.limit_in_bytes) when there is one, else half the host's RAM.
func detectMemoryLimit() (int64, string) {
	ram := hostRAM()
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || (ram > 0 && n >= ram) {
			continue // "max", or v1's "unlimited" (a huge number)
		}
		return n, "cgroup " + p
	}
	if ram > 0 {
		return ram / 2, "half of the host's RAM"
	}
	return 2 << 30, "default (RAM unknown)"
}

func hostRAM() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
