package lru_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/lru"
)

func TestCacheStaysUnderItsBytesCountingKeys(t *testing.T) {
	const max = 1 << 20
	c := lru.New[int](max, 0, nil)
	for i := 0; i < 1000; i++ {
		key := strings.Repeat(" ", 64<<10) + string(rune('a'+i%26)) + strings.Repeat("x", i)
		c.Add(key, i, 8)
		if got := c.Bytes(); got > max {
			t.Fatalf("after %d adds bytes=%d, want <= %d", i+1, got, max)
		}
	}
	if got, want := c.Len(), 1<<20/(64<<10); got > want {
		t.Fatalf("len=%d, want <= %d", got, want)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	evicted := map[string]bool{}
	c := lru.New[int](4*(lru.EntryOverhead+2), 0, func(k string, _ int) { evicted[k] = true })
	for _, k := range []string{"a", "b", "c", "d"} {
		if !c.Add(k, 1, 1) {
			t.Fatalf("add %s refused", k)
		}
	}
	c.Get("a")
	c.Add("e", 1, 1)
	if !evicted["b"] || evicted["a"] {
		t.Fatalf("evicted=%v, want b (least recently used), not a", evicted)
	}
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a was evicted")
	}
}

func TestCacheRefusesEntryLargerThanAQuarter(t *testing.T) {
	c := lru.New[int](4096, 0, nil)
	if c.Add("k", 1, 2000) {
		t.Fatal("an entry of half the cache was stored")
	}
	if got := c.Bytes(); got != 0 {
		t.Fatalf("bytes=%d, want 0", got)
	}
}

// TestCacheDropsExpiredEntries runs on synctest's clock, which moves only
// when every goroutine of the test waits: each sleep passes exactly its time.
func TestCacheDropsExpiredEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var evicted []string
		c := lru.New[int](1<<20, time.Second, func(k string, _ int) { evicted = append(evicted, k) })
		c.Add("old", 1, 1)
		time.Sleep(time.Second + 1)
		c.Add("new", 1, 1) // sweeps
		if len(evicted) == 0 || evicted[0] != "old" {
			t.Fatalf("evicted=%v, want the expired entry swept", evicted)
		}
		if _, ok := c.Get("new"); !ok {
			t.Fatal("an entry younger than its TTL is gone")
		}
		time.Sleep(time.Second + 1)
		if _, ok := c.Get("new"); ok {
			t.Fatal("expired entry returned")
		}
		if got := c.Bytes(); got != 0 {
			t.Fatalf("bytes=%d after every entry expired and was read, want 0", got)
		}
	})
}
