package spiceai_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/spiceai"
)

func TestTablePath(t *testing.T) {
	for _, tt := range []struct{ path, name, want string }{
		{"spiceai/quickstart/datasets/taxi_trips", "taxi_trips", "spiceai.quickstart.taxi_trips"},
		{"spiceai/tpch/datasets/customer", "tpch.customer", "spiceai.tpch.customer"},
		{"lukekim/demo/my_data", "d", "lukekim.demo.my_data"},
		{"lukekim/demo", "my_data", "lukekim.demo.my_data"},
		{"rankings", "rankings", "rankings"},
		{"eth.recent_transactions", "x", "eth.recent_transactions"},
	} {
		if got := spiceai.TablePath(tt.path, tt.name); got != tt.want {
			t.Errorf("TablePath(%q, %q) = %q, want %q", tt.path, tt.name, got, tt.want)
		}
	}
}
