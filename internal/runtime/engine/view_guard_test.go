//go:build duckdb_arrow

package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// TestOpen_RefusesViewsThatAreNotOneSelect: a view whose sql carries a second
// statement (a create, a write) stops the start instead of running it.
func TestOpen_RefusesViewsThatAreNotOneSelect(t *testing.T) {
	for _, tt := range []struct {
		name, sql string
		wantErr   string // "" when the engine opens
	}{
		{"one select", "select 1 as a", ""},
		{"create after select", "select 1 as a; create table pwn as select 42 as y", "view v: sql: query refused: the text holds more than one statement"},
		{"two selects", "select 1 as a; select 2 as b", "more than one statement"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := duckdb.New("")
			if err := db.Open(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			e := engine.New(db)
			if err := e.AddView(spicepod.View{Name: "v", SQL: tt.sql}); err != nil {
				t.Fatal(err)
			}
			err := e.Open(ctx)
			if err == nil {
				e.Close(ctx)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Open: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, duckdb.ErrReadOnly)):
				t.Fatalf("Open = %v, want an ErrReadOnly error containing %q", err, tt.wantErr)
			}
			if ok, err := db.TableExists(ctx, "pwn"); err != nil || ok {
				t.Fatalf("table pwn exists=%v (%v)", ok, err)
			}
		})
	}
}
