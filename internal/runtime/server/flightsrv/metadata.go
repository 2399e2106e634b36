package flightsrv

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Log attribute keys.
const (
	logMethod = "method"
	logTable  = "table"
	logLSN    = "lsn"
	logMode   = "mode"
)

// queryOf builds an engine query for sql from the request's metadata: its
// minimum position (spice-min-position) and cache control.
func queryOf(ctx context.Context, sql string, args []any) (engine.Query, error) {
	q := engine.Query{SQL: sql, Args: args}
	// Per key: FromIncomingContext would copy all of the metadata on every query.
	if v := metadata.ValueFromIncomingContext(ctx, wire.MetadataMinPosition); len(v) > 0 && strings.TrimSpace(v[0]) != "" {
		lsn, err := position.Parse(v[0])
		if err != nil {
			return q, invalidf("metadata %s: %q is not a position; send an LSN like 0/16B3748 (the %s of an earlier answer)",
				wire.MetadataMinPosition, v[0], wire.MetadataPosition)
		}
		q.MinPosition = lsn
	}
	q.NoCache = wire.WantsNoCache(metadata.ValueFromIncomingContext(ctx, wire.MetadataCacheControl)...)
	return q, nil
}

// metadataXCache is upstream's legacy cache header: "Hit from spiceai" or
// "Miss from spiceai"; this runtime adds "Bypass" for answers the cache did
// not see.
const metadataXCache = "x-cache"

func xCache(c engine.CacheStatus) string {
	switch c {
	case engine.CacheHit:
		return "Hit from spiceai"
	case engine.CacheMiss:
		return "Miss from spiceai"
	default:
		return "Bypass"
	}
}

// setHeader attaches the position an answer reflects and its cache status to the
// response headers. It must run before the first message of a stream is sent.
func setHeader(ctx context.Context, pos position.LSN, cache engine.CacheStatus) {
	if cache == "" {
		cache = engine.CacheBypass
	}
	// Fails only when headers were sent already, which the callers rule out.
	_ = grpc.SetHeader(ctx, metadata.Pairs(
		wire.MetadataPosition, pos.String(),
		wire.MetadataCacheStatus, string(cache),
		metadataXCache, xCache(cache),
	))
}
