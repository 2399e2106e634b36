package spicepod

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// durationUnits are the units upstream's duration parser (fundu's defaults)
// accepts, plus Go's us and µs. Ms is fundu's microsecond.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"µs": time.Microsecond,
	"μs": time.Microsecond,
	"Ms": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
	"d":  24 * time.Hour,
	"w":  7 * 24 * time.Hour,
}

var durationPart = regexp.MustCompile(`^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|Ms|ms|s|m|h|d|w)`)

// ParseDuration parses a spicepod duration. It accepts what upstream accepts
// (a number with one unit: 500ms, 10s, 1.5m, 1h, 1d, 2w; a bare number is
// seconds) and Go's compound form (1h30m). Units: ns, us (µs, Ms), ms, s, m,
// h, d, w. Negative durations and exponents are refused.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%q is not a duration (%s); write a number and a unit such as 500ms, 10s, 5m, 1h or 1d", s, why)
	}
	if in == "" {
		return bad("it is empty")
	}
	if strings.HasPrefix(in, "-") {
		return bad("it is negative")
	}
	in = strings.TrimPrefix(in, "+")
	total := new(big.Rat)
	if plainNumber.MatchString(in) {
		r, _ := new(big.Rat).SetString(in)
		total.Mul(r, big.NewRat(int64(time.Second), 1))
	} else {
		for rest := in; rest != ""; {
			m := durationPart.FindStringSubmatch(rest)
			if m == nil {
				return bad("unknown unit or stray text at " + fmt.Sprintf("%q", rest))
			}
			num, _ := new(big.Rat).SetString(m[1])
			total.Add(total, num.Mul(num, big.NewRat(int64(durationUnits[m[2]]), 1)))
			rest = rest[len(m[0]):]
		}
	}
	n, ok := truncate(total)
	if !ok {
		return bad("it is too large")
	}
	return time.Duration(n), nil
}

// plainNumber matches a bare decimal number without exponent.
var plainNumber = regexp.MustCompile(`^(\d+(\.\d*)?|\.\d+)$`)

// truncate rounds r toward zero; ok is false when it does not fit an int64.
func truncate(r *big.Rat) (n int64, ok bool) {
	q := new(big.Int).Quo(r.Num(), r.Denom())
	return q.Int64(), q.IsInt64()
}

// byteUnits maps a lower-case unit to its multiplier: SI for KB/MB/...,
// binary for KiB/MiB/..., as upstream's byte_unit parses them.
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
	"p": 1e15, "pb": 1e15, "pi": 1 << 50, "pib": 1 << 50,
}

var byteSize = regexp.MustCompile(`^(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)$`)

// ParseByteSize parses a size in bytes: a plain number, or a number with a
// unit, case-insensitive: KB, MB, GB, TB, PB (powers of 1000) or KiB, MiB,
// GiB, TiB, PiB (powers of 1024); "128MiB", "1GiB", "512MB", "1048576".
// Fractions are rounded down to whole bytes.
func ParseByteSize(s string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("%q is not a size (%s); write bytes or a number with a unit such as 512MB, 128MiB or 1GiB", s, why)
	}
	m := byteSize.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		if strings.HasPrefix(strings.TrimSpace(s), "-") {
			return bad("it is negative")
		}
		return bad("it is not a number and a unit")
	}
	mult, ok := byteUnits[strings.ToLower(m[2])]
	if !ok {
		return bad("unknown unit " + fmt.Sprintf("%q", m[2]))
	}
	r, _ := new(big.Rat).SetString(m[1])
	n, ok := truncate(r.Mul(r, big.NewRat(mult, 1)))
	if !ok {
		return bad("it is too large")
	}
	return n, nil
}
