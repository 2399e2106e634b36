package engine

import (
	"container/list"
	"sync"
	"time"
)

// Defaults of the results cache, as upstream's runtime.results_cache.
const (
	DefaultCacheMaxBytes = 128 << 20
	DefaultCacheTTL      = time.Second
)

// Cache is the results cache. Keys include the data version of every input, so an
// entry can never serve data older than the accelerator holds: a change to any
// input (views included, through their inputs) makes a new key. The TTL only bounds
// memory held by idle entries. Safe for concurrent use.
type Cache struct {
	// MaxBytes bounds the Arrow size of cached results; DefaultCacheMaxBytes when 0.
	MaxBytes int64
	// TTL is how long an entry lives; DefaultCacheTTL when 0.
	TTL time.Duration
	// OnEvict, when set, is told of evictions (metrics).
	Metrics *Metrics

	mu    sync.Mutex
	lru   *list.List // front: most recent
	items map[string]*list.Element
	bytes int64
}

type cacheEntry struct {
	key     string
	res     *Result
	expires time.Time
}

// NewCache returns an empty cache with the given limits (zero: defaults).
func NewCache(maxBytes int64, ttl time.Duration) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheMaxBytes
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{MaxBytes: maxBytes, TTL: ttl, lru: list.New(), items: map[string]*list.Element{}}
}

// Get returns a copy of the entry's result (records retained; the caller
// releases), or nil.
func (c *Cache) Get(key string) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		c.count(false)
		return nil
	}
	e := el.Value.(*cacheEntry)
	if time.Now().After(e.expires) {
		c.removeLocked(el)
		c.count(false)
		return nil
	}
	c.lru.MoveToFront(el)
	c.count(true)
	out := *e.res
	out.Records = append(out.Records[:0:0], e.res.Records...)
	out.Retain()
	return &out
}

// Peek is Get without counting a hit or a miss (for waiters of a shared
// computation, which are counted as misses by the caller).
func (c *Cache) Peek(key string) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	out := *e.res
	out.Records = append(out.Records[:0:0], e.res.Records...)
	out.Retain()
	return &out
}

// Put stores res under key (retaining its records) when it fits.
func (c *Cache) Put(key string, res *Result) {
	if res.Bytes > c.MaxBytes/4 {
		return // one result may not take most of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
	cp := *res
	cp.Records = append(res.Records[:0:0], res.Records...)
	cp.Retain()
	c.items[key] = c.lru.PushFront(&cacheEntry{key: key, res: &cp, expires: time.Now().Add(c.TTL)})
	c.bytes += cp.Bytes
	for c.bytes > c.MaxBytes && c.lru.Len() > 0 {
		c.removeLocked(c.lru.Back())
	}
	c.gauge()
}

// Clear drops every entry.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.removeLocked(c.lru.Back())
	}
	c.gauge()
}

// Len returns the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *Cache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.res.Bytes
	e.res.Release()
}

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
		c.Metrics.cacheBytes.Set(float64(c.bytes))
		c.Metrics.cacheItems.Set(float64(c.lru.Len()))
	}
}
