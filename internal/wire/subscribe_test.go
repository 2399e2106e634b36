package wire_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

func TestSubscribeRequest(t *testing.T) {
	for _, tc := range []struct {
		cmd       string
		want      string
		wantSince position.LSN
		wantErr   bool
	}{
		{cmd: `{"subscribe":"rankings"}`, want: "rankings"},
		{cmd: ` {"subscribe": "public.rankings"} `, want: "public.rankings"},
		{cmd: `{"subscribe":"rankings","since":"0/16B3748"}`, want: "rankings", wantSince: 0x16B3748},
		{cmd: `{"subscribe":"rankings","since":"soon"}`, wantErr: true},
		{cmd: `{"subscribe":""}`, wantErr: true},
		{cmd: `{"subscrbe":"rankings"}`, wantErr: true},
		{cmd: `{}`, wantErr: true},
		{cmd: `{"subscribe":1}`, wantErr: true},
	} {
		if !wire.IsSubscribeRequest([]byte(tc.cmd)) {
			t.Errorf("IsSubscribeRequest(%q) = false", tc.cmd)
		}
		got, err := wire.DecodeSubscribeRequest([]byte(tc.cmd))
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), `{"subscribe": "rankings"}`) {
				t.Errorf("decode %q: err=%v, want one showing the expected form", tc.cmd, err)
			}
			continue
		}
		if err != nil || got.Subscribe != tc.want || got.Since != tc.wantSince {
			t.Errorf("decode %q = %+v, %v; want %q since %s", tc.cmd, got, err, tc.want, tc.wantSince)
		}
	}
	for _, cmd := range []string{"select 1", "", "\n\x12"} {
		if wire.IsSubscribeRequest([]byte(cmd)) {
			t.Errorf("IsSubscribeRequest(%q) = true", cmd)
		}
	}
	r := wire.SubscribeRequest{Subscribe: "rankings"}
	if got, want := string(r.Encode()), `{"subscribe":"rankings"}`; got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
	r.Since = 0x16B3748
	if got, want := string(r.Encode()), `{"subscribe":"rankings","since":"0/16B3748"}`; got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
}

func TestSubscriptionMeta(t *testing.T) {
	for _, tc := range []struct {
		meta wire.SubscriptionMeta
		json string
	}{
		{wire.SubscriptionMeta{Kind: wire.KindSnapshot, Position: 0x16B3748, Mode: "incremental"},
			`{"kind":"snapshot","position":"0/16B3748","mode":"incremental"}`},
		{wire.SubscriptionMeta{Kind: wire.KindSnapshot, Position: 100, Mode: "incremental", Order: []wire.OrderKey{{Column: "count", Descending: true, NullsFirst: true}, {Column: "name"}}},
			`{"kind":"snapshot","position":"0/64","mode":"incremental","order":[{"column":"count","descending":true,"nulls_first":true},{"column":"name"}]}`},
		{wire.SubscriptionMeta{Kind: wire.KindDelete, Position: 100}, `{"kind":"delete","position":"0/64"}`},
		{wire.SubscriptionMeta{Kind: wire.KindInsert, Position: 100}, `{"kind":"insert","position":"0/64"}`},
		{wire.SubscriptionMeta{Kind: wire.KindInsert, Position: 100, Commit: true}, `{"kind":"insert","position":"0/64","commit":true}`},
		{wire.SubscriptionMeta{Kind: wire.KindCommit, Position: 100}, `{"kind":"commit","position":"0/64"}`},
		{wire.SubscriptionMeta{Kind: wire.KindProgress, Position: 0}, `{"kind":"progress","position":"0/0"}`},
		{wire.SubscriptionMeta{Kind: wire.KindHeartbeat}, `{"kind":"heartbeat"}`},
	} {
		if got := string(tc.meta.Encode()); got != tc.json {
			t.Errorf("encode %+v = %s, want %s", tc.meta, got, tc.json)
		}
		got, err := wire.DecodeSubscriptionMeta([]byte(tc.json))
		if err != nil || !reflect.DeepEqual(got, tc.meta) {
			t.Errorf("decode %s = %+v, %v; want %+v", tc.json, got, err, tc.meta)
		}
	}
	for _, body := range []string{"", "{}", `{"kind":"update","position":"0/1"}`, `{"kind":"commit"}`, `{"kind":"insert","position":"x"}`} {
		if _, err := wire.DecodeSubscriptionMeta([]byte(body)); err == nil {
			t.Errorf("decode %q: no error", body)
		}
	}
}
