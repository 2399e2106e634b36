package apikey_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

func TestKeys(t *testing.T) {
	keys := apikey.New([]apikey.Key{
		{Secret: "first-key", Access: apikey.ReadOnly},
		{Secret: ""},
		{Secret: "second-key", Access: apikey.ReadWrite},
		{Secret: "zero-access"},
		{Secret: "both", Access: apikey.ReadWrite},
		{Secret: "both", Access: apikey.ReadOnly},
	})
	for _, tt := range []struct {
		key  string
		want apikey.Access
	}{
		{"first-key", apikey.ReadOnly},
		{"second-key", apikey.ReadWrite},
		{"zero-access", apikey.ReadOnly},
		{"both", apikey.ReadWrite},
		{"", apikey.None},
		{"first-ke", apikey.None},
		{"first-key ", apikey.None},
		{"FIRST-KEY", apikey.None},
		{"second-key:rw", apikey.None},
	} {
		if got := keys.Access(tt.key); got != tt.want {
			t.Errorf("Access(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	if keys.Empty() {
		t.Error("Empty() = true for four keys")
	}
	var none *apikey.Keys
	if !none.Empty() || !apikey.New(apikey.ReadOnlyKeys("")).Empty() || none.Access("x") != apikey.None {
		t.Error("nil or all-blank keys must be empty and accept nothing")
	}
}

func TestAccess(t *testing.T) {
	for _, tt := range []struct {
		a        apikey.Access
		name     string
		canWrite bool
	}{
		{apikey.None, "none", false},
		{apikey.ReadOnly, "read-only", false},
		{apikey.ReadWrite, "read-write", true},
	} {
		if got := tt.a.String(); got != tt.name {
			t.Errorf("String() = %q, want %q", got, tt.name)
		}
		if got := tt.a.CanWrite(); got != tt.canWrite {
			t.Errorf("%v.CanWrite() = %v, want %v", tt.a, got, tt.canWrite)
		}
	}
}
