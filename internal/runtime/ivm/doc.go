// Package ivm keeps the result of a subscribed query in memory and brings it
// up to date from the rows that change, in microseconds per changed row.
//
// A Query is built from a Plan, which the accelerator's planner derives from
// the query's parse tree. The plan has three parts:
//
//   - Blocks: the query's aggregates (SUM, COUNT, COUNT(*), AVG, MIN, MAX per
//     group). Each keeps one accumulator per group. Its input is contribution
//     rows (group values and aggregate arguments, with a weight of +1 for a row
//     that entered and -1 for one that left): computed here from a changed row
//     of the block's fact table joined to in-memory copies of its dimension
//     tables when the block reads plain columns, or by the store once per batch
//     over the changed rows otherwise. A MIN or MAX whose extreme value left is
//     computed again by the store for that group only.
//   - The body: a block or a table, optionally joined (inner or left, on
//     column equalities) to another block or table. Each side is an
//     Arrangement (rows indexed by join key); a change recomputes the body rows
//     of the join keys it touched, nothing else.
//   - The output: a projection of the body's columns, an ORDER BY and a LIMIT.
//     A LIMIT keeps the first rows in order plus a buffer past them; when
//     removals empty the buffer below the limit it is filled again from the
//     body.
//
// SQL semantics stay DuckDB's: the planner hands to the store every expression
// that is more than a column reference, and the values here are compared,
// grouped and summed as DuckDB does for the types the planner admits
// (Supported). Each batch yields the rows that left and entered the result, as
// Arrow records of the query's own schema.
//
// A Query is not safe for concurrent use; its owner serializes calls.
package ivm
