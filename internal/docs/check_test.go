package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// root is the repository, two levels up from this package.
const root = "../.."

// Names the docs may use that no file of this repository defines: other tools'
// flags and variables, and upper-case words that are not variables.
var (
	externalFlags = set("help", "scale", "index", "remove-orphans", "no-deps", "volumes", "tail", "follow",
		"latency-correction", "version")
	externalEnv = set("POSTGRES_PASSWORD", "POSTGRES_USER", "POSTGRES_DB", "CGO_ENABLED", "GOMEMLIMIT",
		"TESTCONTAINERS_RYUK_DISABLED", "TESTCONTAINERS_HOST_OVERRIDE", "COMPOSE_PROJECT_NAME", "DOCKER_BUILDKIT",
		"NOT_SERVING", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "INVALID_ARGUMENT", "BASE_TABLE",
		"REPLICA_IDENTITY", "GROUP_BY", "PERMISSION_DENIED", "PGPASSWORD")
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Known is what the repository defines.
type Known struct {
	Targets, Flags, Env map[string]bool
	// Exists reports whether a path (relative to root) exists; Anchors lists
	// the heading slugs of a Markdown file.
	Exists  func(path string) bool
	Anchors func(path string) map[string]bool
}

// Problem is one broken name or link in a file.
type Problem struct{ File, What string }

var (
	fenceRe     = regexp.MustCompile("(?ms)^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$")
	spanRe      = regexp.MustCompile("`([^`\n]+)`")
	makeRe      = regexp.MustCompile(`(?:^|[\s;&|(])make((?:[ \t]+(?:-\S+|[A-Za-z_][A-Za-z0-9_]*=\S*))*)[ \t]+([a-z][a-z0-9_-]*)`)
	flagRe      = regexp.MustCompile(`(?:^|[\s\[(="'])--([a-z][a-z0-9-]*)`)
	envNameRe   = regexp.MustCompile(`^[A-Z][A-Z0-9_]{2,}$`)
	envAssignRe = regexp.MustCompile(`(?:^|[\s'"])([A-Z][A-Z0-9_]{2,})=`)
	linkRe      = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headingRe   = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// Check returns the problems of one Markdown file, named file (relative to root).
func Check(file, text string, k Known) []Problem {
	var ps []Problem
	seen := map[string]bool{}
	add := func(format string, args ...any) {
		if what := fmt.Sprintf(format, args...); !seen[what] {
			seen[what] = true
			ps = append(ps, Problem{file, what})
		}
	}
	fences := fenceRe.FindAllString(text, -1)
	prose := fenceRe.ReplaceAllString(text, "")
	spans := []string{}
	for _, m := range spanRe.FindAllStringSubmatch(prose, -1) {
		spans = append(spans, m[1])
	}
	code := append(append([]string{}, fences...), spans...)
	for _, c := range code {
		for _, m := range makeRe.FindAllStringSubmatch(c, -1) {
			if !k.Targets[m[2]] {
				add("make target %q does not exist (in %q)", m[2], firstLine(c))
			}
		}
		for _, m := range flagRe.FindAllStringSubmatch(c, -1) {
			if !k.Flags[m[1]] && !externalFlags[m[1]] {
				add("flag --%s is defined by no command under cmd/ (in %q)", m[1], firstLine(c))
			}
		}
		for _, m := range envAssignRe.FindAllStringSubmatch(c, -1) {
			checkEnv(m[1], c, k, add)
		}
	}
	for _, s := range spans {
		if envNameRe.MatchString(s) && strings.Contains(s, "_") {
			checkEnv(s, s, k, add)
		}
	}
	for _, m := range linkRe.FindAllStringSubmatch(spanRe.ReplaceAllString(prose, ""), -1) {
		checkLink(file, m[1], k, add)
	}
	return ps
}

func checkEnv(name, in string, k Known, add func(string, ...any)) {
	if !k.Env[name] && !externalEnv[name] {
		add("environment variable %s is used by no code, Makefile, compose file or spicepod (in %q)", name, firstLine(in))
	}
}

func checkLink(file, target string, k Known, add func(string, ...any)) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	path, anchor, _ := strings.Cut(target, "#")
	if path == "" {
		path = file
	} else {
		path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
		if strings.HasPrefix(path, "../") {
			add("link %s leaves the repository", target)
			return
		}
		if !k.Exists(path) {
			add("link %s: %s does not exist", target, path)
			return
		}
	}
	if anchor != "" && strings.HasSuffix(path, ".md") && !k.Anchors(path)[anchor] {
		add("link %s: %s has no heading with anchor #%s", target, path, anchor)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

// Slugs returns the GitHub anchors of text's headings: lower case, punctuation
// dropped, spaces to hyphens, repeats numbered -1, -2...
func Slugs(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
				b.WriteRune(r)
			}
		}
		s := b.String()
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func isLetter(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

// --- what the repository defines -------------------------------------------------

var (
	targetRe     = regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+)\s*:([^=]|$)`)
	helpRe       = regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):[^=\n]*## \S`)
	makeVarRe    = regexp.MustCompile(`(?m)^(?:export\s+)?([A-Z][A-Z0-9_]+)\s*(?:\?=|:=|=|\+=)`)
	makeRefRe    = regexp.MustCompile(`\$[({]([A-Z][A-Z0-9_]+)[)}]`)
	goFlagRe     = regexp.MustCompile(`\.(?:String|Bool|Int|Int64|Uint|Uint64|Float64|Duration|Func|BoolFunc|TextVar|Var|StringVar|BoolVar|IntVar|Int64Var|UintVar|Uint64Var|Float64Var|DurationVar)\((?:[^,"()]+(?:\([^)]*\))?,\s*)?"([a-z][a-z0-9-]*)"`)
	goStringRe   = regexp.MustCompile(`"([A-Z][A-Z0-9_]{2,})"`)
	yamlEnvRe    = regexp.MustCompile(`\$\{(?:env:|secrets:)?([A-Z][A-Z0-9_]+)`)
	yamlKeyRe    = regexp.MustCompile(`(?m)^\s*-?\s*([A-Z][A-Z0-9_]{2,})\s*[:=]`)
	shellVarRe   = regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]{2,})`)
	shellAssigRe = regexp.MustCompile(`(?m)(?:^|\s)(?:export\s+|local\s+)?([A-Z][A-Z0-9_]{2,})=`)
)

// Repository reads what root defines: Makefile targets, flags of cmd/, and the
// environment variables of the Go code, the Makefile, compose, yaml and scripts.
func Repository(t *testing.T) Known {
	t.Helper()
	k := Known{Targets: map[string]bool{}, Flags: map[string]bool{}, Env: map[string]bool{}}
	mk := read(t, "Makefile")
	for _, m := range targetRe.FindAllStringSubmatch(mk, -1) {
		k.Targets[m[1]] = true
	}
	for _, re := range []*regexp.Regexp{makeVarRe, makeRefRe} {
		for _, m := range re.FindAllStringSubmatch(mk, -1) {
			k.Env[m[1]] = true
		}
	}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "bin" || rel == ".git" || strings.HasPrefix(d.Name(), ".") && rel != "." && rel != ".ci" {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		isGo := strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
		isYAML := strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || name == "secrets.env.example"
		isShell := strings.HasSuffix(name, ".sh") || strings.HasPrefix(rel, ".ci"+string(filepath.Separator)) || strings.HasSuffix(name, "Dockerfile")
		if !isGo && !isYAML && !isShell {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(data)
		if isGo {
			if strings.HasPrefix(rel, "cmd"+string(filepath.Separator)) {
				for _, m := range goFlagRe.FindAllStringSubmatch(text, -1) {
					k.Flags[m[1]] = true
				}
			}
			for _, m := range goStringRe.FindAllStringSubmatch(text, -1) {
				k.Env[m[1]] = true
			}
		}
		res := []*regexp.Regexp{yamlEnvRe, yamlKeyRe}
		if isShell {
			res = []*regexp.Regexp{shellVarRe, shellAssigRe}
		}
		for _, re := range res {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				k.Env[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the repository: %v", err)
	}
	k.Exists = func(p string) bool { _, err := os.Stat(filepath.Join(root, p)); return err == nil }
	k.Anchors = func(p string) map[string]bool {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil
		}
		return Slugs(string(data))
	}
	return k
}

func read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// pages are README.md and every docs/*.md.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		out = append(out, filepath.ToSlash(rel))
	}
	sort.Strings(out[1:])
	return out
}

// TestDocsNameWhatExists fails on every make target, flag, environment variable
// and relative link of README.md and docs/*.md that the repository lacks.
func TestDocsNameWhatExists(t *testing.T) {
	k := Repository(t)
	for _, p := range pages(t) {
		for _, pr := range Check(p, read(t, p), k) {
			t.Errorf("%s: %s", pr.File, pr.What)
		}
	}
}

// TestEveryTargetHasHelp fails when a target of the Makefile's .PHONY list has no
// `## description` for make help.
func TestEveryTargetHasHelp(t *testing.T) {
	mk := read(t, "Makefile")
	described := map[string]bool{}
	for _, m := range helpRe.FindAllStringSubmatch(mk, -1) {
		described[m[1]] = true
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY:((?:[^\n\\]|\\\n)*)`).FindAllStringSubmatch(mk, -1)
	if len(phony) == 0 {
		t.Fatal("Makefile has no .PHONY line")
	}
	for _, p := range phony {
		for _, target := range strings.Fields(strings.ReplaceAll(p[1], "\\\n", " ")) {
			if !described[target] {
				t.Errorf("make %s has no `## description` on its rule line: make help omits it", target)
			}
		}
	}
}

// TestGeneratedBlocks fails when a page loses the markers its tool writes
// between: the tool would then leave the page alone and it would drift.
func TestGeneratedBlocks(t *testing.T) {
	for page, name := range map[string]string{"docs/benchmarks.md": "bench", "docs/chaos.md": "chaos"} {
		text := read(t, page)
		if _, err := docgen.Replace(text, name, "x", docgen.Stamp{}); err != nil {
			t.Errorf("%s: %v", page, err)
		}
	}
}
