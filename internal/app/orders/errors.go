package orders

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// kindOf maps a driver error to a kind: the one place where SQLSTATEs and
// connection failures gain meaning. It returns nil for the unexpected and for the
// caller's own cancellation.
func kindOf(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return nil
	case errors.As(err, &pgErr):
		return kindOfCode(pgErr.Code)
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err),
		errors.Is(err, puddle.ErrClosedPool), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		pgconn.SafeToRetry(err):
		return ErrUnavailable
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) || strings.Contains(err.Error(), "conn closed") {
		return ErrUnavailable
	}
	return nil
}

// badPassword reports whether Postgres refused the password (28P01
// invalid_password), not whether it is unavailable for other reasons.
func badPassword(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "28P01"
}

func kindOfCode(code string) error {
	switch code {
	case "23503": // foreign_key_violation: the only foreign key is orders.product_id
		return ErrUnknownProduct
	case "23514", "22003", "23502": // check_violation, numeric_value_out_of_range, not_null_violation
		return ErrInvalid
	case "42P01", "42703", "3F000": // undefined_table, undefined_column, invalid_schema_name
		return ErrSchema
	case "40001", "40P01", "55P03", "57014", "25006":
		// serialization_failure, deadlock_detected, lock_not_available,
		// query_canceled (statement_timeout), read_only_sql_transaction (a standby)
		return ErrUnavailable
	}
	switch code[:min(2, len(code))] {
	case "08", "53", "57", "28", "3D":
		// connection_exception, insufficient_resources (too many connections),
		// operator_intervention (shutdown, starting up), invalid authorization,
		// invalid catalog name: Postgres cannot serve us until someone acts.
		return ErrUnavailable
	}
	return nil
}
