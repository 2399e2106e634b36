package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// Query is one read.
type Query struct {
	// SQL is one SELECT statement in DuckDB's dialect.
	SQL string
	// Args bind the statement's placeholders (prepared statements).
	Args []any
	// MinPosition, when set, asks for an answer that reflects at least this source
	// position: the engine waits up to MinPositionTimeout for it.
	MinPosition position.LSN
	// NoCache bypasses the results cache.
	NoCache bool
}

// QueryError is a problem with the query itself (bad SQL, a refused statement,
// an unknown table): the client must change the query.
type QueryError struct{ Err error }

func (e *QueryError) Error() string { return e.Err.Error() }
func (e *QueryError) Unwrap() error { return e.Err }

// plan is what the engine keeps of a parsed query text.
type plan struct {
	names []string
	// light: reads nothing but tables (see Admission); cost then decides its
	// lane.
	light bool
	cost  atomic.Int32
}

// Costs of a text's last run, which decide its lane (see Admission).
const (
	costUnknown int32 = iota // never ran: on trial
	costCheap                // ended within LightBudget
	costSlow                 // ran longer, or was moved to the heavy lane
)

// laneOf is the lane a query of p starts in; shapeHeavy says that what it
// reads makes it heavy whatever its text's history.
func laneOf(p *plan, shapeHeavy bool) lane {
	if shapeHeavy || !p.light {
		return laneHeavy
	}
	switch p.cost.Load() {
	case costCheap:
		return laneLight
	case costSlow:
		return laneHeavy
	}
	return laneTrial
}

// Query answers q. The result carries the position it reflects and whether it came
// from the results cache; the caller releases it. QueryTimeout counts from here.
func (e *Engine) Query(ctx context.Context, q Query) (res *Result, err error) {
	start := time.Now()
	defer func() {
		if e.Metrics != nil {
			e.Metrics.observeQuery(time.Since(start), err)
		}
	}()
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if max := e.maxQueryBytes(); len(q.SQL) > max {
		return nil, fmt.Errorf("%w: %d bytes, more than the limit of %d; send a shorter query (bind values as parameters)", ErrQueryTooLarge, len(q.SQL), max)
	}
	timeout := e.QueryTimeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrQueryTimeout) && !errors.Is(err, ErrPositionTimeout) {
			err = fmt.Errorf("%w: not answered within %s of its arrival (waiting for a query slot included); make the query cheaper, add a LIMIT, or retry when the runtime is less busy",
				ErrQueryTimeout, timeout)
		}
	}()
	p, err := e.planOf(ctx, q.SQL)
	if err != nil {
		return nil, &QueryError{Err: err}
	}
	deps, federated, known, err := e.resolveQuery(p.names)
	if err != nil {
		return nil, err
	}
	adm := admit{plan: p, heavy: !known || len(federated) > 0 || len(deps) == 0}
	pos, versions, err := e.waitPosition(ctx, deps, q.MinPosition)
	if err != nil {
		return nil, err
	}
	cacheable := e.Cache != nil && !q.NoCache && len(federated) == 0
	if cacheable {
		return e.cached(ctx, q, adm, cacheKey(q, versions), deps, pos)
	}
	return e.execute(ctx, q, adm, deps, federated, pos)
}

// PlanBytes is the size of the parsed-query cache, texts included; it stays
// within PlanCacheBytes.
func (e *Engine) PlanBytes() int64 { return e.plans.Bytes() }

func (e *Engine) maxQueryBytes() int {
	if e.MaxQueryBytes > 0 {
		return e.MaxQueryBytes
	}
	return DefaultMaxQueryBytes
}

// cached answers from the results cache. Concurrent misses of one key run the
// query once: after a write invalidates an entry, a hundred readers of the same
// query cost one execution, not a hundred. The cache holds its own reference to the
// result, so every waiter takes its copy from there.
func (e *Engine) cached(ctx context.Context, q Query, adm admit, key string, deps []string, pos position.LSN) (*Result, error) {
	if hit := e.Cache.Get(key); hit != nil {
		hit.Position, hit.Cache = pos, CacheHit
		return hit, nil
	}
	_, err, _ := e.inflight.Do(key, func() (any, error) {
		res, err := e.execute(ctx, q, adm, deps, nil, pos)
		if err != nil {
			return nil, err
		}
		e.Cache.Put(key, res)
		res.Release()
		return nil, nil
	})
	if err != nil {
		// The leader's request ended (its client went away): not ours to fail.
		if ctx.Err() != nil || !(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return nil, err
		}
	}
	if res := e.Cache.Peek(key); res != nil {
		res.Position, res.Cache = pos, CacheMiss
		return res, nil
	}
	// Not cacheable after all (too large for the cache): run it for this caller.
	res, err := e.execute(ctx, q, adm, deps, nil, pos)
	if err != nil {
		return nil, err
	}
	res.Cache = CacheMiss
	return res, nil
}

// execute runs q in the store, reading federated datasets from their sources.
func (e *Engine) execute(ctx context.Context, q Query, adm admit, deps, federated []string, pos position.LSN) (*Result, error) {
	temp, err := e.readSources(ctx, federated)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, rd := range temp {
			rd.Release()
		}
	}()
	res, err := e.run(ctx, adm, StoreQuery{SQL: q.SQL, Args: q.Args, Temp: temp})
	if err != nil {
		return nil, err
	}
	if res.Rows == 0 && len(federated) == 0 {
		if fb := e.zeroResultSources(deps); len(fb) > 0 {
			res.Release()
			return e.querySources(ctx, q, adm.plan, fb, pos)
		}
	}
	res.Position, res.Cache = pos, CacheBypass
	return res, nil
}

// zeroResultSources returns the deps whose spicepod says on_zero_results:
// use_source.
func (e *Engine) zeroResultSources(deps []string) []string {
	var out []string
	for _, n := range deps {
		if d, ok := e.datasets[n]; ok && d.src != nil && d.spec.Accelerated() && d.spec.Acceleration.OnZeroResults == spicepod.ZeroResultsUseSource {
			out = append(out, n)
		}
	}
	return out
}

// querySources answers q with the named datasets read from their sources. The
// answer reflects the sources' present, at least pos.
func (e *Engine) querySources(ctx context.Context, q Query, p *plan, names []string, pos position.LSN) (*Result, error) {
	temp, err := e.readSources(ctx, names)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, rd := range temp {
			rd.Release()
		}
	}()
	res, err := e.run(ctx, admit{plan: p, heavy: true}, StoreQuery{SQL: q.SQL, Args: q.Args, Temp: temp})
	if err != nil {
		return nil, err
	}
	res.Position, res.Cache = pos, CacheBypass
	return res, nil
}

// admit is what admission needs of a query: its text's plan, and whether what
// it reads makes it heavy.
type admit struct {
	plan  *plan
	heavy bool
}

// errLightBudget stops a query that outran LightBudget in a light slot while
// the heavy lane was full; it runs again there.
var errLightBudget = errors.New("ran past the light lane's budget")

// run runs one store query in its admission lane, moving it to the heavy lane
// when it outruns LightBudget in a light slot (see Admission). Errors about the
// query itself become QueryErrors; limits (ErrResultTooLarge, ErrQueryTimeout,
// ErrBusy) and context errors pass through for the servers to map.
func (e *Engine) run(ctx context.Context, adm admit, sq StoreQuery) (*Result, error) {
	sq.MaxBytes, sq.User = e.MaxResultBytes, true
	ln := laneOf(adm.plan, adm.heavy)
	for {
		s, err := e.Admission.acquire(ctx, ln)
		if err != nil {
			return nil, err
		}
		res, stopped, err := e.runIn(ctx, s, adm, sq)
		if stopped {
			e.Admission.restarted.Add(1)
			ln = laneHeavy
			continue
		}
		if err != nil {
			var qe *QueryError
			switch {
			case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
				errors.Is(err, ErrResultTooLarge), errors.Is(err, ErrQueryTimeout), errors.Is(err, ErrBusy),
				errors.As(err, &qe):
				return nil, err
			}
			return nil, &QueryError{Err: err}
		}
		return res, nil
	}
}

// runIn runs sq holding s and records what the run cost. In a light slot a
// timer watches the run: at LightBudget it moves the query to the heavy lane,
// or stops it when the heavy lane is full (stopped: run it again there).
func (e *Engine) runIn(ctx context.Context, s *slot, adm admit, sq StoreQuery) (res *Result, stopped bool, err error) {
	defer s.release()
	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if s.light() {
		watch := time.AfterFunc(e.Admission.LightBudget, func() {
			adm.plan.cost.Store(costSlow)
			if !s.moveHeavy() {
				cancel(errLightBudget)
			}
		})
		defer watch.Stop()
	}
	start := time.Now()
	res, err = e.store.Query(qctx, sq)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(qctx), errLightBudget) {
		return nil, true, nil
	}
	if err == nil && !adm.heavy && adm.plan.light {
		if time.Since(start) <= e.Admission.LightBudget {
			adm.plan.cost.Store(costCheap)
		} else {
			adm.plan.cost.Store(costSlow)
		}
	}
	return res, false, err
}

// planOf parses a query text, once per distinct text while it stays in the
// byte-bounded plan cache.
func (e *Engine) planOf(ctx context.Context, sql string) (*plan, error) {
	if p, ok := e.plans.Get(sql); ok {
		return p, nil
	}
	var parsed Parsed
	if ps, ok := e.store.(Parser); ok {
		var err error
		if parsed, err = ps.Parse(ctx, sql); err != nil {
			return nil, err
		}
	} else {
		names, err := e.store.Tables(ctx, sql)
		if err != nil {
			return nil, err
		}
		parsed = Parsed{Tables: names, TableFunctions: true}
	}
	p := &plan{names: parsed.Tables, light: !parsed.TableFunctions}
	size := int64(64)
	for i, n := range p.names {
		p.names[i] = strings.ToLower(n)
		size += int64(len(n)) + 16
	}
	e.plans.Add(sql, p, size)
	return p, nil
}

// resolveQuery maps the names a query reads to the datasets and accelerated views
// whose watermarks it reflects, and the datasets to read from their source
// because their acceleration is not loaded (ready_state: on_registration) or
// absent. A dataset that is not loaded otherwise fails the query with a
// NotReadyError.
//
// known reports whether every name is a dataset or view (not a CTE, a table
// function or a name DuckDB resolves itself).
func (e *Engine) resolveQuery(names []string) (deps, federated []string, known bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	known = true
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			deps = append(deps, n)
		}
	}
	for _, n := range names {
		if d, ok := e.datasets[n]; ok {
			switch {
			case d.loaded && d.spec.Accelerated():
				add(n)
			case !d.spec.Accelerated() || d.spec.ReadyState == spicepod.ReadyOnRegistration:
				if !seen["src:"+n] {
					seen["src:"+n] = true
					federated = append(federated, n)
				}
			default:
				return nil, nil, false, &NotReadyError{Dataset: n, State: d.state, Cause: d.lastErr}
			}
			continue
		}
		v, ok := e.views[n]
		if !ok {
			known = false
			continue // a CTE, a table function, or unknown: DuckDB decides
		}
		if !v.loaded() {
			for _, dep := range v.deps {
				if d, ok := e.datasets[dep]; ok && !d.loaded {
					return nil, nil, false, &NotReadyError{Dataset: dep, State: d.state, Cause: d.lastErr}
				}
			}
			return nil, nil, false, &NotReadyError{Dataset: n, State: v.state, Cause: v.lastErr}
		}
		if v.accelerated() {
			add(n)
			continue
		}
		for _, dep := range v.deps {
			add(dep)
		}
	}
	return deps, federated, known, nil
}

// waitPosition waits until every dep reflects at least want (when set) and returns
// the least watermark and the data versions of the deps, read together.
func (e *Engine) waitPosition(ctx context.Context, deps []string, want position.LSN) (position.LSN, []uint64, error) {
	var timer <-chan time.Time
	for {
		e.mu.Lock()
		pos := e.minWatermarkLocked(deps)
		if want == 0 || len(deps) == 0 || pos >= want {
			versions := make([]uint64, len(deps))
			for i, n := range deps {
				if d, ok := e.datasets[n]; ok {
					versions[i] = d.version
				} else if v, ok := e.views[n]; ok {
					versions[i] = v.version
				}
			}
			e.mu.Unlock()
			return pos, versions, nil
		}
		lagging := deps[0]
		for _, n := range deps {
			if wm := e.minWatermarkLocked([]string{n}); wm < want {
				lagging = n
				break
			}
		}
		changed := e.changed
		e.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(e.MinPositionTimeout)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-changed:
		case <-timer:
			return 0, nil, &PositionError{Want: want, Have: pos, Dataset: lagging, Waited: e.MinPositionTimeout.String()}
		case <-ctx.Done():
			return 0, nil, &PositionError{Want: want, Have: pos, Dataset: lagging, Waited: "the request's deadline"}
		}
	}
}

// readSources reads datasets that are not loaded from their source, whole.
func (e *Engine) readSources(ctx context.Context, names []string) (map[string]array.RecordReader, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := map[string]array.RecordReader{}
	for _, n := range names {
		d := e.datasets[n]
		if d.src == nil {
			return nil, &NotReadyError{Dataset: n, State: d.state, Cause: d.lastErr}
		}
		err := d.src.Scan(ctx, ScanRequest{}, func(s Snapshot) error {
			var recs []arrow.RecordBatch
			for s.Reader.Next() {
				rec := s.Reader.RecordBatch()
				rec.Retain()
				recs = append(recs, rec)
			}
			if err := s.Reader.Err(); err != nil {
				for _, r := range recs {
					r.Release()
				}
				return err
			}
			rd, err := array.NewRecordReader(s.Reader.Schema(), recs)
			for _, r := range recs {
				r.Release()
			}
			if err != nil {
				return err
			}
			out[n] = rd
			return nil
		})
		if err != nil {
			for _, rd := range out {
				rd.Release()
			}
			return nil, fmt.Errorf("read %s from its source: %w", n, err)
		}
	}
	return out, nil
}

func cacheKey(q Query, versions []uint64) string {
	var b strings.Builder
	b.WriteString(q.SQL)
	for _, a := range q.Args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	b.WriteString("\x00v")
	for _, v := range versions {
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(v, 10))
	}
	return b.String()
}
