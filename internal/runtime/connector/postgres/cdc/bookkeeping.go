package cdc

import (
	"context"
	"fmt"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// The store keeps, next to each dataset's watermark, the source columns its local
// table was loaded with (a fingerprint of table OID, column names, types and
// modifiers). A feed that resumes compares it with the source, and the stream's
// Relation messages with it, so rows are never applied to the wrong columns.
const fingerprintTable = "_spice.cdc_tables"

// writeFingerprints records the tables' fingerprints in the snapshot's transaction.
func writeFingerprints(tx engine.StoreTx, tables []*table) error {
	err := tx.Exec(`CREATE TABLE IF NOT EXISTS ` + fingerprintTable + ` (dataset VARCHAR PRIMARY KEY, fingerprint VARCHAR NOT NULL)`)
	if err != nil {
		return fmt.Errorf("record source columns: %w", err)
	}
	for _, t := range tables {
		err := tx.Exec(`INSERT OR REPLACE INTO ` + fingerprintTable + ` VALUES (` + quoteLiteral(t.Dataset) + `, ` + quoteLiteral(t.fingerprint) + `)`)
		if err != nil {
			return fmt.Errorf("record source columns of %s: %w", t.Dataset, err)
		}
	}
	return nil
}

// readFingerprints returns the recorded fingerprints; none when nothing was
// recorded yet.
func readFingerprints(ctx context.Context, store Store) (map[string]string, error) {
	out := map[string]string{}
	res, err := store.Query(ctx, engine.StoreQuery{
		SQL: `SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_spice' AND table_name = 'cdc_tables'`,
	})
	if err != nil {
		return nil, fmt.Errorf("read recorded source columns: %w", err)
	}
	found := len(res.Records) > 0 && res.Records[0].Column(0).ValueStr(0) != "0"
	res.Release()
	if !found {
		return out, nil
	}
	res, err = store.Query(ctx, engine.StoreQuery{SQL: `SELECT dataset, fingerprint FROM ` + fingerprintTable})
	if err != nil {
		return nil, fmt.Errorf("read recorded source columns: %w", err)
	}
	defer res.Release()
	for _, rec := range res.Records {
		for i := range int(rec.NumRows()) {
			// Strings alias the record's buffers: copy them.
			out[strings.Clone(rec.Column(0).ValueStr(i))] = strings.Clone(rec.Column(1).ValueStr(i))
		}
	}
	return out, nil
}
