package spicepod

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks the YAML node tree and collects every problem it meets, so a
// user fixes a file in one pass instead of one error per start.
type decoder struct {
	file    string
	dir     string
	allowed []string // directories beyond dir that sql_ref may name
	lookup  func(string) (string, bool)
	stores  map[string]bool // secret store names a ${store:KEY} may use
	errs    []*Error
}

func (d *decoder) fail(line int, comp, field, format string, args ...any) {
	d.failErr(nil, line, comp, field, format, args...)
}

func (d *decoder) failErr(kind error, line int, comp, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{
		File: d.file, Line: line, Component: comp, Field: field,
		Msg: fmt.Sprintf(format, args...), Err: kind,
	})
}

// err returns the collected problems in file order, the first MaxErrors of
// them and then how many more there are.
func (d *decoder) err() error {
	slices.SortStableFunc(d.errs, func(a, b *Error) int { return a.Line - b.Line })
	switch len(d.errs) {
	case 0:
		return nil
	case 1:
		return d.errs[0]
	}
	shown := d.errs[:min(len(d.errs), MaxErrors)]
	errs := make([]error, len(shown), len(shown)+1)
	for i, e := range shown {
		errs[i] = e
	}
	if more := len(d.errs) - len(shown); more > 0 {
		errs = append(errs, &Error{File: d.file, Msg: fmt.Sprintf("...and %d more problems; fix these and run again", more)})
	}
	return errors.Join(errs...)
}

// keySet says which keys a mapping may hold.
type keySet struct {
	known []string // decoded
	// ignored are upstream keys that change nothing this runtime does; they
	// are accepted and their values not inspected.
	ignored []string
	// unsupported are upstream keys this runtime refuses, with a hint.
	unsupported map[string]string
	// data marks mappings whose keys are data (params, column names), so
	// any key is accepted.
	data bool
}

// object is one YAML mapping being decoded, with its place for messages.
type object struct {
	d    *decoder
	comp string // component for messages
	path string // dotted key path of this mapping inside comp
	node *yaml.Node
	vals map[string]*yaml.Node
	keys map[string]*yaml.Node
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// object checks that n is a mapping holding only keys of ks and returns it.
// It returns nil, after reporting, when n is not a mapping.
func (d *decoder) object(n *yaml.Node, comp, path string, ks keySet) *object {
	n = resolve(n)
	o := &object{d: d, comp: comp, path: path, node: n,
		vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, comp, path, "must be a mapping of keys to values, got %s", describe(n))
		return nil
	}
	o.collect(n, false)
	allowed := slices.Concat(ks.known, ks.ignored)
	for _, key := range o.order() {
		k := o.keys[key]
		switch {
		case ks.data, slices.Contains(ks.known, key):
		case slices.Contains(ks.ignored, key):
			delete(o.vals, key)
		case ks.unsupported[key] != "":
			d.failErr(ErrUnsupported, k.Line, comp, o.field(key), "is not supported by this runtime; %s", ks.unsupported[key])
		case len(d.errs) >= MaxErrors:
			// Counted only: the message is never shown, and suggest is
			// quadratic in the key's length.
			d.fail(k.Line, comp, "", "unknown key")
		default:
			msg := "unknown key"
			if s := suggest(key, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			d.fail(k.Line, comp, o.field(shownKey(key)), "%s; allowed keys: %s", msg, strings.Join(ks.known, ", "))
		}
	}
	return o
}

// collect records the pairs of mapping n. Merge keys (<<) contribute only
// keys not set explicitly, as YAML specifies.
func (o *object) collect(n *yaml.Node, merged bool) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			o.d.fail(k.Line, o.comp, o.path, "keys must be plain names, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, resolve(v))
			continue
		}
		if prev, dup := o.keys[k.Value]; dup {
			if !merged {
				o.d.fail(k.Line, o.comp, o.field(k.Value), "is set twice (first at line %d)", prev.Line)
			}
			continue
		}
		o.keys[k.Value], o.vals[k.Value] = k, v
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, src := range srcs {
			if src = resolve(src); src.Kind != yaml.MappingNode {
				o.d.fail(src.Line, o.comp, o.path, "<< must merge a mapping, got %s", describe(src))
				continue
			}
			o.collect(src, true)
		}
	}
}

// order returns the keys in file order (by line, then column).
func (o *object) order() []string {
	keys := make([]string, 0, len(o.keys))
	for k := range o.keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ka, kb := o.keys[a], o.keys[b]
		if ka.Line != kb.Line {
			return ka.Line - kb.Line
		}
		return ka.Column - kb.Column
	})
	return keys
}

func (o *object) field(key string) string { return joinPath(o.path, key) }

// has reports whether key is present with a non-null value.
func (o *object) has(key string) bool { return !isNull(o.get(key)) }

func (o *object) get(key string) *yaml.Node { return resolve(o.vals[key]) }

// line is the line of key's value, or of the mapping when key is absent.
func (o *object) line(key string) int {
	if n := o.get(key); n != nil {
		return n.Line
	}
	return o.node.Line
}

func (o *object) failf(key, format string, args ...any) {
	o.d.fail(o.line(key), o.comp, o.field(key), format, args...)
}

// scalar returns key's text; ok is false when absent or null. A mapping or
// sequence where a scalar belongs is reported.
func (o *object) scalar(key string) (string, bool) {
	n := o.get(key)
	if isNull(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		o.failf(key, "must be a single value, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// str returns key's trimmed text, "" when absent.
func (o *object) str(key string) string {
	s, _ := o.scalar(key)
	return strings.TrimSpace(s)
}

// required returns key's text and reports it when absent or blank.
func (o *object) required(key, hint string) string {
	s := o.str(key)
	switch {
	case s != "":
	case o.has(key):
		o.failf(key, "must not be empty; %s", hint)
	default:
		o.failf(key, "is required; %s", hint)
	}
	return s
}

func (o *object) boolean(key string, def bool) bool {
	s, ok := o.scalar(key)
	if !ok {
		return def
	}
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	o.failf(key, "%q is not a boolean; write true or false", s)
	return def
}

// positiveInt returns key as an integer >= 1, or 0 when absent.
func (o *object) positiveInt(key, hint string) int {
	s, ok := o.scalar(key)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		o.failf(key, "%q is not a whole number of at least 1; %s", s, hint)
		return 0
	}
	return n
}

// duration returns key as a positive duration, or 0 when absent.
func (o *object) duration(key string) time.Duration {
	s, ok := o.scalar(key)
	if !ok {
		return 0
	}
	v, err := ParseDuration(s)
	if err != nil {
		o.failf(key, "%v", err)
		return 0
	}
	if v == 0 {
		o.failf(key, "%q must be longer than zero; remove the key to turn it off", s)
	}
	return v
}

// enum returns key's value, def when absent, checked against allowed.
func (o *object) enum(key, def string, allowed ...string) string {
	s, ok := o.scalar(key)
	if !ok {
		return def
	}
	if !slices.Contains(allowed, s) {
		o.failf(key, "%s", oneOf(s, allowed))
		return def
	}
	return s
}

// child decodes key as a nested mapping; nil when absent or invalid.
func (o *object) child(key string, ks keySet) *object {
	n := o.get(key)
	if n == nil {
		return nil
	}
	if isNull(n) {
		o.failf(key, "is empty; give it keys or remove it")
		return nil
	}
	return o.d.object(n, o.comp, o.field(key), ks)
}

// enumMap decodes key as a mapping from column names to one of allowed.
// Never returns nil.
func (o *object) enumMap(key string, allowed ...string) map[string]string {
	out := map[string]string{}
	c := o.child(key, keySet{data: true})
	if c == nil {
		return out
	}
	for _, col := range c.order() {
		if _, err := parseColumns(col); err != nil {
			c.d.fail(c.keys[col].Line, c.comp, c.field(col), "%v", err)
			continue
		}
		if v := c.enum(col, "", allowed...); v != "" {
			out[col] = v
		} else if !c.has(col) {
			c.failf(col, "has no value; write one of %s", strings.Join(allowed, ", "))
		}
	}
	return out
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected YAML node"
}
