package ranking

import (
	"errors"
	"fmt"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Limit is how many products a ranking lists, as in the recipe.
const Limit = 5

// The recipe's queries, with one deliberate change: an explicit, total order. The
// recipe's "order by count desc" puts products without orders (a NULL sum) first on
// Postgres and last on DuckDB, and leaves ties in any order; here NULLs sort last
// everywhere and ties break by name in byte order (COLLATE "C" on Postgres, whose
// default collation ignores spaces; DuckDB compares bytes by default).
const (
	// PostgresQuery is the recipe's view query in Postgres' dialect.
	PostgresQuery = `WITH a AS (
  SELECT products.id, sum(count) AS count
  FROM orders INNER JOIN products ON orders.product_id = products.id
  GROUP BY products.id)
SELECT name, count FROM products LEFT JOIN a ON products.id = a.id
ORDER BY count DESC NULLS LAST, name COLLATE "C"
LIMIT 5`

	// AcceleratedQuery is the recipe's view query as the accelerated runtime (DuckDB)
	// runs it over its local copies of products and orders.
	AcceleratedQuery = `WITH a AS (
  SELECT products.id, sum(count) AS count
  FROM orders INNER JOIN products ON orders.product_id = products.id
  GROUP BY products.id)
SELECT name, count FROM products LEFT JOIN a ON products.id = a.id
ORDER BY count DESC NULLS LAST, name
LIMIT 5`

	// MaterializedQuery reads the materialized runtime's rankings table, which
	// holds the view's result.
	MaterializedQuery = `SELECT name, count FROM rankings ORDER BY count DESC NULLS LAST, name LIMIT 5`
)

// Row is one product of a ranking. Count is 0 for a product that never sold (the
// query's NULL sum).
type Row struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Request says what a reader asks of a source.
type Request struct {
	// MinPosition, when not zero, asks for an answer that reflects at least this
	// source position; a runtime waits a bounded time for it, then fails with
	// ErrTimeout.
	MinPosition position.LSN
	// NoCache asks a runtime to bypass its results cache.
	NoCache bool
}

// Result is one answer.
type Result struct {
	// Rows may be shared with other answers of the same content (a reader
	// reuses what it decoded when the source sends the same answer again):
	// read them, never modify them.
	Rows []Row
	// Position is the source position the answer reflects; zero when the source
	// did not say.
	Position position.LSN
	// CacheStatus is the runtime's results-cache status (HIT, MISS, BYPASS), empty
	// when the source has no results cache.
	CacheStatus string
}

// Kinds of failure; a *SourceError wraps one of them.
var (
	// ErrUnavailable: the source is down, unreachable, not ready yet or shutting
	// down. Worth retrying.
	ErrUnavailable = errors.New("source unavailable")
	// ErrTimeout: the source did not answer in time, or could not reach the
	// requested minimum position in time.
	ErrTimeout = errors.New("source timed out")
	// ErrBadAnswer: the source refused the query or answered with something that
	// is not a ranking (missing columns, wrong types). A configuration problem.
	ErrBadAnswer = errors.New("source gave an unexpected answer")
)

// SourceError is a failure of one source. Its message names the source and its
// address, says what happened and, where it can, what to do.
type SourceError struct {
	Source string // "accelerated runtime"
	Addr   string // "accelerated:50051"
	Kind   error  // ErrUnavailable, ErrTimeout or ErrBadAnswer
	Detail string // the source's own message, or what was wrong with its answer
	Err    error  // the underlying error, if any
}

func (e *SourceError) Error() string {
	var what string
	switch e.Kind {
	case ErrUnavailable:
		what = "is unavailable"
	case ErrTimeout:
		what = "did not answer in time"
	default:
		what = "gave an unexpected answer"
	}
	return fmt.Sprintf("%s at %s %s: %s", e.Source, e.Addr, what, e.Detail)
}

// Unwrap returns the kind and the underlying error.
func (e *SourceError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
