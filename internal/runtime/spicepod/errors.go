package spicepod

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalid is matched by every validation error Parse returns.
	ErrInvalid = errors.New("invalid spicepod")
	// ErrUnsupported is matched by errors about upstream features that this
	// runtime refuses rather than silently ignores.
	ErrUnsupported = errors.New("not supported by this runtime")
	// ErrUnresolved is matched by errors about ${store:KEY} references that
	// resolve to nothing (upstream substitutes an empty string).
	ErrUnresolved = errors.New("unresolved secret reference")
)

// Error is one problem in a spicepod file. Its message reads
//
//	spicepod.yaml: line 12: dataset "orders": acceleration.refresh_mode: "chnges" is not one of full, append, changes
type Error struct {
	File string // the file name as given to Parse or Load
	Line int    // 1-based; 0 when the problem has no single place
	// Component is `dataset "orders"`, `view "rankings"`, or `dataset #2`
	// for an entry without a usable name; "" for top-level keys.
	Component string
	// Field is the dotted key path inside Component, or from the top of
	// the file when Component is "": "acceleration.refresh_mode",
	// "runtime.results_cache.item_ttl".
	Field string
	Msg   string
	// Err is ErrUnsupported, ErrUnresolved or nil.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Component != "" {
		b.WriteString(e.Component)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap makes errors.Is match ErrInvalid and, when set, Err.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// oneOf formats an enum complaint: `"chnges" is not one of full, append, changes`.
func oneOf(got string, allowed []string) string {
	return fmt.Sprintf("%q is not one of %s", got, strings.Join(allowed, ", "))
}

// suggest returns the allowed key closest to got when it is a likely typo:
// one holding got's letters in order (refresh_interval for
// refresh_check_interval), or else one a few edits away.
func suggest(got string, allowed []string) string {
	best, bestDist := "", len(got)/3+1
	for _, a := range allowed {
		d := editDistance(got, a)
		if len(got) >= 4 && (subsequence(got, a) || subsequence(a, got)) {
			d = min(d, 1)
		}
		if d < bestDist || d == bestDist && best == "" {
			best, bestDist = a, d
		}
	}
	return best
}

// subsequence reports whether the letters of short appear in long in order.
func subsequence(short, long string) bool {
	i := 0
	for j := 0; i < len(short) && j < len(long); j++ {
		if short[i] == long[j] {
			i++
		}
	}
	return i == len(short)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
