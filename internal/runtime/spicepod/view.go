package spicepod

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		o.failf("sql_ref", "file %q does not exist (looked at %s; sql_ref is relative to the spicepod file)", ref, path)
		return ""
	case err != nil:
		o.failf("sql_ref", "read %q: %v", ref, err)
		return ""
	}
	sql := strings.TrimSpace(string(data))
	if sql == "" {
		o.failf("sql_ref", "file %q is empty", ref)
	}
	return sql
}
