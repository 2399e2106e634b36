package cdc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// applier turns the stream into store transactions. It buffers each source
// transaction whole and applies it at its commit, together with any whole
// transactions queued behind it, in one Engine.Apply stamped with the last commit's
// end position; heartbeats and keepalives between transactions only move the
// watermark.
type applier struct {
	f       *Feed
	byName  map[string]*table // "schema.name" -> table
	rels    map[uint32]*table // relation id -> table; nil value: not ours
	open    bool              // inside Begin ... Commit
	batch   *batch
	applied position.LSN
	pacer   engine.Pacer
	events  int // messages handled since the last flush
}

// holdBelow is the most messages a batch may hold for the receiver to leave
// the next ones in the socket while the applier waits (holdUntil): a stream
// of a few thousand changes a second. Past it the runtime is catching up, and
// the receiver reads on, so that the next batch finds the queue full.
const holdBelow = eventQueue / 4

func newApplier(f *Feed, tables []*table, start position.LSN) *applier {
	a := &applier{f: f, byName: map[string]*table{}, rels: map[uint32]*table{}, applied: start,
		pacer: engine.Pacer{Share: f.ApplyShare, MaxWait: f.MaxApplyWait}}
	for _, t := range tables {
		a.byName[t.schema+"."+t.name] = t
	}
	a.batch = newBatch(f.Allocator)
	return a
}

func (a *applier) run(ctx context.Context, events <-chan event) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			a.events++
			if err := a.handle(ev); err != nil {
				return err
			}
		}
		if a.open || a.batch.pos <= a.applied {
			continue
		}
		full := a.batch.changes >= a.f.MaxBatchChanges
		if len(events) > 0 && !full {
			continue
		}
		// While the pacer holds the batch back, the applier sleeps instead of
		// waking for every message that arrives, and so, unless it is
		// catching up, does the receiver (holdUntil): it reads what arrived
		// meanwhile in a few reads just before the applier wakes, not one
		// per message.
		if wait := a.pacer.Wait(); wait > 0 && !full {
			if a.events < holdBelow {
				a.f.holdUntil.Store(time.Now().Add(wait).UnixNano())
			}
			ok := sleep(ctx, wait)
			a.f.holdUntil.Store(0)
			if !ok {
				return nil
			}
			if len(events) > 0 {
				continue
			}
		}
		if err := a.flush(ctx); err != nil {
			return err
		}
		small := a.events < holdBelow
		a.events = 0
		if len(events) == 0 && small {
			// Keeping up: the next batch waits for the pacer whenever its
			// first change arrives, so the receiver need not read it sooner.
			a.f.holdUntil.Store(time.Now().Add(a.pacer.Wait()).UnixNano())
		}
	}
}

// sleep waits for d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (a *applier) handle(ev event) error {
	if ev.msg == nil {
		if !a.open { // everything before the server's sent position has arrived
			a.batch.advance(ev.keepalive, time.Time{})
		}
		return nil
	}
	switch m := ev.msg.(type) {
	case *pglogrepl.BeginMessage:
		a.open = true
	case *pglogrepl.CommitMessage:
		a.open = false
		a.batch.advance(position.LSN(m.TransactionEndLSN), m.CommitTime)
	case *pglogrepl.RelationMessage:
		return a.relation(m)
	case *pglogrepl.InsertMessage:
		if t := a.rels[m.RelationID]; t != nil {
			return a.batch.insert(t, m.Tuple)
		}
	case *pglogrepl.UpdateMessage:
		if t := a.rels[m.RelationID]; t != nil {
			return a.batch.update(t, m)
		}
	case *pglogrepl.DeleteMessage:
		if t := a.rels[m.RelationID]; t != nil {
			return a.batch.delete(t, m.OldTuple)
		}
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if t := a.rels[id]; t != nil {
				a.batch.truncate(t)
			}
		}
	case *pglogrepl.LogicalDecodingMessage:
		if !m.Transactional && m.Prefix == heartbeatPrefix && !a.open {
			a.batch.advance(position.LSN(m.LSN), heartbeatTime(m.Content))
		}
	}
	return nil
}

// relation checks a table's shape as the stream describes it against what its
// local table was loaded with. A difference ends the session with a new snapshot:
// rows are never applied to columns they were not written for.
func (a *applier) relation(m *pglogrepl.RelationMessage) error {
	t := a.byName[m.Namespace+"."+m.RelationName]
	if t == nil {
		a.rels[m.RelationID] = nil // published, but not one of our datasets
		return nil
	}
	var fp strings.Builder
	fmt.Fprintf(&fp, "%d", m.RelationID)
	for _, c := range m.Columns {
		fp.WriteString("," + columnFingerprint(c.Name, c.DataType, c.TypeModifier))
	}
	if fp.String() != t.fingerprint {
		return &resnapshotError{reason: reasonSchema, detail: fmt.Sprintf("the columns of %s changed (dataset %s): was %s, now %s", t.ident(), t.Dataset, t.fingerprint, fp.String())}
	}
	switch m.ReplicaIdentity {
	case 'n':
		return fmt.Errorf("dataset %s: %w: %s now has REPLICA IDENTITY NOTHING, so deletes carry no key: run ALTER TABLE %s REPLICA IDENTITY DEFAULT (with a primary key) or FULL",
			t.Dataset, ErrNoKey, t.ident(), t.ident())
	case 'f':
	default:
		for _, k := range t.key {
			i := t.column(k)
			if m.Columns[i].Flags&1 == 0 {
				return fmt.Errorf("dataset %s: %w: key column %q of %s is no longer in its replica identity: run ALTER TABLE %s REPLICA IDENTITY FULL, or restore the primary key",
					t.Dataset, ErrNoKey, k, t.ident(), t.ident())
			}
		}
	}
	a.rels[m.RelationID] = t
	return nil
}

// flush applies the batch: row changes and the new watermark in one store
// transaction, or only the watermark when no row changed.
func (a *applier) flush(ctx context.Context) error {
	b := a.batch
	began := time.Now()
	var err error
	if b.changes > 0 {
		err = a.f.eng.Apply(ctx, a.f.datasets, b.pos, func(tx engine.StoreTx) error { return b.apply(tx, a.f.Logger) })
	} else {
		err = a.f.eng.Advance(ctx, a.f.datasets, b.pos)
	}
	a.pacer.Done(began)
	if err != nil {
		return err
	}
	a.applied = b.pos
	a.f.applied.Store(uint64(b.pos))
	if !b.at.IsZero() {
		a.f.lastAt.Store(b.at.UnixNano())
	}
	a.f.report()
	if b.changes > 0 {
		a.f.Logger.Debug("applied changes", logSlot, a.f.cfg.Slot, logLSN, b.pos.String(), "changes", b.changes, "took", time.Since(began))
	}
	a.batch = newBatch(a.f.Allocator)
	a.batch.pos = b.pos
	return nil
}
