// Package apikey holds a runtime's API keys (spicepod runtime.auth.api-key) and
// checks a presented key against them in constant time. The HTTP and Flight
// servers share it.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Keys is a set of API keys. The zero value and nil hold none.
type Keys struct {
	sums [][sha256.Size]byte
}

// New returns the set of keys; empty keys are dropped.
func New(keys []string) *Keys {
	k := &Keys{}
	for _, key := range keys {
		if key != "" {
			k.sums = append(k.sums, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// Valid reports whether key is one of the set. It compares hashes of equal
// length in constant time and checks every key, so neither the time taken nor
// an early return tells how much of a guess was right.
func (k *Keys) Valid(key string) bool {
	if k == nil || key == "" {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	ok := 0
	for i := range k.sums {
		ok |= subtle.ConstantTimeCompare(sum[:], k.sums[i][:])
	}
	return ok == 1
}

// Empty reports whether the set holds no key: authentication is off.
func (k *Keys) Empty() bool { return k == nil || len(k.sums) == 0 }
