// Package chaos injects real faults into the running compose stack and proves
// afterwards that nothing was lost.
//
// A Run goes round by round: each round starts a Workload (a writer posting
// orders through the api at a steady rate, recording every acknowledged order
// with its Spice-Position token, and readers reading the three rankings, some
// with the latest token as Spice-Min-Position), injects one Fault into the
// containers or networks through the Docker Engine API, heals it, waits for a quiet period
// and polls the stack until every path agrees again (the time to recover). The
// Checker then judges the round:
//
//   - every acknowledged order exists exactly once in Postgres and in the
//     accelerated runtime's orders (CheckState: lost and doubled rows);
//   - per product, COUNT(*) and SUM(count) are equal in Postgres and the
//     accelerated runtime, and the top 5 that the three rankings show is the one
//     Postgres computes (CheckState: mismatches);
//   - no answer carried a position below the Spice-Min-Position it was sent
//     (read-your-writes), and per reader positions never went backwards
//     (monotonic reads), nor did any runtime's watermarks (CheckReads,
//     CheckWatermarks);
//   - non-2xx answers came only from endpoints that depend on the failed part.
//
// Report renders the rounds as a Markdown table.
package chaos
