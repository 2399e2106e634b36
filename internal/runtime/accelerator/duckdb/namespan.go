//go:build duckdb_arrow

package duckdb

import "strings"

// Finding a dotted name in a query text, for the rewrites of resolve.go. A
// part is an unquoted identifier (letters, digits, _, $, any non-ASCII byte)
// or a quoted one ("a ""b"""); parts are joined by dots, with optional
// white space around them.

// nameSpan returns the byte span of the len(parts) identifiers joined by dots
// that start at query[at:], after checking that they spell parts (quoted
// parts exactly, unquoted ones in any case, as DuckDB compares names).
func nameSpan(query string, at int, parts []string) (start, end int, ok bool) {
	if at < 0 || at >= len(query) || len(parts) == 0 {
		return 0, 0, false
	}
	i := at
	for k, want := range parts {
		if k > 0 {
			if i = skipSpace(query, i); i >= len(query) || query[i] != '.' {
				return 0, 0, false
			}
			i = skipSpace(query, i+1)
		}
		name, next, ok := identAt(query, i)
		if !ok || !strings.EqualFold(name, want) {
			return 0, 0, false
		}
		i = next
	}
	return at, i, true
}

// partStart returns the offset of the k-th (0-based) part of the dotted name
// that starts at query[at:].
func partStart(query string, at, k int) (int, bool) {
	i := at
	for n := 0; n < k; n++ {
		_, next, ok := identAt(query, i)
		if !ok {
			return 0, false
		}
		if i = skipSpace(query, next); i >= len(query) || query[i] != '.' {
			return 0, false
		}
		i = skipSpace(query, i+1)
	}
	return i, true
}

// identAt reads the identifier at query[i:]: its name (unquoted, quotes
// undone) and the offset after it.
func identAt(query string, i int) (name string, next int, ok bool) {
	if i >= len(query) {
		return "", 0, false
	}
	if query[i] == '"' {
		var b strings.Builder
		for j := i + 1; j < len(query); j++ {
			if query[j] != '"' {
				b.WriteByte(query[j])
				continue
			}
			if j+1 < len(query) && query[j+1] == '"' {
				b.WriteByte('"')
				j++
				continue
			}
			return b.String(), j + 1, true
		}
		return "", 0, false
	}
	j := i
	for j < len(query) && isIdentByte(query[j]) {
		j++
	}
	if j == i {
		return "", 0, false
	}
	return query[i:j], j, true
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func skipSpace(query string, i int) int {
	for i < len(query) && (query[i] == ' ' || query[i] == '\t' || query[i] == '\n' || query[i] == '\r') {
		i++
	}
	return i
}
