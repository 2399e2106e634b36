package spiceai

import "strings"

// TablePath is the table a dataset's path names on the Spice runtime it reads,
// as upstream maps it. The path is what follows "spice.ai:" or "spice.ai/" in
// from; name is the dataset's own name.
//
//	org/app/datasets/t  -> org.app.t
//	org/app/t           -> org.app.t
//	org/app             -> org.app.<name>
//	anything else       -> as written (a table of the remote runtime)
func TablePath(path, name string) string {
	if !strings.Contains(path, "/") {
		return path
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[2] == "datasets":
		return parts[0] + "." + parts[1] + "." + parts[3]
	case len(parts) == 3:
		return strings.Join(parts, ".")
	case len(parts) == 2:
		return parts[0] + "." + parts[1] + "." + name
	}
	return path
}
