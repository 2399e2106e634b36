//go:build duckdb_arrow

package flightsrv_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// TestTicketsRunAgain: a ticket whose result the server no longer holds (too
// large to hold here; expired, or issued by another replica, elsewhere) runs its
// statement again at DoGet, prepared statements with their parameters included.
func TestTicketsRunAgain(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) { s.MaxTicketBytes = 1 })
	c := newClient(t, r.srv)
	ctx := testContext(t)

	info, err := c.Execute(ctx, "select name, count from rankings order by count desc limit 5")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, md := doGet(t, c, info); !equal(got, wantRankings) || positionOf(t, md) != 100 {
		t.Errorf("rows=%q, want %q at 0/64", got, wantRankings)
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0) // after Close releases the bound parameters
	stmt, err := c.Prepare(ctx, "SELECT name FROM products WHERE id = $1")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil))
	b.Field(0).(*array.Int32Builder).Append(1)
	params := b.NewRecordBatch()
	b.Release()
	stmt.SetParameters(params)
	info, err = stmt.Execute(ctx)
	params.Release()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := doGet(t, c, info); !equal(got, []string{"the most beautiful flower"}) {
		t.Errorf("prepared rows=%q, want the flower", got)
	}
}
