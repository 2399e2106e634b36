package live_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/live"
	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// reader is a hand-written fake of a path's reader.
type reader func(ctx context.Context, req ranking.Request) (ranking.Result, error)

func (f reader) Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error) {
	return f(ctx, req)
}

// at answers rows at a fixed position and counts its calls.
func at(pos position.LSN, calls *atomic.Int64, rows ...ranking.Row) reader {
	return func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		if calls != nil {
			calls.Add(1)
		}
		return ranking.Result{Rows: rows, Position: pos}, nil
	}
}

var rows = []ranking.Row{{Name: "Caesar Salad", Count: 12}, {Name: "Fish and Chips", Count: 7}}

func replicasOf(st ...replicas.Status) func() []replicas.Status {
	return func() []replicas.Status { return st }
}

// MustHub opens a hub over the paths and serves its handler.
func MustHub(tb testing.TB, h *live.Hub) *httptest.Server {
	tb.Helper()
	if h.Interval == 0 {
		h.Interval = 5 * time.Millisecond
	}
	h.MinGap = time.Millisecond
	h.Logger = slog.New(slog.DiscardHandler)
	if err := h.Open(); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h.Handler())
	srv.Config.ConnContext = live.ConnContext // as the api's server does
	srv.Start()
	tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = h.Close()
	})
	return srv
}

func threePaths(calls *atomic.Int64) *live.Hub {
	return live.NewHub(
		live.Path{Name: live.PathPostgres, Reader: at(0x1000, calls, rows...)},
		live.Path{Name: live.PathAccelerated, Reader: at(0x0f00, nil, rows...),
			Replicas: replicasOf(replicas.Status{Addr: "10.0.0.2:50051", Healthy: true, Position: 0x0f00},
				replicas.Status{Addr: "10.0.0.3:50051", Healthy: false})},
		live.Path{Name: live.PathMaterialized, Reader: reader(func(context.Context, ranking.Request) (ranking.Result, error) {
			return ranking.Result{}, errors.New("materialized runtime at materialized:50051 is unavailable")
		}), Replicas: replicasOf()},
	)
}

// event is one server-sent event.
type event struct {
	name string
	data []byte
}

// stream reads a viewer's events.
type stream struct {
	resp   *http.Response
	events chan event
}

func MustConnect(tb testing.TB, ctx context.Context, url string) *stream {
	tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/live/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	if got, want := resp.Header.Get("Content-Type"), "text/event-stream"; resp.StatusCode != 200 || got != want {
		tb.Fatalf("GET /live/events: %s, content type %q, want 200 %q", resp.Status, got, want)
	}
	s := &stream{resp: resp, events: make(chan event, 1024)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					s.events <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = []byte(strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	tb.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event named name, skipping others.
func (s *stream) next(tb testing.TB, name string, v any) {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				tb.Fatalf("stream ended before a %s event", name)
			}
			if ev.name != name {
				continue
			}
			if err := json.Unmarshal(ev.data, v); err != nil {
				tb.Fatalf("decode %s %s: %v", name, ev.data, err)
			}
			return
		case <-timeout:
			tb.Fatalf("no %s event within 10s", name)
		}
	}
}

func TestEvents_FanOutCarriesWhatThePageNeeds(t *testing.T) {
	var calls atomic.Int64
	srv := MustHub(t, threePaths(&calls))
	var viewers []*stream
	for range 3 {
		viewers = append(viewers, MustConnect(t, t.Context(), srv.URL))
	}
	for i, v := range viewers {
		var hello live.Hello
		v.next(t, "hello", &hello)
		if got, want := len(hello.Paths), 3; got != want || hello.Paths[0].Name != live.PathPostgres {
			t.Fatalf("viewer %d: hello paths %+v, want postgres first of 3", i, hello.Paths)
		}
		var tick live.Tick
		v.next(t, "tick", &tick)
		if got, want := tick.Head, "0/1000"; got != want {
			t.Fatalf("viewer %d: head=%q, want %q", i, got, want)
		}
		pg, acc, mat := tick.Paths[0], tick.Paths[1], tick.Paths[2]
		if pg.LagBytes == nil || *pg.LagBytes != 0 || len(pg.Rows) != 2 || pg.Rows[0] != rows[0] || pg.Position != "0/1000" {
			t.Fatalf("viewer %d: postgres %+v", i, pg)
		}
		if acc.LagBytes == nil || *acc.LagBytes != 0x100 || acc.Position != "0/F00" || acc.Error != "" {
			t.Fatalf("viewer %d: accelerated %+v, want 256 bytes behind at 0/F00", i, acc)
		}
		if got, want := len(acc.Replicas), 2; got != want || !acc.Replicas[0].Up || acc.Replicas[1].Up || acc.Replicas[0].Position != "0/F00" {
			t.Fatalf("viewer %d: accelerated replicas %+v, want one up at 0/F00 and one down", i, acc.Replicas)
		}
		if mat.LagBytes != nil || !strings.Contains(mat.Error, "unavailable") || mat.Rows == nil || mat.Replicas == nil {
			t.Fatalf("viewer %d: materialized %+v, want its error, no lag, empty rows and replicas", i, mat)
		}
	}
	// One loop for every viewer: the ticks they see share sequence numbers.
	var a, b live.Tick
	viewers[0].next(t, "tick", &a)
	for {
		viewers[1].next(t, "tick", &b)
		if b.Seq >= a.Seq {
			break
		}
	}
	if b.Seq != a.Seq {
		var c live.Tick
		for c.Seq < b.Seq {
			viewers[0].next(t, "tick", &c)
		}
		if c.Seq != b.Seq {
			t.Fatalf("viewer 0 skipped tick %d that viewer 1 got", b.Seq)
		}
	}
}

// TestEvents_SlowViewerIsDropped: a viewer that reads nothing fills its socket
// and then its buffer; the hub drops it and the other viewer keeps getting
// ticks all along.
func TestEvents_SlowViewerIsDropped(t *testing.T) {
	big := []ranking.Row{{Name: strings.Repeat("x", 64<<10), Count: 1}} // 64 KiB per tick
	h := live.NewHub(live.Path{Name: live.PathPostgres, Reader: at(0x10, nil, big...)})
	h.Buffer = 2
	srv := MustHub(t, h)

	// The slow viewer: sends its request, never reads, with a small receive buffer.
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := io.WriteString(conn, "GET /live/events HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	fast := MustConnect(t, t.Context(), srv.URL)
	waitFor(t, "both viewers to be connected", func() bool { return h.Viewers() == 2 })
	waitFor(t, "the slow viewer to be dropped", func() bool {
		var tick live.Tick
		fast.next(t, "tick", &tick) // the fast one keeps reading meanwhile
		return h.Viewers() == 1
	})
	// The loop goes on for the fast one: it gets ticks taken after the drop.
	before := h.Ticks()
	var tick live.Tick
	for tick.Seq <= before {
		fast.next(t, "tick", &tick)
	}
}

// A viewer that reads its first bytes and then stops (a stalled tab, a
// hostile client) with the kernel's default buffers is dropped before the api
// has written much to it: the kernel does not grow the stream's send buffer
// to megabytes.
func TestEvents_StalledViewerIsDroppedEarly(t *testing.T) {
	tick := []ranking.Row{{Name: strings.Repeat("x", 4<<10), Count: 1}} // 4 KiB per tick
	h := live.NewHub(live.Path{Name: live.PathPostgres, Reader: at(0x10, nil, tick...)})
	h.Interval = 2 * time.Millisecond
	srv := MustHub(t, h)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /live/events HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(make([]byte, 4096)); err != nil { // the headers and the hello begin
		t.Fatal(err)
	}
	waitFor(t, "the stalled viewer to be dropped", func() bool { return h.Viewers() == 0 })
	if got, limit := h.SentBytes(), uint64(1<<20); got > limit {
		t.Fatalf("the api wrote %d bytes to a viewer that stopped reading before dropping it, want at most %d", got, limit)
	}
	if got := h.Dropped(); got != 1 {
		t.Fatalf("dropped %d viewers for falling behind, want 1", got)
	}
}

// Past MaxViewers a new viewer gets 503 with Retry-After and a message, and
// is let in once a place is free.
func TestEvents_ViewersAreCapped(t *testing.T) {
	h := threePaths(nil)
	h.MaxViewers = 2
	srv := MustHub(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	MustConnect(t, ctx, srv.URL)
	MustConnect(t, t.Context(), srv.URL)
	resp, err := http.Get(srv.URL + "/live/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("third viewer: 200, want 503")
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "API_LIVE_MAX_VIEWERS") {
		t.Fatalf("third viewer: %s Retry-After=%q %q, want 503 naming API_LIVE_MAX_VIEWERS", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	cancel()
	waitFor(t, "a place to free", func() bool { return h.Viewers() == 1 })
	MustConnect(t, t.Context(), srv.URL)
}

// A browser that reconnects sends the last tick it saw; its hello says how
// many it missed.
func TestEvents_ReconnectSaysWhatWasMissed(t *testing.T) {
	h := threePaths(nil)
	srv := MustHub(t, h)
	var tick live.Tick
	MustConnect(t, t.Context(), srv.URL).next(t, "tick", &tick)
	waitFor(t, "more ticks", func() bool { return h.Ticks() >= tick.Seq+5 })

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/live/events", nil)
	req.Header.Set("Last-Event-ID", strconv.FormatUint(tick.Seq, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var hello live.Hello
		if err := json.Unmarshal([]byte(data), &hello); err != nil {
			t.Fatal(err)
		}
		if hello.Missed == nil || *hello.Missed < 5 {
			t.Fatalf("hello after reconnecting: missed=%v, want at least 5", hello.Missed)
		}
		return
	}
	t.Fatalf("no hello: %v", sc.Err())
}

func TestEvents_DisconnectCleansUpAndTheLoopRests(t *testing.T) {
	var calls atomic.Int64
	h := threePaths(&calls)
	h.Buffer = 100_000 // never full here: only the viewer's leaving can remove it
	srv := MustHub(t, h)
	if got := calls.Load(); got != 0 {
		t.Fatalf("%d reads before any viewer, want 0", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	v := MustConnect(t, ctx, srv.URL)
	var tick live.Tick
	v.next(t, "tick", &tick)
	if got, want := h.Viewers(), 1; got != want {
		t.Fatalf("viewers=%d, want %d", got, want)
	}
	cancel()
	waitFor(t, "the viewer to be gone", func() bool { return h.Viewers() == 0 })
	// A tick in flight may finish; then the reads stop.
	waitFor(t, "the loop to rest", func() bool {
		n := calls.Load()
		time.Sleep(20 * h.Interval)
		return calls.Load() == n
	})
	rested := calls.Load()
	time.Sleep(20 * h.Interval)
	if got := calls.Load(); got != rested {
		t.Fatalf("postgres read %d times with no viewer, after resting at %d", got, rested)
	}
	// A new viewer wakes it up.
	MustConnect(t, t.Context(), srv.URL).next(t, "tick", &tick)
}

// store is a hand-written fake order store.
type store struct{ lsn position.LSN }

func (s *store) Create(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
	return orders.Order{ID: 7, ProductID: o.ProductID, Count: o.Count}, s.lsn, nil
}

func (s *store) CreateRandom(ctx context.Context) (orders.Order, position.LSN, error) {
	return s.Create(ctx, orders.NewOrder{ProductID: 3, Count: 2})
}

// TestWrites_FollowedOnEveryPath: an order written through Orders shows up in
// the ticks, visible on Postgres at once and on each runtime once its read at
// the order's position answers.
func TestWrites_FollowedOnEveryPath(t *testing.T) {
	release := map[string]chan struct{}{live.PathAccelerated: make(chan struct{}), live.PathMaterialized: make(chan struct{})}
	var mins sync.Map
	runtime := func(name string) reader {
		return func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
			if req.MinPosition == 0 {
				return ranking.Result{Rows: rows, Position: 0x100}, nil
			}
			mins.Store(name, req)
			select {
			case <-release[name]:
				return ranking.Result{Rows: rows, Position: req.MinPosition}, nil
			case <-ctx.Done():
				return ranking.Result{}, ctx.Err()
			}
		}
	}
	h := live.NewHub(
		live.Path{Name: live.PathPostgres, Reader: at(0x200, nil, rows...)},
		live.Path{Name: live.PathAccelerated, Reader: runtime(live.PathAccelerated)},
		live.Path{Name: live.PathMaterialized, Reader: runtime(live.PathMaterialized)},
	)
	h.WriteKey = true
	srv := MustHub(t, h)
	st := h.Orders(&store{lsn: 0x200})

	// Nobody watches: nothing is recorded or followed.
	if _, _, err := st.CreateRandom(t.Context()); err != nil {
		t.Fatal(err)
	}
	v := MustConnect(t, t.Context(), srv.URL)
	var hello live.Hello
	v.next(t, "hello", &hello)
	if len(hello.Writes) != 0 || !hello.WriteKey {
		t.Fatalf("hello %+v, want no writes and write_key", hello)
	}
	if _, _, err := st.Create(t.Context(), orders.NewOrder{ProductID: 1, Count: 5}); err != nil {
		t.Fatal(err)
	}
	w := nextWrite(t, v, func(w live.Write) bool { return w.ID == 7 })
	if _, ok := w.Visible[live.PathPostgres]; !ok || w.LSN != "0/200" || !w.Followed || w.Count != 5 {
		t.Fatalf("write %+v, want followed, visible on postgres, at 0/200", w)
	}
	if _, ok := w.Visible[live.PathAccelerated]; ok {
		t.Fatalf("write %+v visible on accelerated before its read answered", w)
	}
	close(release[live.PathAccelerated])
	w = nextWrite(t, v, func(w live.Write) bool { _, ok := w.Visible[live.PathAccelerated]; return ok })
	if _, ok := w.Visible[live.PathMaterialized]; ok {
		t.Fatalf("write %+v visible on materialized before its read answered", w)
	}
	close(release[live.PathMaterialized])
	w = nextWrite(t, v, func(w live.Write) bool { _, ok := w.Visible[live.PathMaterialized]; return ok })
	if w.Visible[live.PathMaterialized] < w.Visible[live.PathPostgres] {
		t.Fatalf("visible %v: materialized before the commit returned", w.Visible)
	}
	for _, name := range []string{live.PathAccelerated, live.PathMaterialized} {
		req, _ := mins.Load(name)
		if r := req.(ranking.Request); r.MinPosition != 0x200 || !r.NoCache {
			t.Fatalf("%s was read with %+v, want min position 0/200 and no cache", name, r)
		}
	}
	// A new viewer gets the order in its hello.
	v2 := MustConnect(t, t.Context(), srv.URL)
	v2.next(t, "hello", &hello)
	if len(hello.Writes) != 1 || len(hello.Writes[0].Visible) != 3 {
		t.Fatalf("hello writes %+v, want the order, visible on all three", hello.Writes)
	}
}

func nextWrite(tb testing.TB, s *stream, ok func(live.Write) bool) live.Write {
	tb.Helper()
	for {
		var tick live.Tick
		s.next(tb, "tick", &tick)
		for _, w := range tick.Writes {
			if ok(w) {
				return w
			}
		}
	}
}

func TestPageIsEmbedded(t *testing.T) {
	srv := MustHub(t, threePaths(nil))
	for path, want := range map[string]string{
		"/live":          "<script src=\"/live/live.js\">",
		"/live/live.js":  "new EventSource(\"/live/events\")",
		"/live/live.css": "@media (max-width",
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("GET %s: %s, body lacks %q", path, resp.Status, want)
		}
		if offsite.Match(body) {
			t.Fatalf("GET %s refers to another site; the page must work offline", path)
		}
	}
}

// offsite finds a reference to another site: a script, style, image or fetch.
var offsite = regexp.MustCompile(`(src|href)=["']?(https?:)?//|url\(["']?(https?:)?//|@import|fetch\(["'](https?:)?//`)

func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
