package spicepod

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var viewKeys = keySet{
	known:   []string{"name", "description", "sql", "sql_ref", "acceleration"},
	ignored: []string{"dependsOn"},
	unsupported: map[string]string{
		"ref": "write the view inline",
	},
}

// views decodes the views list.
func (d *decoder) views(n *yaml.Node, names *namespace) []View {
	items := d.list(n, "views")
	out := make([]View, 0, len(items))
	for i, item := range items {
		o := d.object(item, component("view", i, item), "", viewKeys)
		if o == nil {
			continue
		}
		v := View{
			Name:        o.name(names),
			Description: o.str("description"),
			SQL:         o.viewSQL(),
		}
		v.Acceleration = o.acceleration(accelContext{name: v.Name, view: true}, nil)
		out = append(out, v)
	}
	return out
}

// viewSQL returns the view's query from sql or from the sql_ref file.
func (o *object) viewSQL() string {
	hasSQL, hasRef := o.has("sql"), o.has("sql_ref")
	switch {
	case hasSQL && hasRef:
		o.failf("sql_ref", "is set together with sql; keep one of them")
		return ""
	case !hasSQL && !hasRef:
		o.failf("sql", "is required; write the query in sql, or put it in a file and name it in sql_ref")
		return ""
	case hasSQL:
		sql := o.str("sql")
		if sql == "" {
			o.failf("sql", "must not be empty")
		}
		return sql
	}
	ref := o.str("sql_ref")
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.d.dir, ref)
	}
	real, err := Paths{Dir: o.d.dir, Allowed: o.d.allowed}.Resolve("file "+strconv.Quote(ref), ref)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		o.failf("sql_ref", "file %q does not exist (looked at %s; sql_ref is relative to the spicepod file)", ref, path)
		return ""
	case err != nil:
		o.failf("sql_ref", "%v", err)
		return ""
	}
	data, err := readRef(real)
	if err != nil {
		o.failf("sql_ref", "read %q: %v", ref, err)
		return ""
	}
	sql := strings.TrimSpace(string(data))
	if sql == "" {
		o.failf("sql_ref", "file %q is empty", ref)
	}
	return sql
}

// readRef reads a view's sql_ref file, refusing one over MaxFileBytes: a
// query is a page of text.
func readRef(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("the file is over %d bytes (1 MiB); a view's query is not that long", MaxFileBytes)
	}
	return data, nil
}
