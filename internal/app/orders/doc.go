// Package orders is the api's access to Postgres, the source of truth: it writes
// orders (the command side of the recipe) and answers the ranking straight from
// them (the baseline read).
//
// Every write returns a read-your-writes token, a position at or past the write's
// commit; every ranking returns the position it reflects. Both are Postgres LSNs,
// comparable with the positions the runtimes report.
//
//	store := orders.NewStore(pool)
//	o, token, err := store.Create(ctx, orders.NewOrder{ProductID: 1, Count: 3})
//	o, token, err = store.CreateRandom(ctx)
//	res, err := store.Ranking(ctx, ranking.Request{})
//
// Errors are *Error, wrapping one of the kinds ErrInvalid, ErrUnknownProduct,
// ErrNoProducts, ErrSchema and ErrUnavailable, or none for the unexpected; the
// caller's own cancellation is returned as the context's error. kindOf is the one
// place where SQLSTATEs gain meaning.
package orders
