//go:build duckdb_arrow

package flightsrv_test

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

func TestErrors(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) { e.MinPositionTimeout = 200 * time.Millisecond }, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)

	_, err := c.Execute(ctx, "SELEC name FROM products")
	wantCode(t, err, codes.InvalidArgument, "syntax error")

	_, err = c.Execute(ctx, "SELECT * FROM nope")
	wantCode(t, err, codes.InvalidArgument, "nope")

	_, err = c.Execute(ctx, "INSERT INTO products VALUES (9, 'x')")
	wantCode(t, err, codes.InvalidArgument, "INSERT", "read")

	_, err = c.Prepare(ctx, "SELECT * FROM nope")
	wantCode(t, err, codes.InvalidArgument, "nope")

	// A minimum position the data never reaches.
	later := metadata.AppendToOutgoingContext(ctx, wire.MetadataMinPosition, "1/0")
	_, err = c.Execute(later, "SELECT * FROM rankings")
	wantCode(t, err, codes.DeadlineExceeded, "1/0", "0/64")

	// One it has reached answers at once.
	reached := metadata.AppendToOutgoingContext(ctx, wire.MetadataMinPosition, "0/64")
	if _, err := c.Execute(reached, "SELECT * FROM rankings"); err != nil {
		t.Errorf("min position reached: %v", err)
	}

	bad := metadata.AppendToOutgoingContext(ctx, wire.MetadataMinPosition, "yesterday")
	_, err = c.Execute(bad, "SELECT * FROM rankings")
	wantCode(t, err, codes.InvalidArgument, wire.MetadataMinPosition, "0/16B3748")
}

func TestErrorNotReady(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := runtimetest.NewSource(t, mem, runtimetest.ProductsSchema)
	src.Fail(errors.New("connection refused"))
	e := runtimetest.NewEngine(t, `version: v1
kind: Spicepod
name: broken
datasets:
  - from: test:products
    name: products
    acceleration: {enabled: true}
`, map[string]engine.Source{"products": src}, nil)
	srv := runtimetest.StartServer(t, e, mem, nil)
	c := newClient(t, srv)

	_, err := c.Execute(testContext(t), "SELECT * FROM products")
	wantCode(t, err, codes.Unavailable, "products", "not ready")
}
