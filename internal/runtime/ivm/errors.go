package ivm

import (
	"errors"
	"fmt"
)

// ErrDiverged: a change removed a row the maintained state does not hold, so
// the state no longer matches the tables it follows; the query must be
// computed afresh.
var ErrDiverged = errors.New("maintained state no longer matches its tables")

func errMissing(row Row) error {
	return fmt.Errorf("%w: a removed row is not held (%v)", ErrDiverged, []Value(row))
}
