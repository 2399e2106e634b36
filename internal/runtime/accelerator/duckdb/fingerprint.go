//go:build duckdb_arrow

package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// fingerprintTable keeps, next to each dataset's watermark, the source columns
// its local table was loaded with (for the change feed, which compares them
// with the source before resuming). Its name and columns are part of the file
// format of mode: file.
const fingerprintTable = "_spice.cdc_tables"

// SetFingerprint records the dataset's fingerprint in this transaction.
func (t *Tx) SetFingerprint(dataset, fingerprint string) error {
	if err := t.exec(`CREATE TABLE IF NOT EXISTS ` + fingerprintTable + ` (dataset VARCHAR PRIMARY KEY, fingerprint VARCHAR NOT NULL)`); err != nil {
		return fmt.Errorf("record source columns: %w", err)
	}
	if err := t.exec(`INSERT OR REPLACE INTO `+fingerprintTable+` VALUES (?, ?)`, dataset, fingerprint); err != nil {
		return fmt.Errorf("record source columns of %s: %w", dataset, err)
	}
	return nil
}

// Fingerprints returns the recorded fingerprint of each dataset; none when
// nothing was recorded yet.
func (d *DB) Fingerprints(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	res, err := d.Query(ctx, engine.StoreQuery{
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
	res, err = d.Query(ctx, engine.StoreQuery{SQL: `SELECT dataset, fingerprint FROM ` + fingerprintTable})
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
