// Package replicas spreads the api's reads of one runtime service over its
// replicas and moves away from the ones that fail.
//
// A Pool finds the replicas by resolving the service's host name again and again
// (with compose, the service name resolves to every replica; with Kubernetes, a
// headless Service's name does), keeps one reader per replica address, and
// watches each replica's grpc.health.v1 status on its Flight port. A read goes
// to the next healthy replica in turn; one that fails before answering
// (ranking.ErrUnavailable: refused, reset, not ready, shutting down) is retried
// on another replica, as reads are idempotent. A replica that fails EjectAfter
// reads in a row is left out for EjectFor, even while its health still says
// SERVING (a hung process, a half-open connection). A read that arrives before
// the first resolution has finished (a fresh api) waits for it, at most the
// resolution's timeout, rather than fail for want of a replica.
//
// Reads that carry a minimum position (Spice-Min-Position) go first to replicas
// whose last answer was already at or past it; when none is, a replica waits for
// the position, as a single runtime does. So whichever replica answers, the
// answer is at or past the position asked for.
//
//	p := replicas.NewPool("materialized runtime", "materialized:50051",
//		func(addr string) (replicas.Reader, error) {
//			f := ranking.NewFlight("materialized runtime", addr, ranking.MaterializedQuery)
//			return f, f.Open()
//		})
//	if err := p.Open(); err != nil { ... }
//	defer p.Close()
//	res, err := p.Ranking(ctx, ranking.Request{MinPosition: lsn})
package replicas
