// Package apikey holds a runtime's API keys (spicepod runtime.auth.api-key) with
// the access each grants, and checks a presented key against them in constant
// time. The HTTP and Flight servers share it.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Access is what a key allows. The order matters: a higher level allows all
// that a lower one does.
type Access int

const (
	// None: the key is none of the set.
	None Access = iota
	// ReadOnly allows queries, subscriptions and watches: upstream's `<key>:ro`,
	// and the meaning of a key without a suffix.
	ReadOnly
	// ReadWrite allows as well what changes the runtime's state (a refresh):
	// upstream's `<key>:rw`.
	ReadWrite
)

// String names the level as messages print it.
func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	}
	return "none"
}

// CanWrite reports whether a allows calls that change the runtime's state.
func (a Access) CanWrite() bool { return a >= ReadWrite }

// Key is one accepted key and its access. An Access other than ReadWrite is
// taken as ReadOnly.
type Key struct {
	Secret string
	Access Access
}

// ReadOnlyKeys returns secrets as read-only keys.
func ReadOnlyKeys(secrets ...string) []Key {
	out := make([]Key, len(secrets))
	for i, s := range secrets {
		out[i] = Key{Secret: s, Access: ReadOnly}
	}
	return out
}

// Keys is a set of API keys. The zero value and nil hold none.
type Keys struct {
	sums   [][sha256.Size]byte
	access []Access
}

// New returns the set of keys; keys with an empty secret are dropped. A secret
// listed twice grants the higher of its levels.
func New(keys []Key) *Keys {
	k := &Keys{}
	for _, key := range keys {
		if key.Secret == "" {
			continue
		}
		a := ReadOnly
		if key.Access == ReadWrite {
			a = ReadWrite
		}
		k.sums = append(k.sums, sha256.Sum256([]byte(key.Secret)))
		k.access = append(k.access, a)
	}
	return k
}

// Access returns the access key grants, None when it is none of the set. It
// compares hashes of equal length in constant time and checks every key, so
// neither the time taken nor an early return tells how much of a guess was
// right.
func (k *Keys) Access(key string) Access {
	if k == nil || key == "" {
		return None
	}
	sum := sha256.Sum256([]byte(key))
	got := int(None)
	for i := range k.sums {
		eq := subtle.ConstantTimeCompare(sum[:], k.sums[i][:])
		higher := subtle.ConstantTimeLessOrEq(got, int(k.access[i]))
		got = subtle.ConstantTimeSelect(eq&higher, int(k.access[i]), got)
	}
	return Access(got)
}

// Empty reports whether the set holds no key: authentication is off.
func (k *Keys) Empty() bool { return k == nil || len(k.sums) == 0 }
