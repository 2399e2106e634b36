package engine

import "sync"

// MaxMemoBytes is the largest result (Arrow bytes) whose cache entry keeps room
// for an encoding: a server sends a small cached result many times, so encoding
// it once pays; a large one is dominated by the transfer, and a second copy of
// it would only take memory.
const MaxMemoBytes = 1 << 20

// An encoding may take more than the result's Arrow size: each IPC message's
// header, and the schema message with the Flight SQL column metadata of every
// field. The room of a memo allows for that.
const (
	memoSlack         = 1 << 10
	memoSlackPerField = 256
)

// Memo keeps what a server derives from a cached result to send it again
// without deriving it again: the Flight server keeps the result's encoded
// messages there, built by the first answer from the cache entry and shared by
// every later hit of it. It lives and dies with its entry. The cache counts
// the room it reserves (see EntryBytes) with the entry, so memos stay within
// the cache's MaxBytes. A nil *Memo (a result that is not cached, or too
// large) stores nothing. Safe for concurrent use.
type Memo struct {
	room int64 // bytes the values may take together

	mu   sync.Mutex
	used int64
	vals map[string]any
}

// memoRoom is the room the memo of res's cache entry has: 0 (no memo) for a
// result larger than MaxMemoBytes, else about its size again.
func memoRoom(res *Result) int64 {
	if res.Bytes > MaxMemoBytes {
		return 0
	}
	fields := 0
	if res.Schema != nil {
		fields = res.Schema.NumFields()
	}
	return res.Bytes + memoSlack + memoSlackPerField*int64(fields)
}

// newMemo returns the memo of res's cache entry, or nil when res is too large
// to keep an encoding of.
func newMemo(res *Result) *Memo {
	room := memoRoom(res)
	if room == 0 {
		return nil
	}
	return &Memo{room: room}
}

// EntryBytes is what the results cache counts for res, apart from its key:
// its Arrow size and the room of its memo.
func EntryBytes(res *Result) int64 { return res.Bytes + memoRoom(res) }

// Load returns the value stored under key, or builds it. build returns the
// value and its size in bytes; the value is stored when it fits the room left,
// else it is returned for this use only (and built again next time). Builds of
// one memo are serialized, so concurrent first hits build once. An error of
// build is returned and nothing is stored.
func (m *Memo) Load(key string, build func() (v any, size int64, err error)) (any, error) {
	if m == nil {
		v, _, err := build()
		return v, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.vals[key]; ok {
		return v, nil
	}
	v, size, err := build()
	if err != nil {
		return nil, err
	}
	if m.used+size <= m.room {
		if m.vals == nil {
			m.vals = make(map[string]any, 1)
		}
		m.vals[key] = v
		m.used += size
	}
	return v, nil
}
