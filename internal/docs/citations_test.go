package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citeRe finds a comment's or message's reference to a docs page and, after a
// comma, the section it means: `docs/operations.md, Limits` or
// `(README, "Run it")`, the section possibly on the comment's next line.
var citeRe = regexp.MustCompile(`\b(README(?:\.md)?|docs/[a-z-]+\.md)(?:,\s+(?:(?://|#)\s*)?(?:"([^"\n]+)"|([A-Z][A-Za-z0-9' :-]*[A-Za-z0-9])))?`)

// Citations returns, for each file under root that is not Markdown, the pages
// and sections its text refers to that do not exist.
func Citations(t *testing.T, k Known) []Problem {
	t.Helper()
	var ps []Problem
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "bin" || rel == "bench" || rel == "chaos" || strings.HasPrefix(d.Name(), ".") && rel != "." && rel != ".ci" {
				return filepath.SkipDir
			}
			return nil
		}
		if !cites(d.Name()) || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citeRe.FindAllStringSubmatch(string(data), -1) {
			page, section := m[1], m[2]+m[3]
			if page == "README" {
				page = "README.md"
			}
			switch {
			case !k.Exists(page):
				ps = append(ps, Problem{rel, "cites " + page + ", which does not exist"})
			case section != "" && !hasHeading(read(t, page), section):
				ps = append(ps, Problem{rel, "cites " + page + `, "` + section + `": the page has no such heading`})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the repository: %v", err)
	}
	return ps
}

// cites reports whether a file of this name is read for citations: code,
// compose files, spicepods, scripts, the Makefile.
func cites(name string) bool {
	for _, ext := range []string{".go", ".yml", ".yaml", ".sh", ".sql"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return name == "Makefile" || strings.HasSuffix(name, "Dockerfile")
}

// hasHeading reports whether text has a heading whose title is section, in
// any case, or begins with it followed by a colon or a space.
func hasHeading(text, section string) bool {
	section = strings.ToLower(section)
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		title := strings.ToLower(strings.Trim(m[1], "`*"))
		if title == section {
			return true
		}
	}
	return false
}

// TestCitationsExist fails on every reference in code, compose files,
// spicepods, scripts and the Makefile to a docs page or section that does not
// exist: such comments and messages send readers nowhere once a section moves.
func TestCitationsExist(t *testing.T) {
	for _, p := range Citations(t, Repository(t)) {
		t.Errorf("%s: %s", p.File, p.What)
	}
}
