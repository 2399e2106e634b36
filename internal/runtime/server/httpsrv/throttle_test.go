package httpsrv_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
)

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Wrong keys from one address are refused with 429 before they are checked
// once the address has spent its budget, the right key too, and logged once;
// /health stays open.
func TestWrongKeysAreThrottledAndLoggedOnce(t *testing.T) {
	var log syncBuffer
	srv := start(t, func(s *httpsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys("right-key")
		s.Throttle = &apikey.Throttle{Burst: 10, Refill: time.Hour, LogInterval: time.Hour,
			Logger: slog.New(slog.NewTextHandler(&log, nil))}
	})
	url := "http://" + srv.Addr()
	c := &http.Client{}
	codes := map[int]int{}
	for i := 0; i < 30; i++ {
		code, _ := get(t, c, url+"/v1/datasets", "X-API-Key", "guess")
		codes[code]++
	}
	if codes[http.StatusUnauthorized] != 10 || codes[http.StatusTooManyRequests] != 20 {
		t.Fatalf("answers to 30 wrong keys: %v, want 10 401 then 20 429", codes)
	}
	if code, body := get(t, c, url+"/v1/datasets", "X-API-Key", "right-key"); code != http.StatusTooManyRequests || !strings.Contains(body, "try again in") {
		t.Fatalf("the right key from a throttled address: %d %q, want 429 saying when to try again", code, body)
	}
	if code, _ := get(t, c, url+"/health", "X-API-Key", "guess"); code != http.StatusOK {
		t.Fatalf("/health from a throttled address: %d, want 200", code)
	}
	if got := strings.Count(log.String(), "wrong API keys"); got != 1 {
		t.Fatalf("%d log lines about wrong keys, want 1:\n%s", got, log.String())
	}
}
