//go:build duckdb_arrow

package httpsrv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
)

// heavySQL runs until its request is cancelled.
const heavySQL = "SELECT sum(hash(range)) FROM range(1000000000000)"

// MustServer starts the HTTP API over the recipe's engine, configured by
// configure, and returns its base URL.
func MustServer(t *testing.T, configure func(*engine.Engine), server func(*httpsrv.Server)) (*engine.Engine, string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders}, configure)
	runtimetest.WaitReady(t, e)
	s := httpsrv.New("127.0.0.1:0", e)
	if server != nil {
		server(s)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return e, "http://" + s.Addr()
}

func post(ctx context.Context, t *testing.T, url, sql string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/sql", strings.NewReader(sql))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ""
		}
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// Limits answer with their own status and say what to do.
func TestSQLStatusCodes(t *testing.T) {
	_, url := MustServer(t, func(e *engine.Engine) {
		e.MaxResultBytes = 1 << 10
		e.QueryTimeout = 300 * time.Millisecond
		e.MaxQueryBytes = 4 << 10
	}, nil)
	for _, tc := range []struct {
		name, sql string
		code      int
		want      string
	}{
		{"result too large", "SELECT range FROM range(100000)", http.StatusRequestEntityTooLarge, "LIMIT"},
		{"timed out", heavySQL, http.StatusGatewayTimeout, "cheaper"},
		{"query too large", "SELECT '" + strings.Repeat("x", 8<<10) + "'", http.StatusRequestEntityTooLarge, "shorter"},
		{"bad sql", "SELEC 1", http.StatusBadRequest, "syntax"},
		{"internals", "SELECT * FROM _spice.watermarks", http.StatusBadRequest, "internal"},
		{"ranking", runtimetest.RankingsSQL, http.StatusOK, "nintendo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := post(context.Background(), t, url, tc.sql)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %q, want %d mentioning %q", code, body, tc.code, tc.want)
			}
		})
	}
}

// startHeavy runs n heavy queries until the test ends and waits until want of
// them hold a slot.
func startHeavy(t *testing.T, e *engine.Engine, url string, n, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(ctx, t, url, heavySQL+fmt.Sprintf(" -- %d", i))
		}()
	}
	runtimetest.WaitFor(t, e, fmt.Sprintf("%d heavy queries running", want), func() bool {
		_, heavy := e.Admission.Running()
		return heavy >= want
	})
}

// Heavy ad-hoc queries cannot starve a ranking read.
func TestRankingAnswersWhileHeavyQueriesRun(t *testing.T) {
	e, url := MustServer(t, func(e *engine.Engine) {
		e.Admission = engine.Admission{Slots: 4, HeavySlots: 2, QueueTimeout: time.Minute}
		e.QueryTimeout = time.Minute
	}, nil)
	startHeavy(t, e, url, 6, 2)
	for i := 0; i < 3; i++ {
		code, _, body := post(context.Background(), t, url, runtimetest.RankingsSQL+fmt.Sprintf(" -- %d", i))
		if code != http.StatusOK || !strings.Contains(body, "nintendo") {
			t.Fatalf("ranking read: %d %q, want 200 with the rankings", code, body)
		}
	}
}

// A full runtime answers 503 with Retry-After instead of holding the client.
func TestBusyAnswers503(t *testing.T) {
	e, url := MustServer(t, func(e *engine.Engine) {
		e.Admission = engine.Admission{Slots: 2, HeavySlots: 1, MaxQueued: 1, QueueTimeout: 200 * time.Millisecond}
		e.QueryTimeout = time.Minute
	}, nil)
	startHeavy(t, e, url, 1, 1)
	code, h, body := post(context.Background(), t, url, heavySQL+" -- waits")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "retry") {
		t.Fatalf("%d Retry-After=%q %q, want 503 with Retry-After saying to retry", code, h.Get("Retry-After"), body)
	}
}

// A client that sends its body slowly is cut off.
func TestSlowBodyIsCut(t *testing.T) {
	_, url := MustServer(t, nil, func(s *httpsrv.Server) { s.ReadTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/sql HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nSELECT")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the server still waits for the body; want the connection cut")
	}
}

// Distinct large query texts do not grow what the runtime holds past its
// limits.
func TestQueryTextFloodStaysWithinLimits(t *testing.T) {
	const limit = 1 << 20
	e, url := MustServer(t, func(e *engine.Engine) {
		e.PlanCacheBytes = limit
		e.Cache = engine.NewCache(limit, time.Minute)
	}, nil)
	for i := 0; i < 40; i++ {
		sql := fmt.Sprintf("SELECT %d %s AS x", i, strings.Repeat(" ", 100<<10))
		if code, _, body := post(context.Background(), t, url, sql); code != http.StatusOK {
			t.Fatalf("query %d: %d %s", i, code, body)
		}
	}
	if got := e.PlanBytes(); got > limit || got == 0 {
		t.Fatalf("plan cache holds %d bytes, want 0 < bytes <= %d", got, limit)
	}
	if got := e.Cache.Bytes(); got > limit || got < 100<<10 {
		t.Fatalf("results cache holds %d bytes (keys included), want 100 KiB <= bytes <= %d", got, limit)
	}
}
