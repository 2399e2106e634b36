//go:build duckdb_arrow

package main

import (
	"context"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// A subscribed view keeps its ordering on the subscriber: runtime 1 states
// the view's top-level ORDER BY in the subscription's snapshot (ordering),
// runtime 2 records it with the dataset at every subscription
// (orderedUpstream), and its store answers plain reads of the dataset in
// that order (duckdb.DB.SetOrder).

// ordering is flightsrv.Server.Ordering: a view's top-level ORDER BY on the
// subscribed columns; nil for datasets and for orders not on output columns.
func (m *Main) ordering(ctx context.Context, name string, columns []string) []wire.OrderKey {
	var sql string
	for _, v := range m.Pod.Views {
		if strings.EqualFold(v.Name, name) {
			sql = v.SQL
		}
	}
	if sql == "" {
		return nil
	}
	keys, err := m.Store.OutputOrder(ctx, sql)
	if err != nil {
		m.Logger.Warn("subscription without its view's ordering", "view", name, logging.ErrorKey, err)
		return nil
	}
	out := make([]wire.OrderKey, 0, len(keys))
	for _, k := range keys {
		if k.Index >= len(columns) {
			return nil
		}
		out = append(out, wire.OrderKey{Column: columns[k.Index], Descending: k.Descending, NullsFirst: k.NullsFirst})
	}
	return out
}

// orderedUpstream records the ordering each subscription's snapshot states.
type orderedUpstream struct {
	flightsqlsrc.Upstream
	record func([]wire.OrderKey)
}

func (u orderedUpstream) Subscribe(ctx context.Context, since position.LSN) (*flightsqlsrc.Stream, error) {
	st, err := u.Upstream.Subscribe(ctx, since)
	if err == nil {
		u.record(st.Order)
	}
	return st, err
}

// orderedNotifier is an orderedUpstream over an upstream that also pushes
// change notices (the feed uses them when subscriptions are not served).
type orderedNotifier struct {
	orderedUpstream
	engine.Notifier
}

// withOrder wraps up so that dataset's rows are served in the order its
// subscriptions state.
func (m *Main) withOrder(dataset string, up flightsqlsrc.Upstream) flightsqlsrc.Upstream {
	o := orderedUpstream{Upstream: up, record: func(keys []wire.OrderKey) { m.Store.SetOrder(dataset, keys) }}
	if n, ok := up.(engine.Notifier); ok {
		return orderedNotifier{orderedUpstream: o, Notifier: n}
	}
	return o
}
