//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
)

// DuckDB keeps a deleted row in its table, marked deleted, until a
// checkpoint compacts the table; an in-memory database is never checkpointed
// on its own. A table rewritten on every change (a subscribed ranking: every
// row retracted and inserted again) would otherwise hold more dead rows with
// every transaction, and every scan of it, its DELETE included, would cost
// more and more. The DB counts the rows its write transactions delete and
// checkpoints once CompactAfterRows of them have been deleted since the last
// checkpoint, right after the commit that passes the mark, on the write
// connection (DuckDB lets readers go on meanwhile).

// DefaultCompactAfterRows is DB.CompactAfterRows' default.
const DefaultCompactAfterRows = 100_000

// compaction counts the rows deleted since the last checkpoint.
type compaction struct {
	mu      sync.Mutex
	deleted int64
}

// compactAfter adds rows deleted by a committed transaction, and checkpoints
// when they pass the mark.
func (d *DB) compactAfter(ctx context.Context, conn *sql.Conn, deleted int64) {
	if deleted == 0 {
		return
	}
	d.compact.mu.Lock()
	d.compact.deleted += deleted
	due := d.compact.deleted >= d.CompactAfterRows
	if due {
		d.compact.deleted = 0
	}
	d.compact.mu.Unlock()
	if !due {
		return
	}
	if _, err := conn.ExecContext(ctx, "CHECKPOINT"); err != nil {
		d.logger().Warn("compact deleted rows: checkpoint failed; trying again after as many more", slog.Any("error", err))
	}
}

func (d *DB) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}
