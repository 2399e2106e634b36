package parsetree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseJSON reads a JSON document, keeping numbers as their text.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(quoteNonFinite(data)))
	dec.UseNumber() // locations are uint64s that a float64 would round
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the document")
	}
	return v, nil
}

// DuckDB writes the doubles infinity and NaN as the bare words Infinity,
// -Infinity and NaN, which JSON lacks. The decoder reads them as strings
// starting with nonFinite; a float field accepts those.
const nonFinite = "\x00"

var nonFiniteWords = [...]string{"Infinity", "-Infinity", "NaN"}

// quoteNonFinite quotes the non-finite words outside strings.
func quoteNonFinite(data []byte) []byte {
	var out []byte
	last, inString, escaped := 0, false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString:
			escaped, inString = c == '\\', c != '"'
		case c == '"':
			inString = true
		case c == 'I' || c == '-' || c == 'N':
			for _, w := range nonFiniteWords {
				if bytes.HasPrefix(data[i:], []byte(w)) {
					out = append(out, data[last:i]...)
					out = append(out, `"\u0000`+w+`"`...)
					i += len(w) - 1
					last = i + 1
					break
				}
			}
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// parseFloat reads a JSON real: a number with a fraction or an exponent, as
// DuckDB requires of a double, or a non-finite word.
func parseFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		if !bytes.ContainsAny([]byte(x), ".eE") {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string:
		switch x {
		case nonFinite + "Infinity":
			return math.Inf(1), true
		case nonFinite + "-Infinity":
			return math.Inf(-1), true
		case nonFinite + "NaN":
			return math.NaN(), true
		}
	}
	return 0, false
}

// appendFloat writes f as DuckDB's JSON writer (yyjson) does: the shortest
// digits that read back as f, in decimal notation with at least one decimal
// from 1e-6 up to 1e21, in scientific notation without "+" outside.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	}
	if abs := math.Abs(f); abs == 0 || abs >= 1e-6 && abs < 1e21 {
		start := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
		if !bytes.ContainsRune(b[start:], '.') {
			b = append(b, ".0"...)
		}
		return b
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e-07, 1e+21
	mantissa, exp, _ := strings.Cut(s, "e")
	sign := ""
	if exp[0] == '-' {
		sign = "-"
	}
	return append(append(append(append(b, mantissa...), 'e'), sign...), strings.TrimLeft(exp[1:], "0")...)
}

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD, as
// encoding/json writes it.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// numberText is the text of a JSON number, "" for anything else.
func numberText(v any) string {
	n, _ := v.(json.Number)
	return string(n)
}

// jsonKind names the JSON type of a decoded value, for errors.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		if _, ok := parseFloat(x); ok {
			return "a number"
		}
		return "a string"
	case []any:
		return "a list"
	default:
		return "an object"
	}
}

// jsonText shows a scalar decoded value, for errors.
func jsonText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case string:
		if f, ok := parseFloat(x); ok {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return jsonKind(v)
}
