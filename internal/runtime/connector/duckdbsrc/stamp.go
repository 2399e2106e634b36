package duckdbsrc

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Stamper turns the state of some files into a position that grows when they
// change: their latest modification time in nanoseconds since 1970, or one more
// than the last position when they changed (size, time or set of files) without
// that time growing. The zero value is ready to use.
type Stamper struct {
	mu   sync.Mutex
	last position.LSN
	seen string
}

// Stamp stats paths and returns their position. Stamp before reading, so the rows
// read reflect at least the position returned.
func (s *Stamper) Stamp(paths []string) (position.LSN, error) {
	var latest int64
	var fp strings.Builder
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return 0, fmt.Errorf("stat %s: %w", p, err)
		}
		latest = max(latest, fi.ModTime().UnixNano())
		fmt.Fprintf(&fp, "%s\x00%d\x00%d\x00", p, fi.ModTime().UnixNano(), fi.Size())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fp.String() == s.seen && s.last != 0 {
		return s.last, nil
	}
	pos := position.LSN(max(latest, 1))
	if pos <= s.last {
		pos = s.last + 1
	}
	s.last, s.seen = pos, fp.String()
	return pos, nil
}
