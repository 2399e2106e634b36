package apikey

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Defaults of Throttle.
const (
	// DefaultBurst is how many wrong keys a source may send before it is
	// slowed down.
	DefaultBurst = 10
	// DefaultRefill is how often a slowed-down source regains one attempt:
	// one wrong key a second at most, about 86,000 guesses a day.
	DefaultRefill = time.Second
	// DefaultLogInterval is the least time between two log lines about one
	// source.
	DefaultLogInterval = time.Minute
	// DefaultMaxSources bounds the sources remembered; beyond it the ones
	// with a full budget and nothing left to log are forgotten first.
	DefaultMaxSources = 10000
)

// Throttle slows down sources that present wrong API keys, on the HTTP and
// Flight ports alike, and logs them. Each source (an IPv4 address, or an IPv6
// /64 network) has a budget of Burst wrong keys, which grows back by one every
// Refill; a source whose budget is spent is refused before its credentials are
// checked (HTTP 429, gRPC RESOURCE_EXHAUSTED), with the time to wait, until
// the budget has grown back. Clients behind one address share a budget.
// Calls without credentials cost nothing. One line per source is logged at
// warn level at most every LogInterval, counting the wrong keys and refusals
// since the line before. Zero fields take the Default* values; the zero value
// is ready to use and safe for concurrent use.
type Throttle struct {
	Burst       int
	Refill      time.Duration
	LogInterval time.Duration
	MaxSources  int
	// Logger receives the lines; slog.Default() when nil.
	Logger *slog.Logger

	mu      sync.Mutex
	sources map[netip.Prefix]*source
	swept   time.Time
}

// source is one address's budget and what it has done since its last line.
type source struct {
	tokens  float64
	at      time.Time // when tokens was last brought up to date
	logged  time.Time // last line about it
	wrong   int       // wrong keys since that line
	refused int       // calls refused while the budget was spent
}

// Log attribute keys: the address (or IPv6 /64), the wrong keys and refused
// calls since the line before, the port.
const (
	logSource  = "source"
	logPort    = "port"
	logWrong   = "wrong_keys"
	logRefused = "refused"
)

// Allow reports whether the source at addr (host:port or a bare address) may
// present credentials now; when it may not, wait says when it may again, and
// the refusal is counted. port names the server in the log ("http", "flight").
func (t *Throttle) Allow(addr, port string, now time.Time) (wait time.Duration, ok bool) {
	key, valid := sourceOf(addr)
	if !valid {
		return 0, true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sources[key]
	if s == nil {
		return 0, true
	}
	t.refill(s, now)
	if s.tokens >= 1 {
		return 0, true
	}
	s.refused++
	t.maybeLog(key, s, port, now)
	return time.Duration((1 - s.tokens) * float64(t.refillEvery())), false
}

// Failed records a wrong key from addr.
func (t *Throttle) Failed(addr, port string, now time.Time) {
	key, valid := sourceOf(addr)
	if !valid {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	s := t.sources[key]
	if s == nil {
		if t.sources == nil {
			t.sources = map[netip.Prefix]*source{}
		}
		if len(t.sources) >= t.maxSources() {
			return // remembered sources are all busy: this one goes unthrottled
		}
		s = &source{tokens: float64(t.burst()), at: now}
		t.sources[key] = s
	}
	t.refill(s, now)
	s.tokens = max(0, s.tokens-1)
	s.wrong++
	t.maybeLog(key, s, port, now)
}

func (t *Throttle) refill(s *source, now time.Time) {
	if now.After(s.at) {
		s.tokens = min(float64(t.burst()), s.tokens+float64(now.Sub(s.at))/float64(t.refillEvery()))
		s.at = now
	}
}

// maybeLog writes the source's line when its last one is LogInterval old.
func (t *Throttle) maybeLog(key netip.Prefix, s *source, port string, now time.Time) {
	if !s.logged.IsZero() && now.Sub(s.logged) < t.logInterval() {
		return
	}
	t.log(key, s, port)
	s.logged = now
}

func (t *Throttle) log(key netip.Prefix, s *source, port string) {
	if s.wrong == 0 && s.refused == 0 {
		return
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.Default()
	}
	attrs := []any{logSource, sourceName(key), logWrong, s.wrong, logRefused, s.refused}
	if port != "" {
		attrs = append(attrs, logPort, port)
	}
	logger.Warn(fmt.Sprintf("wrong API keys (an address that sends %d gets one attempt every %s, refused before its key is checked)",
		t.burst(), t.refillEvery()), attrs...)
	s.wrong, s.refused = 0, 0
}

// sweep, at most once per LogInterval, logs what sources did since their last
// line once that line is LogInterval old, and forgets those whose budget has
// grown back whole.
func (t *Throttle) sweep(now time.Time) {
	if now.Sub(t.swept) < t.logInterval() && len(t.sources) < t.maxSources() {
		return
	}
	t.swept = now
	for key, s := range t.sources {
		t.refill(s, now)
		if now.Sub(s.logged) >= t.logInterval() {
			t.log(key, s, "")
			s.logged = now
		}
		if s.tokens >= float64(t.burst()) && s.wrong == 0 && s.refused == 0 {
			delete(t.sources, key)
		}
	}
}

// Sources is how many sources the throttle remembers.
func (t *Throttle) Sources() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sources)
}

// sourceOf maps an address to its source: the IPv4 address, or the IPv6 /64.
func sourceOf(addr string) (netip.Prefix, bool) {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

func sourceName(p netip.Prefix) string {
	if p.Addr().Is4() {
		return p.Addr().String()
	}
	return p.String()
}

func (t *Throttle) burst() int {
	if t.Burst <= 0 {
		return DefaultBurst
	}
	return t.Burst
}

func (t *Throttle) refillEvery() time.Duration {
	if t.Refill <= 0 {
		return DefaultRefill
	}
	return t.Refill
}

func (t *Throttle) logInterval() time.Duration {
	if t.LogInterval <= 0 {
		return DefaultLogInterval
	}
	return t.LogInterval
}

func (t *Throttle) maxSources() int {
	if t.MaxSources <= 0 {
		return DefaultMaxSources
	}
	return t.MaxSources
}
