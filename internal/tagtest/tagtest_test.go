package tagtest_test

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/tagtest"
)

// root is the repository, two levels up from this package.
const root = "../.."

// TestEveryTaggedPackageFailsWithoutTheTag fails for each package with a file
// built only with the tag and no test that fails without it.
func TestEveryTaggedPackageFailsWithoutTheTag(t *testing.T) {
	tagged, guarded := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		switch constraint(t, path) {
		case "//go:build " + tagtest.Tag:
			tagged[dir] = true
		case "//go:build !" + tagtest.Tag:
			if strings.HasSuffix(path, "_test.go") && calls(t, path, "tagtest.Missing(t)") {
				guarded[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tagged) == 0 {
		t.Fatal("no file carries the tag: the walk found nothing, so it checks nothing")
	}
	for _, dir := range slices.Sorted(maps.Keys(tagged)) {
		if !guarded[dir] {
			t.Errorf("%s has files built only with -tags %s and no test built without it that calls tagtest.Missing(t): "+
				"add %s/notag_test.go (see package tagtest)", dir, tagtest.Tag, dir)
		}
	}
}

// constraint returns the file's //go:build line, "" when it has none.
func constraint(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		switch {
		case strings.HasPrefix(line, "//go:build "):
			return line
		case line == "" || strings.HasPrefix(line, "//"):
			continue
		default:
			return "" // the package clause: constraints come before it
		}
	}
	return ""
}

func calls(t *testing.T, path, call string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), call)
}
