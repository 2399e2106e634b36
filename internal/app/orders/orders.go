package orders

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Bounds of an order's count. The recipe's random orders use 1..RandomMaxCount;
// an order sent by a client may ask for up to MaxCount, which keeps one order from
// dwarfing every ranking.
const (
	MinCount       = 1
	MaxCount       = 10000
	RandomMaxCount = 100
)

// Order is one written order.
type Order struct {
	ID        int64     `json:"id"`
	ProductID int64     `json:"product_id"`
	Count     int64     `json:"count"`
	CreatedAt time.Time `json:"created_at"`
}

// NewOrder is an order to write.
type NewOrder struct {
	ProductID int64
	Count     int64
}

// Validate checks what can be checked without Postgres: the count's bounds and a
// product id that could exist. Errors are *Error of kind ErrInvalid or
// ErrUnknownProduct.
func (o NewOrder) Validate() error {
	if o.Count < MinCount || o.Count > MaxCount {
		return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("count %d is out of range: send an integer from %d to %d", o.Count, MinCount, MaxCount)}
	}
	if o.ProductID < 1 || o.ProductID > math.MaxInt32 {
		return unknownProduct(o.ProductID, nil)
	}
	return nil
}

// Kinds of failure; an *Error wraps one of them, or none when unexpected.
var (
	// ErrInvalid: the order breaks a rule (its count is out of range).
	ErrInvalid = errors.New("invalid order")
	// ErrUnknownProduct: the order names a product that does not exist.
	ErrUnknownProduct = errors.New("unknown product")
	// ErrNoProducts: a random order was asked for, but there are no products.
	ErrNoProducts = errors.New("no products")
	// ErrSchema: the database lacks the recipe's tables; init.sql was not applied.
	ErrSchema = errors.New("schema missing")
	// ErrUnavailable: Postgres is down, unreachable, overloaded, or every pooled
	// connection stayed busy past the acquire timeout. Worth retrying.
	ErrUnavailable = errors.New("postgres unavailable")
)

// Error is a failure of a Store call. Msg is written for the api's client: what
// failed, with which value, and what to do.
type Error struct {
	Kind error // one of the Err* kinds, nil when unexpected
	Msg  string
	Err  error // the driver error, if any
}

func (e *Error) Error() string {
	if e.Kind == nil && e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the kind and the driver error.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func unknownProduct(id int64, err error) error {
	return &Error{
		Kind: ErrUnknownProduct,
		Msg:  fmt.Sprintf("product %d does not exist: order a product listed in the products table, or send no body for a random order", id),
		Err:  err,
	}
}
