package cdc

import (
	"errors"
	"fmt"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrNoKey: a table has no key the feed can match changes by.
	ErrNoKey = errors.New("table has no usable key")
	// ErrSlotInUse: another process streams from the replication slot.
	ErrSlotInUse = errors.New("replication slot is in use")
	// ErrPublication: the publication exists but does not publish what the feed needs.
	ErrPublication = errors.New("publication is not usable")
	// ErrUnsupported: a dataset asks for something refresh_mode: changes cannot do.
	ErrUnsupported = errors.New("not supported with refresh_mode: changes")
)

// resnapshotError ends a streaming session when the local data can no longer follow
// the stream (a table's columns changed); Run takes a new snapshot at once.
type resnapshotError struct {
	reason string // label of cdc_resnapshots_total
	detail string
}

func (e *resnapshotError) Error() string {
	return fmt.Sprintf("new snapshot needed (%s): %s", e.reason, e.detail)
}

// Reasons for a new snapshot, the label values of cdc_resnapshots_total.
const (
	reasonSlotMissing = "slot_missing" // the slot does not exist (dropped while we were away)
	reasonSlotLost    = "slot_lost"    // Postgres invalidated it (wal_status lost)
	reasonGap         = "gap"          // the slot is past our stored position
	reasonSchema      = "schema_change"
	reasonPublication = "publication_changed" // tables joined the publication: their earlier changes are not in the slot
	reasonIncomplete  = "incomplete"          // datasets disagree on their position, or one has none
)
