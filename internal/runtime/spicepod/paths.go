package spicepod

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside: a path a spicepod names lies outside the directories it may
// read. Match with errors.Is.
var ErrOutside = errors.New("outside the spicepod's folder")

// Paths confines the files a spicepod reads (file: datasets, duckdb_open,
// sql_ref) to its own directory, or to the Allowed directories the runtime's
// operator adds (dataruntime --allowed-paths). Symlinks are resolved before
// the check, so a link inside the folder to a file outside is refused like
// the file itself. TLS certificate and key files are not confined: they are
// the operator's settings and never served.
type Paths struct {
	// Dir is the spicepod's directory (absolute).
	Dir string
	// Allowed are further directories (absolute) whose files it may read.
	Allowed []string
}

// Resolve makes path absolute against Dir, resolves its symlinks and checks
// that the result lies in Dir or an Allowed directory; it returns the result.
// what names the setting in errors ("from: file:data.csv").
func (p Paths) Resolve(what, path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Dir, path)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %s does not exist (a relative path is read from the spicepod's directory %s); create it or fix the path: %w",
			what, abs, p.Dir, fs.ErrNotExist)
	case err != nil:
		return "", fmt.Errorf("%s: %w", what, err)
	}
	roots := make([]string, 0, 1+len(p.Allowed))
	for _, d := range append([]string{p.Dir}, p.Allowed...) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	for _, root := range roots {
		if within(root, real) {
			return real, nil
		}
	}
	shown := abs
	if real != abs {
		shown = abs + " (" + real + " once symlinks are resolved)"
	}
	return "", fmt.Errorf("%s: %s is %w %s; keep the files a spicepod reads in its folder, or start the runtime with --allowed-paths naming the directory that holds them",
		what, shown, ErrOutside, p.Dir)
}

// within reports whether path is root or lies under it; both are clean and
// absolute.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// AllowedDirs checks the directories an operator allows spicepods to read
// beyond their own folder and returns them absolute: each must exist and be a
// directory.
func AllowedDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("allowed path %q: %w", d, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("allowed path %q: %w", d, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("allowed path %q is not a directory; name the directory that holds the files", d)
		}
		out = append(out, abs)
	}
	return out, nil
}
