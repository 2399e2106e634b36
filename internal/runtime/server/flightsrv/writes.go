package flightsrv

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The Flight SQL calls that would change data. The runtime takes none: its
// data comes from its sources. They check the key's access first, so a
// read-only key learns that it is read-only (PermissionDenied) and a
// read-write key that the runtime does not take writes (Unimplemented); a
// write the runtime may take later is guarded already.
//
// Everything else on the Flight port reads: queries, prepared statements and
// their parameters (DoPut of CommandPreparedStatementQuery), DoExchange
// subscriptions and the spice.watch action.

const msgNoWrites = "this runtime takes no writes over Flight: its datasets follow their sources; " +
	"write to the source (Postgres for the accelerated runtime) instead"

func (q *sqlService) DoPutCommandStatementUpdate(ctx context.Context, _ flightsql.StatementUpdate) (int64, error) {
	return 0, refuseWrite(ctx)
}

func (q *sqlService) DoPutCommandSubstraitPlan(ctx context.Context, _ flightsql.StatementSubstraitPlan) (int64, error) {
	return 0, refuseWrite(ctx)
}

func (q *sqlService) DoPutPreparedStatementUpdate(ctx context.Context, _ flightsql.PreparedStatementUpdate, _ flight.MessageReader) (int64, error) {
	return 0, refuseWrite(ctx)
}

func (q *sqlService) DoPutCommandStatementIngest(ctx context.Context, _ flightsql.StatementIngest, _ flight.MessageReader) (int64, error) {
	return 0, refuseWrite(ctx)
}

func refuseWrite(ctx context.Context) error {
	if err := requireWrite(ctx); err != nil {
		return err
	}
	return status.Error(codes.Unimplemented, msgNoWrites)
}
