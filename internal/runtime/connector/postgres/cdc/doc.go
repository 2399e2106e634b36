// Package cdc keeps datasets with refresh_mode: changes in step with Postgres by
// logical replication (pgoutput), exactly: no row lost, none applied twice, across
// snapshots, restarts and lost slots.
//
// One Feed serves every changes dataset of a runtime that reads one database,
// through one publication and one replication slot, so a source transaction over
// several tables lands in one local transaction. Wiring, in cmd/dataruntime:
//
//	cfgs, err := cdc.Configs(pod.Name, instanceID, pod.Datasets)
//	metrics := cdc.NewMetrics(registry) // once per runtime; nil registry: none
//	for _, cfg := range cfgs {
//		f := cdc.New(eng, store, cfg) // each dataset added with eng.AddDataset(spec, nil)
//		f.Logger, f.Metrics = logger, metrics
//		eng.AddFeed(f) // the engine runs it
//	}
//
// and for `dataruntime drop-slots`: cdc.Drop(ctx, cfg.Postgres, cfg.Slot, cfg.Publication)
// for each Config, which says whether the slot and the publication existed.
//
// Start. With nothing stored (first start, or mode: memory) the feed creates the
// slot with EXPORT_SNAPSHOT, copies every table in a REPEATABLE READ transaction
// that imports that snapshot, into the store in one transaction whose watermark is
// the slot's consistent point, and streams from that point. With mode: file and a
// stored watermark it resumes from it ("resuming from <lsn>" in the log). It takes
// a new snapshot instead, logged and counted in cdc_resnapshots_total{reason}, when
// the slot is missing or lost, when the slot is past the stored position (a gap),
// when a table's columns differ from those the local table was loaded with, or
// when tables had to be added to the publication.
//
// Apply. Each source transaction is buffered whole and netted per key (the table's
// primary key, its replica identity index, or the spicepod's primary_key). At its
// commit the changed rows that existed before are deleted and the final rows
// inserted, as Arrow batches, in one Engine.Apply stamped with the commit's end
// position; whole
// transactions that queued up meanwhile go into the same Apply. Values are decoded
// from pgoutput's binary tuples by the postgres package's codecs, so streamed rows
// equal copied ones. An unchanged TOASTed value (not sent by Postgres) is taken
// from the row's earlier image in the batch, from the old image under REPLICA
// IDENTITY FULL, or else from the local row, inside the same store transaction.
//
// Positions. The feed acknowledges to Postgres only what Apply has committed,
// every StatusInterval and whenever the server asks. Every HeartbeatInterval it
// writes a non-transactional message (pg_logical_emit_message, prefix
// spice_heartbeat) and reads pg_current_wal_lsn(): the message flows through the
// slot, so an idle database still moves the slot and the watermark, and the lag in
// time stays true. Between transactions, heartbeats and keepalives move the
// watermark without touching data: everything committed before their position has
// arrived by then, because pgoutput (protocol 1) sends each transaction whole at
// its commit, in commit order.
//
// Lifecycle. Run reconnects with back-off, keeping the last data and reporting the
// datasets not fresh with the error. On return a memory-mode feed drops its slot; a
// file-mode feed keeps it for the next start. Drop removes what a runtime owns.
package cdc
