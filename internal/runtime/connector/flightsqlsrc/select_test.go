package flightsqlsrc_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

func TestSelectSQL_OrderByAndLimit(t *testing.T) {
	got, err := flightsqlsrc.SelectSQL("rankings", []string{"name"}, engine.ScanRequest{Where: "count > 1", OrderBy: "count DESC", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT "name" FROM rankings WHERE (count > 1) ORDER BY count DESC LIMIT 3`; got != want {
		t.Errorf("SelectSQL = %q, want %q", got, want)
	}
}
