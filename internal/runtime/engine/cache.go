package engine

import (
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/lru"
)

// Defaults of the results cache, as upstream's runtime.results_cache.
const (
	DefaultCacheMaxBytes = 128 << 20
	DefaultCacheTTL      = time.Second
)

// Cache is the results cache. Keys include the data version of every input, so an
// entry can never serve data older than the accelerator holds: a change to any
// input (views included, through their inputs) makes a new key. The TTL bounds
// memory held by idle entries: expired entries are swept as new ones arrive.
// MaxBytes counts each entry's key (the query text) with its result, so large
// distinct query texts evict older entries instead of growing the heap. A small
// result's entry also counts the room of its Memo (about its size again, see
// EntryBytes), where a server keeps the result encoded for sending. Safe for
// concurrent use.
type Cache struct {
	// MaxBytes bounds the Arrow size of cached results plus their keys;
	// DefaultCacheMaxBytes when 0.
	MaxBytes int64
	// TTL is how long an entry lives; DefaultCacheTTL when 0.
	TTL time.Duration
	// Metrics, when set, counts hits, misses and the bytes held.
	Metrics *Metrics

	once sync.Once
	lru  *lru.Cache[*Result]
}

// NewCache returns an empty cache with the given limits (zero: defaults).
func NewCache(maxBytes int64, ttl time.Duration) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheMaxBytes
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{MaxBytes: maxBytes, TTL: ttl}
}

func (c *Cache) entries() *lru.Cache[*Result] {
	c.once.Do(func() {
		c.lru = lru.New(c.MaxBytes, c.TTL, func(_ string, res *Result) { res.Release() })
	})
	return c.lru
}

// Get returns a copy of the entry's result (records retained; the caller
// releases), or nil. The copy shares the entry's Memo.
func (c *Cache) Get(key string) *Result {
	res := c.Peek(key)
	c.count(res != nil)
	return res
}

// Peek is Get without counting a hit or a miss (for waiters of a shared
// computation, which are counted as misses by the caller).
func (c *Cache) Peek(key string) *Result {
	res, ok := c.entries().Get(key)
	if !ok {
		c.gauge()
		return nil
	}
	out := *res
	out.Records = append(out.Records[:0:0], res.Records...)
	out.Retain()
	return &out
}

// Put stores res under key (retaining its records) when it fits: one entry may
// take at most a quarter of MaxBytes. The entry gets a Memo of its own.
func (c *Cache) Put(key string, res *Result) {
	cp := *res
	cp.Records = append(res.Records[:0:0], res.Records...)
	cp.Memo = newMemo(res)
	cp.Retain()
	if !c.entries().Add(key, &cp, EntryBytes(res)) {
		cp.Release()
	}
	c.gauge()
}

// Clear drops every entry.
func (c *Cache) Clear() {
	c.entries().Clear()
	c.gauge()
}

// Len returns the number of entries.
func (c *Cache) Len() int { return c.entries().Len() }

// Bytes returns the bytes held: results, keys and per-entry overhead.
func (c *Cache) Bytes() int64 { return c.entries().Bytes() }

func (c *Cache) count(hit bool) {
	if c.Metrics == nil {
		return
	}
	if hit {
		c.Metrics.cacheHits.Inc()
	} else {
		c.Metrics.cacheMisses.Inc()
	}
}

func (c *Cache) gauge() {
	if c.Metrics != nil {
		c.Metrics.cacheBytes.Set(float64(c.entries().Bytes()))
		c.Metrics.cacheItems.Set(float64(c.entries().Len()))
	}
}
