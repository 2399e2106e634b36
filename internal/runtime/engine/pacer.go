package engine

import "time"

// Pacer spaces a change feed's store transactions (group commit): a store
// transaction costs a few DuckDB statements whatever it holds, so a feed that
// applied every change as it came would spend that on each one. After a
// transaction that took d, the next starts no sooner than d*(1/Share-1)
// after it ended (at most MaxWait), and takes every change that arrived
// meanwhile: the feed's transactions take at most Share of a core, a change
// after a quiet spell is applied at once, and under load batches grow with
// the rate, so the cost per change falls as the rate rises.
type Pacer struct {
	// Share is the share of one core the transactions may take; 1 or more
	// applies each batch as soon as the last one ended.
	Share float64
	// MaxWait caps the wait, and so what pacing adds to a change's time to
	// visible.
	MaxWait time.Duration

	took  time.Duration // the last transaction's duration
	ended time.Time     // when it ended
}

// Wait returns how long the next transaction should still wait; zero or less
// means now.
func (p *Pacer) Wait() time.Duration {
	if p.Share >= 1 || p.Share <= 0 || p.ended.IsZero() {
		return 0
	}
	w := time.Duration(float64(p.took) * (1/p.Share - 1))
	return min(w, p.MaxWait) - time.Since(p.ended)
}

// Done records a transaction that began at began and has just ended.
func (p *Pacer) Done(began time.Time) {
	p.ended = time.Now()
	p.took = p.ended.Sub(began)
}
