package engine_test

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/lru"
)

// result builds a one-column result of n rows from mem.
func result(tb testing.TB, mem memory.Allocator, n int) *engine.Result {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
	return &engine.Result{Schema: schema, Records: []arrow.RecordBatch{rec}, Rows: int64(n), Bytes: int64(8 * n)}
}

func TestCacheSharesResultsAndReleasesThem(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := engine.NewCache(1<<20, time.Hour)

	res := result(t, mem, 10)
	c.Put("q@v1", res)
	res.Release() // the cache holds its own reference

	for i := 0; i < 3; i++ {
		hit := c.Get("q@v1")
		if hit == nil {
			t.Fatal("miss after put")
		}
		if got, want := hit.Records[0].Column(0).(*array.Int64).Value(9), int64(9); got != want {
			t.Fatalf("cached value=%d, want %d", got, want)
		}
		hit.Release()
	}
	// A new data version is a new key: the old answer can never be served for it.
	if c.Get("q@v2") != nil {
		t.Fatal("hit for a key that was never stored")
	}
	if got, want := c.Len(), 1; got != want {
		t.Fatalf("entries=%d, want %d", got, want)
	}
	c.Clear()
	if got, want := c.Len(), 0; got != want {
		t.Fatalf("entries after clear=%d, want %d", got, want)
	}
}

func TestCacheEvictsLeastRecentWhenFull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	sized := result(t, mem, 100)
	entry := engine.EntryBytes(sized)
	sized.Release()
	c := engine.NewCache(4*(entry+1+lru.EntryOverhead), time.Hour) // room for four results of 100 rows and their keys
	for _, key := range []string{"a", "b", "c", "d"} {
		res := result(t, mem, 100)
		c.Put(key, res)
		res.Release()
	}
	if hit := c.Get("a"); hit != nil { // "a" becomes the most recent
		hit.Release()
	} else {
		t.Fatal("a was evicted before the cache was full")
	}
	res := result(t, mem, 100)
	c.Put("e", res)
	res.Release()
	if hit := c.Get("b"); hit != nil {
		hit.Release()
		t.Fatal("b, the least recently used, is still cached")
	}
	for _, key := range []string{"a", "c", "d", "e"} {
		hit := c.Get(key)
		if hit == nil {
			t.Fatalf("%s was evicted", key)
		}
		hit.Release()
	}
	c.Clear()
}

func TestCacheRefusesOversizedResults(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := engine.NewCache(1000, time.Hour)
	res := result(t, mem, 100) // 800 bytes: more than a quarter of the cache
	c.Put("big", res)
	res.Release()
	if hit := c.Get("big"); hit != nil {
		hit.Release()
		t.Fatal("a result larger than a quarter of the cache was stored")
	}
}

func TestCacheExpiresEntries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := engine.NewCache(1<<20, time.Nanosecond)
	res := result(t, mem, 1)
	c.Put("q", res)
	res.Release()
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		hit := c.Get("q")
		if hit == nil {
			return
		}
		hit.Release()
	}
	c.Clear()
	t.Fatal("entry with a 1ns TTL was still served after a second")
}

// TestCacheEntriesShareOneMemo: every answer from one cache entry shares its
// memo, which builds a value once and keeps it while it fits the entry's room;
// a new entry (new data) starts empty.
func TestCacheEntriesShareOneMemo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := engine.NewCache(1<<20, time.Hour)
	res := result(t, mem, 10)
	c.Put("q@v1", res)
	res.Release()

	builds := 0
	build := func(size int64) func() (any, int64, error) {
		return func() (any, int64, error) { builds++; return builds, size, nil }
	}
	for i := 0; i < 3; i++ {
		hit := c.Get("q@v1")
		if hit.Memo == nil {
			t.Fatal("a cached result has no memo")
		}
		v, err := hit.Memo.Load("enc", build(100))
		hit.Release()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := v, any(1); got != want {
			t.Fatalf("answer %d: value=%v, want %v (built once)", i, got, want)
		}
	}
	// A value larger than the room is returned but not kept.
	hit := c.Get("q@v1")
	for i := 0; i < 2; i++ {
		if _, err := hit.Memo.Load("huge", build(engine.MaxMemoBytes*2)); err != nil {
			t.Fatal(err)
		}
	}
	hit.Release()
	if got, want := builds, 3; got != want {
		t.Fatalf("builds=%d, want %d (one kept, two too large to keep)", got, want)
	}

	res = result(t, mem, 10)
	c.Put("q@v2", res)
	res.Release()
	hit = c.Get("q@v2")
	v, _ := hit.Memo.Load("enc", build(100))
	hit.Release()
	if got, want := v, any(4); got != want {
		t.Fatalf("new entry: value=%v, want a new build (%v)", got, want)
	}
	// Results outside the cache have no memo: a nil memo builds every time.
	var none *engine.Memo
	v1, _ := none.Load("enc", build(1))
	v2, _ := none.Load("enc", build(1))
	if v1 == v2 {
		t.Fatal("a nil memo kept a value")
	}
	c.Clear()
}
