package docgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

var (
	// ErrNoMarkers: the text has no begin marker of that name.
	ErrNoMarkers = errors.New("no generated block")
	// ErrUnclosed: a begin marker has no end marker after it.
	ErrUnclosed = errors.New("generated block not closed")
)

// Stamp says when and from which commit a block was generated.
type Stamp struct {
	Time   time.Time
	Commit string // short hash; empty: unknown
}

// String is the stamp's line, e.g. "Generated 2026-12-03 12:00 UTC from commit abc1234."
func (s Stamp) String() string {
	line := "Generated " + s.Time.UTC().Format("2006-01-02 15:04 UTC")
	if s.Commit != "" {
		line += " from commit " + s.Commit
	}
	return line + "."
}

// Begin and End are the markers of the block called name.
func Begin(name string) string { return "<!-- generated:" + name + " begin -->" }
func End(name string) string   { return "<!-- generated:" + name + " end -->" }

// Replace returns text with the content between the markers of name replaced
// by the stamp's line and body. The markers stay on their own lines; the rest of
// the text is unchanged. Every block of that name is replaced.
func Replace(text, name, body string, s Stamp) (string, error) {
	return ReplaceBlock(text, name, "_"+s.String()+"_\n\n"+strings.TrimSpace(body))
}

// ReplaceBlock is Replace without a stamp: for text derived from the code, not
// from a run, which is the same whenever it is generated.
func ReplaceBlock(text, name, body string) (string, error) {
	begin, end := Begin(name), End(name)
	if !strings.Contains(text, begin) {
		return text, fmt.Errorf("%s: %w", begin, ErrNoMarkers)
	}
	block := begin + "\n\n" + strings.TrimSpace(body) + "\n\n" + end
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, begin)
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		j := strings.Index(rest[i:], end)
		if j < 0 {
			return text, fmt.Errorf("%s: %w: add %s after it", begin, ErrUnclosed, end)
		}
		b.WriteString(rest[:i])
		b.WriteString(block)
		rest = rest[i+j+len(end):]
	}
}

// Block returns the content of the first block called name, trimmed.
func Block(text, name string) (string, error) {
	begin, end := Begin(name), End(name)
	i := strings.Index(text, begin)
	if i < 0 {
		return "", fmt.Errorf("%s: %w", begin, ErrNoMarkers)
	}
	j := strings.Index(text[i:], end)
	if j < 0 {
		return "", fmt.Errorf("%s: %w: add %s after it", begin, ErrUnclosed, end)
	}
	return strings.TrimSpace(text[i+len(begin) : i+j]), nil
}

// UpdateFile replaces the block called name in the file at path. A file that
// is missing or has no such block is left alone and reported with ErrNoMarkers
// (or the os error), so a tool can note it and go on.
func UpdateFile(path, name, body string, s Stamp) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	out, err := Replace(string(data), name, body, s)
	if err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	if out == string(data) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(out), info.Mode().Perm()); err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	return nil
}

// Commit returns `git rev-parse --short HEAD` run in dir, or "" when git or the
// repository is missing: a stamp without a commit is still a stamp.
func Commit(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Now is the stamp of a block generated now in dir's repository.
func Now(ctx context.Context, dir string) Stamp {
	return Stamp{Time: time.Now(), Commit: Commit(ctx, dir)}
}
