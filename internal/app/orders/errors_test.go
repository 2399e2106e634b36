package orders_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
)

func TestKindOf(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code}) }
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"nil", nil, nil},
		{"foreign key violation", pg("23503"), orders.ErrUnknownProduct},
		{"check violation", pg("23514"), orders.ErrInvalid},
		{"numeric out of range", pg("22003"), orders.ErrInvalid},
		{"not null violation", pg("23502"), orders.ErrInvalid},
		{"undefined table", pg("42P01"), orders.ErrSchema},
		{"undefined column", pg("42703"), orders.ErrSchema},
		{"serialization failure", pg("40001"), orders.ErrUnavailable},
		{"deadlock", pg("40P01"), orders.ErrUnavailable},
		{"statement timeout", pg("57014"), orders.ErrUnavailable},
		{"read-only standby", pg("25006"), orders.ErrUnavailable},
		{"too many connections", pg("53300"), orders.ErrUnavailable},
		{"admin shutdown", pg("57P01"), orders.ErrUnavailable},
		{"starting up", pg("57P03"), orders.ErrUnavailable},
		{"connection failure", pg("08006"), orders.ErrUnavailable},
		{"bad password", pg("28P01"), orders.ErrUnavailable},
		{"no database", pg("3D000"), orders.ErrUnavailable},
		{"syntax error", pg("42601"), nil},
		{"unique violation", pg("23505"), nil},
		{"deadline", fmt.Errorf("acquire: %w", context.DeadlineExceeded), orders.ErrUnavailable},
		{"closed pool", puddle.ErrClosedPool, orders.ErrUnavailable},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), orders.ErrUnavailable},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, orders.ErrUnavailable},
		{"caller cancelled", fmt.Errorf("query: %w", context.Canceled), nil},
		{"unknown", errors.New("something else"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := orders.KindOf(tt.err); got != tt.want {
				t.Fatalf("KindOf(%v)=%v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestNewOrder_Validate(t *testing.T) {
	for _, tt := range []struct {
		o    orders.NewOrder
		want error
	}{
		{orders.NewOrder{ProductID: 1, Count: 1}, nil},
		{orders.NewOrder{ProductID: 1, Count: orders.MaxCount}, nil},
		{orders.NewOrder{ProductID: 1, Count: 0}, orders.ErrInvalid},
		{orders.NewOrder{ProductID: 1, Count: orders.MaxCount + 1}, orders.ErrInvalid},
		{orders.NewOrder{ProductID: 0, Count: 1}, orders.ErrUnknownProduct},
		{orders.NewOrder{ProductID: 1 << 31, Count: 1}, orders.ErrUnknownProduct},
	} {
		if err := tt.o.Validate(); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("%+v.Validate()=%v, want %v", tt.o, err, tt.want)
		}
	}
}
