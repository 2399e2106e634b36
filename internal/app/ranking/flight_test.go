package ranking_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// runtime is a Flight SQL server that answers every statement with one record
// batch built from JSON, stamped like our runtime stamps its answers.
type runtime struct {
	flightsql.BaseServer
	alloc  memory.Allocator
	schema *arrow.Schema
	rows   string // JSON rows of the answer
	pos    string // spice-position header, none when empty
	cache  string // results-cache-status header
	err    error  // returned by GetFlightInfo instead of an answer
	delay  time.Duration

	// gate, when set, holds every call until it is closed; entered gets a
	// value as each call arrives. Calls are counted, and with numbered each
	// answer's position is its call's number.
	gate     chan struct{}
	entered  chan struct{}
	numbered bool

	mu    sync.Mutex
	query string
	md    metadata.MD // incoming metadata of the last GetFlightInfo
	calls int
}

// called records a call's query and metadata and plays the configured delay and
// error.
func (s *runtime) called(ctx context.Context, query string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.query, s.md = query, md
	s.calls++
	if s.numbered {
		s.pos = fmt.Sprintf("0/%X", s.calls)
	}
	s.mu.Unlock()
	if s.gate != nil {
		s.entered <- struct{}{}
		<-s.gate
	}
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.err
}

// answer stamps the header and returns the answer's one record batch.
func (s *runtime) answer(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	s.mu.Lock()
	pos, rows := s.pos, s.rows
	s.mu.Unlock()
	if pos != "" {
		_ = grpc.SetHeader(ctx, metadata.Pairs(wire.MetadataPosition, pos, wire.MetadataCacheStatus, s.cache))
	}
	rec, _, err := array.RecordFromJSON(s.alloc, s.schema, strings.NewReader(rows))
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return s.schema, ch, nil
}

func (s *runtime) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if err := s.called(ctx, cmd.GetQuery()); err != nil {
		return nil, err
	}
	ticket, err := flightsql.CreateStatementQueryTicket([]byte(cmd.GetQuery()))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: ticket}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

func (s *runtime) DoGetStatement(ctx context.Context, _ flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.answer(ctx)
}

// service adds what Spice's Flight service does beyond Flight SQL: a DoGet whose
// ticket is not a Flight SQL message runs the ticket as SQL.
type service struct {
	flight.FlightServer
	rt *runtime
}

func (v service) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	var a anypb.Any
	if proto.Unmarshal(t.GetTicket(), &a) == nil && strings.HasPrefix(a.GetTypeUrl(), "type.googleapis.com/arrow.flight.protocol.sql.") {
		return v.FlightServer.DoGet(t, stream)
	}
	ctx := stream.Context()
	if err := v.rt.called(ctx, string(t.GetTicket())); err != nil {
		return err
	}
	schema, ch, err := v.rt.answer(ctx)
	if err != nil {
		return err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(schema))
	defer w.Close()
	for c := range ch {
		err := w.Write(c.Data)
		c.Data.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// register puts rt on srv.
func register(srv flight.Server, rt *runtime) {
	srv.RegisterFlightService(service{FlightServer: flightsql.NewFlightServer(rt), rt: rt})
}

// MustServe starts rt on localhost:0 and returns its address.
func MustServe(tb testing.TB, rt *runtime) string {
	tb.Helper()
	srv := flight.NewServerWithMiddleware(nil)
	register(srv, rt)
	if err := srv.Init("localhost:0"); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	tb.Cleanup(srv.Shutdown)
	return srv.Addr().String()
}

// set changes the answer and its position.
func (s *runtime) set(pos, rows string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pos, s.rows = pos, rows
}

// protocols are the ways a Flight reads; tests of what the api sees run on each.
var protocols = []string{ranking.ProtocolFlight, ranking.ProtocolFlightSQL}

// MustOpen opens a Flight reader (default protocol) with a checked allocator that
// must be empty when the test ends.
func MustOpen(tb testing.TB, addr string) *ranking.Flight {
	tb.Helper()
	return MustOpenQuery(tb, addr, ranking.AcceleratedQuery, "")
}

// MustOpenQuery is MustOpen for another query and protocol.
func MustOpenQuery(tb testing.TB, addr, query, protocol string) *ranking.Flight {
	tb.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	f := ranking.NewFlight("accelerated runtime", addr, query)
	f.Alloc = alloc
	f.Protocol = protocol
	if err := f.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := f.Close(); err != nil {
			tb.Error(err)
		}
		alloc.AssertSize(tb, 0)
	})
	return f
}

func newRuntime(tb testing.TB, count arrow.DataType, rows string) *runtime {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	tb.Cleanup(func() { alloc.AssertSize(tb, 0) })
	return &runtime{
		alloc: alloc,
		schema: arrow.NewSchema([]arrow.Field{
			{Name: "name", Type: arrow.BinaryTypes.String},
			{Name: "count", Type: count, Nullable: true},
		}, nil),
		rows:  rows,
		pos:   "0/16B3748",
		cache: "MISS",
	}
}

func TestFlight_Ranking(t *testing.T) {
	for _, tt := range []struct {
		name  string
		count arrow.DataType
		rows  string
	}{
		{"int64", arrow.PrimitiveTypes.Int64, `[{"name":"b","count":30},{"name":"a","count":7},{"name":"c","count":null}]`},
		{"int32", arrow.PrimitiveTypes.Int32, `[{"name":"b","count":30},{"name":"a","count":7},{"name":"c","count":null}]`},
		{"decimal128 (DuckDB's SUM)", &arrow.Decimal128Type{Precision: 38, Scale: 0}, `[{"name":"b","count":"30"},{"name":"a","count":"7"},{"name":"c","count":null}]`},
		{"decimal128 scale 2", &arrow.Decimal128Type{Precision: 38, Scale: 2}, `[{"name":"b","count":"30.00"},{"name":"a","count":"7"},{"name":"c","count":null}]`},
		{"decimal256", &arrow.Decimal256Type{Precision: 76, Scale: 0}, `[{"name":"b","count":"30"},{"name":"a","count":"7"},{"name":"c","count":null}]`},
		{"float64", arrow.PrimitiveTypes.Float64, `[{"name":"b","count":30},{"name":"a","count":7},{"name":"c","count":null}]`},
	} {
		for _, protocol := range protocols {
			t.Run(tt.name+"/"+protocol, func(t *testing.T) {
				rt := newRuntime(t, tt.count, tt.rows)
				f := MustOpenQuery(t, MustServe(t, rt), ranking.AcceleratedQuery, protocol)
				res, err := f.Ranking(context.Background(), ranking.Request{})
				if err != nil {
					t.Fatal(err)
				}
				want := []ranking.Row{{Name: "b", Count: 30}, {Name: "a", Count: 7}, {Name: "c", Count: 0}}
				if got := res.Rows; !equalRows(got, want) {
					t.Fatalf("rows=%v, want %v", got, want)
				}
				if got, want := res.Position, position.LSN(0x16B3748); got != want {
					t.Fatalf("position=%s, want %s", got, want)
				}
				if got, want := res.CacheStatus, "MISS"; got != want {
					t.Fatalf("cache status=%q, want %q", got, want)
				}
				if got, want := rt.query, ranking.AcceleratedQuery; got != want {
					t.Fatalf("query=%q, want %q", got, want)
				}
			})
		}
	}
}

func TestFlight_Ranking_ForwardsMinPositionAndNoCache(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) { testForwards(t, protocol) })
	}
}

func testForwards(t *testing.T, protocol string) {
	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[]`)
	f := MustOpenQuery(t, MustServe(t, rt), ranking.AcceleratedQuery, protocol)
	res, err := f.Ranking(context.Background(), ranking.Request{MinPosition: 0x1_0000_00FF, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Rows), 0; got != want {
		t.Fatalf("rows=%d, want %d", got, want)
	}
	if got, want := strings.Join(rt.md.Get(wire.MetadataMinPosition), ","), "1/FF"; got != want {
		t.Fatalf("spice-min-position=%q, want %q", got, want)
	}
	if got, want := strings.Join(rt.md.Get(wire.MetadataCacheControl), ","), "no-cache"; got != want {
		t.Fatalf("cache-control=%q, want %q", got, want)
	}
}

func TestFlight_Ranking_NoPositionHeader(t *testing.T) {
	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[{"name":"a","count":1}]`)
	rt.pos = ""
	f := MustOpen(t, MustServe(t, rt))
	res, err := f.Ranking(context.Background(), ranking.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Position.IsZero() || res.CacheStatus != "" {
		t.Fatalf("position=%s cache=%q, want unknown and none", res.Position, res.CacheStatus)
	}
}

func TestFlight_Ranking_Errors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		schema   *arrow.Schema
		rows     string
		kind     error
		contains string
	}{
		{
			name:     "not ready",
			err:      status.Error(codes.Unavailable, "dataset orders is not ready (loading)"),
			kind:     ranking.ErrUnavailable,
			contains: "accelerated runtime at ADDR is unavailable: dataset orders is not ready (loading)",
		},
		{
			name:     "min position not reached",
			err:      status.Error(codes.DeadlineExceeded, "position 0/FF not reached after 10s"),
			kind:     ranking.ErrTimeout,
			contains: "accelerated runtime at ADDR did not answer in time: position 0/FF not reached after 10s",
		},
		{
			name:     "query refused",
			err:      status.Error(codes.InvalidArgument, "table rankings does not exist"),
			kind:     ranking.ErrBadAnswer,
			contains: "table rankings does not exist (InvalidArgument)",
		},
		{
			name:     "missing column",
			schema:   arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, nil),
			rows:     `[{"name":"a"}]`,
			kind:     ranking.ErrBadAnswer,
			contains: "want columns name and count",
		},
		{
			name:     "count not an integer",
			schema:   arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}, {Name: "count", Type: arrow.PrimitiveTypes.Float64}}, nil),
			rows:     `[{"name":"a","count":1.5}]`,
			kind:     ranking.ErrBadAnswer,
			contains: "row 1: count 1.5 is not an integer",
		},
		{
			name:     "count a string",
			schema:   arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}, {Name: "count", Type: arrow.BinaryTypes.String}}, nil),
			rows:     `[{"name":"a","count":"1"}]`,
			kind:     ranking.ErrBadAnswer,
			contains: "column count has type utf8",
		},
	} {
		for _, protocol := range protocols {
			t.Run(tt.name+"/"+protocol, func(t *testing.T) {
				rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[]`)
				rt.err = tt.err
				if tt.schema != nil {
					rt.schema, rt.rows = tt.schema, tt.rows
				}
				addr := MustServe(t, rt)
				f := MustOpenQuery(t, addr, ranking.AcceleratedQuery, protocol)
				_, err := f.Ranking(context.Background(), ranking.Request{})
				if !errors.Is(err, tt.kind) {
					t.Fatalf("err=%v, want %v", err, tt.kind)
				}
				var se *ranking.SourceError
				if !errors.As(err, &se) {
					t.Fatalf("err=%T, want *ranking.SourceError", err)
				}
				if want := strings.ReplaceAll(tt.contains, "ADDR", addr); !strings.Contains(err.Error(), want) {
					t.Fatalf("err=%q, want it to contain %q", err, want)
				}
			})
		}
	}
}

func TestFlight_Ranking_Unreachable(t *testing.T) {
	f := MustOpen(t, "127.0.0.1:1")
	_, err := f.Ranking(context.Background(), ranking.Request{})
	if !errors.Is(err, ranking.ErrUnavailable) {
		t.Fatalf("err=%v, want ErrUnavailable", err)
	}
	if want := "accelerated runtime at 127.0.0.1:1 is unavailable: "; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err=%q, want prefix %q", err, want)
	}
	if err := f.Ping(context.Background()); !errors.Is(err, ranking.ErrUnavailable) {
		t.Fatalf("ping err=%v, want ErrUnavailable", err)
	}
}

func TestFlight_Ranking_RuntimeComesBack(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	f := MustOpen(t, addr)
	for range 3 { // several failures, so gRPC backs off
		if _, err := f.Ranking(context.Background(), ranking.Request{}); !errors.Is(err, ranking.ErrUnavailable) {
			t.Fatalf("err=%v, want ErrUnavailable while nothing listens", err)
		}
	}

	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[{"name":"a","count":1}]`)
	srv := flight.NewServerWithMiddleware(nil)
	register(srv, rt)
	if err := srv.Init(addr); err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	go func() { _ = srv.Serve() }()
	defer srv.Shutdown()
	// The same client recovers on its own, well before gRPC's default two-minute
	// backoff cap; the bound only keeps a broken build from hanging.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := f.Ranking(context.Background(), ranking.Request{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after the runtime came back: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestFlight_Ranking_Timeout(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) { testTimeout(t, protocol) })
	}
}

func testTimeout(t *testing.T, protocol string) {
	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[]`)
	rt.delay = time.Minute
	f := MustOpenQuery(t, MustServe(t, rt), ranking.AcceleratedQuery, protocol)
	f.Timeout = 50 * time.Millisecond
	_, err := f.Ranking(context.Background(), ranking.Request{})
	if !errors.Is(err, ranking.ErrTimeout) {
		t.Fatalf("err=%v, want ErrTimeout", err)
	}
	if want := "no answer within 50ms"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err=%q, want it to contain %q", err, want)
	}
}

func TestFlight_Ranking_CallerCancels(t *testing.T) {
	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[]`)
	rt.delay = time.Minute
	f := MustOpen(t, MustServe(t, rt))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := f.Ranking(ctx, ranking.Request{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	var se *ranking.SourceError
	if errors.As(err, &se) {
		t.Fatalf("err=%v: the caller's cancellation is not the runtime's failure", err)
	}
}

func equalRows(a, b []ranking.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFlight_Ranking_ReusesAnUnchangedAnswer: an answer that arrives as the
// same bytes as the last one is not decoded again (the rows are the same slice),
// while its position is still its own; a changed answer is decoded.
func TestFlight_Ranking_ReusesAnUnchangedAnswer(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[{"name":"b","count":30},{"name":"a","count":7}]`)
			f := MustOpenQuery(t, MustServe(t, rt), ranking.AcceleratedQuery, protocol)
			read := func() ranking.Result {
				t.Helper()
				res, err := f.Ranking(context.Background(), ranking.Request{})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := read()
			rt.set("0/16B3800", `[{"name":"b","count":30},{"name":"a","count":7}]`) // a new position, same rows
			again := read()
			if &again.Rows[0] != &first.Rows[0] {
				t.Error("the same answer was decoded again")
			}
			if got, want := again.Position, position.LSN(0x16B3800); got != want {
				t.Errorf("position of the same answer=%s, want %s", got, want)
			}
			rt.set("0/16B3900", `[{"name":"a","count":40},{"name":"b","count":30}]`)
			changed := read()
			if want := []ranking.Row{{Name: "a", Count: 40}, {Name: "b", Count: 30}}; !equalRows(changed.Rows, want) {
				t.Fatalf("rows after a change=%v, want %v", changed.Rows, want)
			}
			if want := []ranking.Row{{Name: "b", Count: 30}, {Name: "a", Count: 7}}; !equalRows(first.Rows, want) {
				t.Fatalf("an earlier answer's rows changed to %v, want %v", first.Rows, want)
			}
			if got, want := changed.Position, position.LSN(0x16B3900); got != want {
				t.Errorf("position after a change=%s, want %s", got, want)
			}
		})
	}
}

// TestFlight_Ranking_Coalesce: reads that arrive while a call is in flight
// share the next call, not the one in flight, which may have started before a
// write they must see: every read gets an answer from a call that started after
// it arrived.
func TestFlight_Ranking_Coalesce(t *testing.T) {
	rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[{"name":"b","count":30}]`)
	rt.gate, rt.entered, rt.numbered = make(chan struct{}), make(chan struct{}, 100), true
	f := MustOpenQuery(t, MustServe(t, rt), ranking.AcceleratedQuery, "")
	f.Coalesce = true

	type answer struct {
		res ranking.Result
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := f.Ranking(context.Background(), ranking.Request{})
		first <- answer{res, err}
	}()
	<-rt.entered // call 1 is in flight
	const n = 8
	rest := make(chan answer, n)
	for range n {
		go func() {
			res, err := f.Ranking(context.Background(), ranking.Request{})
			rest <- answer{res, err}
		}()
	}
	for ranking.Waiting(f, ranking.Request{}) < n {
		time.Sleep(time.Millisecond) // until all of them wait
	}
	close(rt.gate)
	a := <-first
	if a.err != nil {
		t.Fatal(a.err)
	}
	if got, want := a.res.Position, position.LSN(1); got != want {
		t.Errorf("first read: position=%s, want %s (call 1)", got, want)
	}
	for range n {
		a := <-rest
		if a.err != nil {
			t.Fatal(a.err)
		}
		if got, want := a.res.Position, position.LSN(2); got != want {
			t.Errorf("a read that arrived during call 1: position=%s, want %s (call 2)", got, want)
		}
		if want := []ranking.Row{{Name: "b", Count: 30}}; !equalRows(a.res.Rows, want) {
			t.Errorf("rows=%v, want %v", a.res.Rows, want)
		}
	}
	rt.mu.Lock()
	calls := rt.calls
	rt.mu.Unlock()
	if got, want := calls, 2; got != want {
		t.Errorf("calls=%d, want %d for %d reads", got, want, n+1)
	}

	// A read alone makes its own call at once.
	res, err := f.Ranking(context.Background(), ranking.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Position, position.LSN(3); got != want {
		t.Errorf("read alone: position=%s, want %s", got, want)
	}
}
