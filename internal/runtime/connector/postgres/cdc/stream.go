package cdc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// eventQueue is how many decoded messages may wait for the applier. While it
// applies, messages queue here; whole transactions that queued up meanwhile are
// applied together.
const eventQueue = 4096

// readAhead is how long before the applier ends a paced wait the receiver
// starts reading what arrived during it: decoding a wait's worth of messages
// takes a fraction of it.
const readAhead = time.Millisecond

// holdLowat is the socket's low-water mark while the receiver holds off
// reading: far more than a wait's worth of messages at a few thousand
// changes a second, and small enough that Linux need not grow the socket's
// buffer for it.
const holdLowat = 64 << 10

// event is one message of the stream: a decoded pgoutput message, or a keepalive
// (msg nil) with the server's sent position.
type event struct {
	msg       pglogrepl.Message
	keepalive position.LSN
}

// stream starts replication at start and runs the receiver, the applier and the
// heartbeat until one fails or ctx ends.
func (f *Feed) stream(ctx context.Context, pool *pgxpool.Pool, conn *pgconn.PgConn, start position.LSN, tables []*table) error {
	err := f.startReplication(ctx, pool, func() error {
		return pglogrepl.StartReplication(ctx, conn, f.cfg.Slot, pglogrepl.LSN(start), pglogrepl.StartReplicationOptions{
			Mode: pglogrepl.LogicalReplication,
			PluginArgs: []string{
				"proto_version '1'",
				"publication_names " + quoteLiteral(f.cfg.Publication),
				"messages 'true'",
				// Binary tuples are what a scan receives, so streamed values decode
				// exactly as copied ones (same codecs, no text parsing).
				"binary 'true'",
			},
		})
	})
	if err != nil {
		return fmt.Errorf("start replication from slot %s at %s: %w%s", f.cfg.Slot, start, err, replicationAdvice(err))
	}
	f.applied.Store(uint64(start))
	f.streaming.Store(true)
	defer f.streaming.Store(false)
	f.setErr(nil)
	f.report()

	events := make(chan event, eventQueue)
	a := newApplier(f, tables, start)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return f.receive(gctx, conn, events) })
	g.Go(func() error { return a.run(gctx, events) })
	g.Go(func() error { return f.probe(gctx, pool) })
	err = g.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// receive reads the replication connection, hands messages to the applier and
// acknowledges the applied position every StatusInterval and whenever the server
// asks. It is the only user of conn.
func (f *Feed) receive(ctx context.Context, conn *pgconn.PgConn, events chan<- event) error {
	next := time.Now()
	heard := time.Now() // when the server last sent something, or we last waited on the applier
	ack := func() error {
		lsn := pglogrepl.LSN(f.applied.Load())
		err := pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{
			WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn,
			// After a StatusInterval of silence, ask for a keepalive: an idle but
			// live server then answers, and a dead connection shows as silence.
			ReplyRequested: time.Since(heard) >= f.StatusInterval,
		})
		if err != nil {
			return fmt.Errorf("acknowledge %s: %w", position.LSN(lsn), err)
		}
		next = time.Now().Add(f.StatusInterval)
		return nil
	}
	push := func(ev event) error {
		select { // the applier keeps up: no timer
		case events <- ev:
			return nil
		default:
		}
		for {
			t := time.NewTimer(time.Until(next))
			select {
			case events <- ev:
				t.Stop()
				return nil
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
				if err := ack(); err != nil { // keep the server informed while the applier is busy
					return err
				}
			}
		}
	}
	// Reads wait until the next acknowledgement is due: a read deadline on
	// the connection, set when that time moves, and moved to now when ctx
	// ends, rather than a context with a deadline for every message (a timer
	// and a context watch per message, a few of them per change).
	nc := conn.Conn()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Now()) })
	defer stop()
	var deadline time.Time
	for {
		if !time.Now().Before(next) {
			if err := ack(); err != nil {
				return err
			}
		}
		if !next.Equal(deadline) {
			if err := nc.SetReadDeadline(next); err != nil {
				return fmt.Errorf("receive from slot %s: %w", f.cfg.Slot, err)
			}
			deadline = next
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d := min(time.Until(time.Unix(0, f.holdUntil.Load()))-readAhead, time.Until(next)); d > 0 {
			// The applier is holding its batch back: what arrives meanwhile
			// waits in the socket, without waking anyone, and is read at
			// once shortly before it wakes.
			setLowat(nc, holdLowat)
			ok := sleep(ctx, d)
			setLowat(nc, 1)
			if !ok {
				return ctx.Err()
			}
			heard = time.Now()
			continue
		}
		msg, err := conn.ReceiveMessage(context.Background())
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case pgconn.Timeout(err):
			if silent := time.Since(heard); silent >= f.SilenceTimeout {
				return fmt.Errorf("receive from slot %s: nothing from the server for %s (asked for keepalives): taking the connection for dead",
					f.cfg.Slot, silent.Round(time.Millisecond))
			}
			continue
		case err != nil:
			return fmt.Errorf("receive from slot %s: %w", f.cfg.Slot, err)
		}
		heard = time.Now()
		ev, reply, err := decode(msg)
		if err != nil {
			return fmt.Errorf("receive from slot %s: %w", f.cfg.Slot, err)
		}
		if reply {
			next = time.Now()
		}
		if ev != nil {
			if err := push(*ev); err != nil {
				return err
			}
			heard = time.Now() // time spent waiting on the applier is not the server's silence
		}
	}
}

// decode turns a message of the replication protocol into an event; reply says
// that the server asked for an acknowledgement.
func decode(msg pgproto3.BackendMessage) (*event, bool, error) {
	switch msg := msg.(type) {
	case *pgproto3.CopyData:
		if len(msg.Data) == 0 {
			return nil, false, errors.New("empty CopyData message")
		}
		switch msg.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			k, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
			if err != nil {
				return nil, false, err
			}
			return &event{keepalive: position.LSN(k.ServerWALEnd)}, k.ReplyRequested, nil
		case pglogrepl.XLogDataByteID:
			x, err := pglogrepl.ParseXLogData(msg.Data[1:])
			if err != nil {
				return nil, false, err
			}
			m, err := pglogrepl.Parse(x.WALData)
			if err != nil {
				return nil, false, fmt.Errorf("decode pgoutput message %q: %w", x.WALData[0], err)
			}
			if lm, ok := m.(*pglogrepl.LogicalDecodingMessage); ok {
				lm.Content = bytes.Clone(lm.Content) // it points into the connection's buffer
			}
			return &event{msg: m}, false, nil
		}
		return nil, false, nil
	case *pgproto3.ErrorResponse:
		return nil, false, pgconn.ErrorResponseToPgError(msg)
	case *pgproto3.CopyDone, *pgproto3.CommandComplete:
		return nil, false, errors.New("the server ended the stream (is it shutting down?)")
	case *pgproto3.NoticeResponse:
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("unexpected message %T", msg)
}
