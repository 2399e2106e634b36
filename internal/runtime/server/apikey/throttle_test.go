package apikey_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestThrottleBudgetGrowsBack(t *testing.T) {
	th := &apikey.Throttle{Burst: 3, Refill: time.Second, Logger: quiet()}
	now := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if _, ok := th.Allow("10.0.0.1:5000", "http", now); !ok {
			t.Fatalf("attempt %d refused within the burst", i)
		}
		th.Failed("10.0.0.1:5000", "http", now)
	}
	wait, ok := th.Allow("10.0.0.1:6000", "http", now)
	if ok || wait != time.Second {
		t.Fatalf("after the burst: ok=%v wait=%s, want refused for 1s", ok, wait)
	}
	if _, ok := th.Allow("10.0.0.2:5000", "http", now); !ok {
		t.Fatal("another address refused")
	}
	if _, ok := th.Allow("10.0.0.1:5000", "http", now.Add(time.Second)); !ok {
		t.Fatal("refused after the budget grew back by one")
	}
}

func TestThrottleGroupsIPv6By64(t *testing.T) {
	th := &apikey.Throttle{Burst: 1, Refill: time.Hour, Logger: quiet()}
	now := time.Unix(1000, 0)
	th.Failed("[2001:db8:1:2::1]:443", "flight", now)
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"[2001:db8:1:2::ffff]:443", false},
		{"[2001:db8:1:3::1]:443", true},
		{"[::ffff:10.0.0.1]:443", true},
		{"not an address", true},
	} {
		if _, ok := th.Allow(tt.addr, "flight", now); ok != tt.ok {
			t.Errorf("%s: ok=%v, want %v", tt.addr, ok, tt.ok)
		}
	}
}

func TestThrottleRemembersAtMostMaxSources(t *testing.T) {
	th := &apikey.Throttle{MaxSources: 100, Logger: quiet()}
	now := time.Unix(1000, 0)
	for i := 0; i < 1000; i++ {
		th.Failed(fmt.Sprintf("10.0.%d.%d:1", i/256, i%256), "http", now)
	}
	if got := th.Sources(); got != 100 {
		t.Fatalf("remembers %d sources, want 100", got)
	}
	// Once their budgets have grown back, the sources are forgotten.
	th.Failed("10.9.9.9:1", "http", now.Add(time.Hour))
	if got := th.Sources(); got != 1 {
		t.Fatalf("remembers %d sources an hour later, want 1", got)
	}
}
