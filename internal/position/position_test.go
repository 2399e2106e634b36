package position_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/position"
)

func TestParseAndString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want position.LSN
		str  string
	}{
		{"0/16B3748", 0x16B3748, "0/16B3748"},
		{"16/B374D848", 0x16_B374D848, "16/B374D848"},
		{" 1/0 ", 1 << 32, "1/0"},
		{"23803720", 23803720, "0/16B3748"},
		{"FFFFFFFF/FFFFFFFF", ^position.LSN(0), "FFFFFFFF/FFFFFFFF"},
	} {
		got, err := position.Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if got != tc.want {
			t.Fatalf("Parse(%q)=%d, want %d", tc.in, got, tc.want)
		}
		if got.String() != tc.str {
			t.Fatalf("%d.String()=%q, want %q", got, got.String(), tc.str)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{"", "x", "1/", "/1", "1/2/3", "G/0", "100000000/0", "-1"} {
		if _, err := position.Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
