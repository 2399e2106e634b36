package apikey_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

func TestKeys(t *testing.T) {
	keys := apikey.New([]string{"first-key", "", "second-key"})
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"first-key", true},
		{"second-key", true},
		{"", false},
		{"first-ke", false},
		{"first-key ", false},
		{"FIRST-KEY", false},
	} {
		if got := keys.Valid(tt.key); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	if keys.Empty() {
		t.Error("Empty() = true for two keys")
	}
	var none *apikey.Keys
	if !none.Empty() || !apikey.New([]string{""}).Empty() || none.Valid("x") {
		t.Error("nil or all-blank keys must be empty and accept nothing")
	}
}
