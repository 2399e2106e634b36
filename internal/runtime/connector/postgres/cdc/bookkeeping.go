package cdc

import (
	"context"
	"fmt"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// The store keeps, next to each dataset's watermark, the source columns its local
// table was loaded with (a fingerprint of table OID, column names, types and
// modifiers). A feed that resumes compares it with the source, and the stream's
// Relation messages with it, so rows are never applied to the wrong columns.

// writeFingerprints records the tables' fingerprints in the snapshot's transaction.
func writeFingerprints(tx engine.StoreTx, tables []*table) error {
	for _, t := range tables {
		if err := tx.SetFingerprint(t.Dataset, t.fingerprint); err != nil {
			return err
		}
	}
	return nil
}

// readFingerprints returns the recorded fingerprints; none when nothing was
// recorded yet.
func readFingerprints(ctx context.Context, store Store) (map[string]string, error) {
	fps, err := store.Fingerprints(ctx)
	if err != nil {
		return nil, fmt.Errorf("read recorded source columns: %w", err)
	}
	return fps, nil
}
