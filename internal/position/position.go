// Package position defines the source position that every piece of accelerated data
// and every answer is stamped with.
//
// A position is a Postgres WAL location (LSN): for data loaded from Postgres it is the
// LSN of the last commit the data reflects; for a chained runtime it is the position
// its upstream reported for the data it served. Zero means unknown. Positions from
// one source database are totally ordered, so "at least position X" is a meaningful
// request across every hop of a chain.
package position

import (
	"fmt"
	"strconv"
	"strings"
)

// LSN is a Postgres log sequence number. The zero value means "unknown".
type LSN uint64

// String formats the LSN as Postgres does: two hexadecimal halves, "16/B374D848".
func (l LSN) String() string {
	return fmt.Sprintf("%X/%X", uint32(l>>32), uint32(l))
}

// IsZero reports whether the position is unknown.
func (l LSN) IsZero() bool { return l == 0 }

// Parse reads an LSN in Postgres notation ("16/B374D848"). It also accepts a plain
// decimal number, which is what some clients find easier to carry.
func Parse(s string) (LSN, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("parse position: empty string; want an LSN like 0/16B3748")
	}
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse position %q: want an LSN like 0/16B3748", s)
		}
		return LSN(n), nil
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse position %q: want an LSN like 0/16B3748", s)
	}
	return LSN(h<<32 | l), nil
}
