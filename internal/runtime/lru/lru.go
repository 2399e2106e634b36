// Package lru is a least-recently-used cache bounded by bytes, not entries: the
// runtime's caches keyed by query texts (parsed queries, inspections, results)
// count each key's bytes with its value's, so a flood of distinct large texts
// evicts older entries instead of growing the heap.
//
// A Cache is safe for concurrent use. Entries older than the TTL (when set) are
// dropped when read and by a sweep that Add runs at most once per TTL.
package lru

import (
	"container/list"
	"sync"
	"time"
)

// EntryOverhead is what one entry costs beyond its key and value size: the list
// element, the map slot and the entry struct, rounded up.
const EntryOverhead = 128

// Cache maps string keys to values of type V within MaxBytes. Ours, not
// otter's or ristretto's: their weight bound is kept after the write and by
// an admission policy, where the runtime's budgets need it held at every Add.
type Cache[V any] struct {
	maxBytes int64
	ttl      time.Duration
	onEvict  func(key string, v V)

	mu        sync.Mutex
	ll        *list.List // front: most recently used
	items     map[string]*list.Element
	bytes     int64
	nextSweep time.Time
}

type entry[V any] struct {
	key     string
	val     V
	size    int64 // key, value and EntryOverhead
	expires time.Time
}

// New returns a cache holding at most maxBytes (keys included). ttl of 0 keeps
// entries until evicted. onEvict, when set, is called (with the cache's lock held)
// for every entry that leaves the cache, including by Clear and replacement.
func New[V any](maxBytes int64, ttl time.Duration, onEvict func(key string, v V)) *Cache[V] {
	return &Cache[V]{maxBytes: maxBytes, ttl: ttl, onEvict: onEvict, ll: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value under key and marks it used; ok is false when absent or
// expired.
func (c *Cache[V]) Get(key string) (v V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return v, false
	}
	e := el.Value.(*entry[V])
	if c.ttl > 0 && time.Now().After(e.expires) {
		c.removeLocked(el)
		return v, false
	}
	c.ll.MoveToFront(el)
	return e.val, true
}

// Add stores v under key, counting size bytes for the value, and evicts the least
// recently used entries until the cache fits. It returns false, storing nothing,
// when the entry alone would take more than a quarter of the cache.
func (c *Cache[V]) Add(key string, v V, size int64) bool {
	size += int64(len(key)) + EntryOverhead
	if size > c.maxBytes/4 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
	c.items[key] = c.ll.PushFront(&entry[V]{key: key, val: v, size: size, expires: now.Add(c.ttl)})
	c.bytes += size
	if c.ttl > 0 && now.After(c.nextSweep) {
		c.sweepLocked(now)
		c.nextSweep = now.Add(c.ttl)
	}
	for c.bytes > c.maxBytes && c.ll.Len() > 0 {
		c.removeLocked(c.ll.Back())
	}
	return true
}

// Clear drops every entry.
func (c *Cache[V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.ll.Len() > 0 {
		c.removeLocked(c.ll.Back())
	}
}

// Len is the number of entries held (expired ones included until swept).
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// Bytes is the size held: keys, values and EntryOverhead per entry.
func (c *Cache[V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// MaxBytes is the bound given to New.
func (c *Cache[V]) MaxBytes() int64 { return c.maxBytes }

func (c *Cache[V]) sweepLocked(now time.Time) {
	for el := c.ll.Back(); el != nil; {
		prev := el.Prev()
		if now.After(el.Value.(*entry[V]).expires) {
			c.removeLocked(el)
		}
		el = prev
	}
}

func (c *Cache[V]) removeLocked(el *list.Element) {
	e := el.Value.(*entry[V])
	c.ll.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.size
	if c.onEvict != nil {
		c.onEvict(e.key, e.val)
	}
}
