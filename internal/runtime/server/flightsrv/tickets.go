package flightsrv

import (
	"container/list"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// idLen is the length of ticket and prepared statement ids.
const idLen = 16

// Ticket kinds: what a ticket runs again when its result is no longer held.
const (
	kindSQL      byte = 's' // payload is the SQL text
	kindPrepared byte = 'p' // payload is a (bound) prepared statement handle
)

func newID() string {
	b := make([]byte, idLen)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on a broken source)
	return string(b)
}

// encodeTicket builds a statement handle: the id of a held result, then what to
// run when that result has expired, was evicted, or was executed by another
// replica behind a load balancer.
func encodeTicket(id string, kind byte, payload []byte) []byte {
	b := make([]byte, 0, idLen+1+len(payload))
	b = append(b, id...)
	b = append(b, kind)
	return append(b, payload...)
}

func decodeTicket(b []byte) (id string, kind byte, payload []byte, err error) {
	if len(b) < idLen+1 {
		return "", 0, nil, invalidf("ticket of %d bytes was not issued by this server; call GetFlightInfo and use its ticket", len(b))
	}
	return string(b[:idLen]), b[idLen], b[idLen+1:], nil
}

// tickets holds results executed by GetFlightInfo until their DoGet, so that both
// answers report the same data and position. Bounded by age and total size.
type tickets struct {
	ttl      time.Duration
	maxBytes int64

	mu    sync.Mutex
	lru   *list.List // of *heldResult, front newest
	items map[string]*list.Element
	bytes int64
}

type heldResult struct {
	id      string
	res     *engine.Result
	expires time.Time
}

func newTickets(ttl time.Duration, maxBytes int64) *tickets {
	return &tickets{ttl: ttl, maxBytes: maxBytes, lru: list.New(), items: map[string]*list.Element{}}
}

// put takes ownership of res and returns the id to fetch it with. A result larger
// than the bound is released at once: its DoGet runs the query again.
func (t *tickets) put(res *engine.Result) string {
	id := newID()
	if res.Bytes > t.maxBytes {
		res.Release()
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items[id] = t.lru.PushFront(&heldResult{id: id, res: res, expires: time.Now().Add(t.ttl)})
	t.bytes += res.Bytes
	for t.bytes > t.maxBytes && t.lru.Len() > 0 {
		t.removeLocked(t.lru.Back())
	}
	return id
}

// take removes and returns the result held under id; nil when there is none. The
// caller releases it.
func (t *tickets) take(id string) *engine.Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.items[id]
	if !ok {
		return nil
	}
	h := el.Value.(*heldResult)
	t.lru.Remove(el)
	delete(t.items, id)
	t.bytes -= h.res.Bytes
	if time.Now().After(h.expires) {
		h.res.Release()
		return nil
	}
	return h.res
}

// heldBytes is the size of the results held.
func (t *tickets) heldBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

func (t *tickets) sweep(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for el := t.lru.Back(); el != nil; el = t.lru.Back() {
		if !now.After(el.Value.(*heldResult).expires) {
			return
		}
		t.removeLocked(el)
	}
}

func (t *tickets) clear() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.lru.Len() > 0 {
		t.removeLocked(t.lru.Back())
	}
}

func (t *tickets) removeLocked(el *list.Element) {
	h := el.Value.(*heldResult)
	t.lru.Remove(el)
	delete(t.items, h.id)
	t.bytes -= h.res.Bytes
	h.res.Release()
}

// prepared is a prepared statement: its SQL, the number of placeholders and the
// schema of its result (nil when it could not be described without parameters).
type prepared struct {
	sql    string
	params int
	schema *arrow.Schema
	used   time.Time
}

// preparedStore holds prepared statements by id, bounded by idle time, count and
// the bytes of their SQL texts.
type preparedStore struct {
	ttl time.Duration
	max int

	maxBytes int64

	mu    sync.Mutex
	items map[string]*prepared
	bytes int64
}

func newPreparedStore(ttl time.Duration, max int, maxBytes int64) *preparedStore {
	return &preparedStore{ttl: ttl, max: max, maxBytes: maxBytes, items: map[string]*prepared{}}
}

// preparedOverhead is what a held statement costs beyond its SQL text: the id,
// the map slot, the struct and its schema, rounded up.
const preparedOverhead = 512

func (st *prepared) size() int64 { return int64(len(st.sql)) + preparedOverhead }

func (p *preparedStore) add(st *prepared) string {
	id := newID()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.items) > 0 && (len(p.items) >= p.max || p.bytes+st.size() > p.maxBytes) {
		p.evictOldestLocked()
	}
	st.used = time.Now()
	p.items[id] = st
	p.bytes += st.size()
	return id
}

// heldBytes is the size of the statements held.
func (p *preparedStore) heldBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

// get returns the statement with id and marks it used.
func (p *preparedStore) get(id string) (*prepared, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.items[id]
	if !ok {
		return nil, fmt.Errorf("prepared statement: %w (closed, or unused for %s, or the server restarted); prepare it again", ErrExpired, p.ttl)
	}
	st.used = time.Now()
	return st, nil
}

func (p *preparedStore) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleteLocked(id)
}

func (p *preparedStore) deleteLocked(id string) {
	if st, ok := p.items[id]; ok {
		p.bytes -= st.size()
		delete(p.items, id)
	}
}

func (p *preparedStore) sweep(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, st := range p.items {
		if now.Sub(st.used) > p.ttl {
			p.deleteLocked(id)
		}
	}
}

func (p *preparedStore) evictOldestLocked() {
	var oldest string
	var at time.Time
	for id, st := range p.items {
		if oldest == "" || st.used.Before(at) {
			oldest, at = id, st.used
		}
	}
	p.deleteLocked(oldest)
}
