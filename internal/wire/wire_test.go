package wire_test

import (
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

func TestMetadataKeysAreHeaderNamesInLowerCase(t *testing.T) {
	for _, tc := range []struct{ header, metadata string }{
		{wire.HeaderPosition, wire.MetadataPosition},
		{wire.HeaderMinPosition, wire.MetadataMinPosition},
		{wire.HeaderCacheStatus, wire.MetadataCacheStatus},
		{wire.HeaderCacheControl, wire.MetadataCacheControl},
	} {
		if got, want := tc.metadata, strings.ToLower(tc.header); got != want {
			t.Errorf("metadata key %q, want %q (the header %q in lower case)", got, want, tc.header)
		}
	}
}

func TestWatchRequest(t *testing.T) {
	for _, tc := range []struct {
		body    string
		want    wire.WatchRequest
		wantErr bool
	}{
		{body: "", want: wire.WatchRequest{}},
		{body: "  \n", want: wire.WatchRequest{}},
		{body: "{}", want: wire.WatchRequest{}},
		{body: `{"table":"rankings"}`, want: wire.WatchRequest{Table: "rankings"}},
		{body: "rankings", wantErr: true},
		{body: `{"table":1}`, wantErr: true},
	} {
		got, err := wire.DecodeWatchRequest([]byte(tc.body))
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), `{"table": "rankings"}`) {
				t.Errorf("decode %q: err=%v, want one showing the expected form", tc.body, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("decode %q = %+v, %v; want %+v", tc.body, got, err, tc.want)
		}
	}
	for _, r := range []wire.WatchRequest{{}, {Table: "orders"}} {
		got, err := wire.DecodeWatchRequest(r.Encode())
		if err != nil || got != r {
			t.Errorf("round trip of %+v = %+v, %v", r, got, err)
		}
	}
}

func TestWatchNotice(t *testing.T) {
	for _, pos := range []position.LSN{0, 0x16B3748, 0x16_B374D848} {
		n := wire.WatchNotice{Position: pos}
		if got, want := string(n.Encode()), `{"position":"`+pos.String()+`"}`; got != want {
			t.Errorf("encode %v = %s, want %s", pos, got, want)
		}
		got, err := wire.DecodeWatchNotice(n.Encode())
		if err != nil || got != n {
			t.Errorf("round trip of %v = %+v, %v", pos, got, err)
		}
	}
	for _, body := range []string{"", "0/1", `{"position":"x"}`, `{}`} {
		if _, err := wire.DecodeWatchNotice([]byte(body)); err == nil {
			t.Errorf("decode %q: no error", body)
		}
	}
}

func TestWantsNoCache(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"max-age=0"}, false},
		{[]string{"no-cache"}, true},
		{[]string{"No-Cache"}, true},
		{[]string{"max-age=0, no-cache"}, true},
		{[]string{"max-age=0", "no-cache"}, true},
	} {
		if got := wire.WantsNoCache(tc.values...); got != tc.want {
			t.Errorf("WantsNoCache(%q)=%v, want %v", tc.values, got, tc.want)
		}
	}
}
