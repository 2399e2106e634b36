//go:build duckdb_arrow

package file

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/duckdbsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// DefaultPollInterval is how often a watched file is checked for changes.
const DefaultPollInterval = 500 * time.Millisecond

// Source reads a file dataset. It implements engine.Source;
// Engine returns it as an engine.Notifier too when file_watcher is enabled.
type Source struct {
	Logger *slog.Logger
	// PollInterval is how often Watch checks the files. Default
	// DefaultPollInterval.
	PollInterval time.Duration

	cfg   Config
	stamp duckdbsrc.Stamper

	mu sync.Mutex
	db *duckdbsrc.DB
}

var (
	_ engine.Source   = (*Source)(nil)
	_ engine.Notifier = watching{}
)

// NewSource returns a Source for cfg.
func NewSource(cfg Config) *Source {
	return &Source{Logger: slog.Default(), PollInterval: DefaultPollInterval, cfg: cfg}
}

// Open creates the private DuckDB instance and checks the files can be read.
func (s *Source) Open(ctx context.Context) error {
	if s.cfg.Path == "" {
		return errors.New("open file source: no path; build the Config with ParseParams")
	}
	o := duckdbsrc.Options{Files: []string{s.cfg.Path}}
	if s.cfg.Dir {
		o = duckdbsrc.Options{Dirs: []string{s.cfg.Path + string(os.PathSeparator)}}
	}
	db, err := duckdbsrc.Open(ctx, o)
	if err != nil {
		return fmt.Errorf("open file source %s: %w", s.cfg.Path, err)
	}
	s.mu.Lock()
	s.db = db
	s.mu.Unlock()
	return s.Ping(ctx)
}

// Close closes the DuckDB instance. It is safe to call more than once.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.Close()
	s.db = nil
}

// Engine returns the Source as the engine should see it: with Watch when
// file_watcher is enabled.
func (s *Source) Engine() engine.Source {
	if s.cfg.Watch {
		return watching{s}
	}
	return s
}

func (s *Source) instance() (*duckdbsrc.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, errors.New("file source is not open")
	}
	return s.db, nil
}

// Scan reads the files, narrowed by req, and streams them to fn.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	db, err := s.instance()
	if err != nil {
		return err
	}
	files, err := s.cfg.Files()
	if err != nil {
		return fmt.Errorf("read file %s: %w", s.cfg.Path, err)
	}
	pos, err := s.stamp.Stamp(files)
	if err != nil {
		return fmt.Errorf("read file %s: %w", s.cfg.Path, err)
	}
	if err := db.Scan(ctx, s.cfg.Relation(files), req, pos, fn); err != nil {
		return fmt.Errorf("read %s file %s: %w", s.cfg.Format, s.cfg.Path, err)
	}
	return nil
}

// Ping reads the files' schema.
func (s *Source) Ping(ctx context.Context) error {
	db, err := s.instance()
	if err != nil {
		return err
	}
	files, err := s.cfg.Files()
	if err != nil {
		return err
	}
	rows, err := db.Query(ctx, "DESCRIBE SELECT * FROM "+s.cfg.Relation(files))
	if err != nil {
		return fmt.Errorf("read %s file %s: %w; check file_format and the %s params", s.cfg.Format, s.cfg.Path, err, s.cfg.Format)
	}
	return rows.Close()
}

// watching adds Watch to a Source whose acceleration enables file_watcher.
type watching struct{ *Source }

// Watch polls the files every PollInterval and calls changed when they change
// (in modification time, size or, for a directory, the set of files).
func (w watching) Watch(ctx context.Context, changed func()) error {
	var seen duckdbsrc.Stamper
	var last uint64
	t := time.NewTicker(w.PollInterval)
	defer t.Stop()
	for {
		files, err := w.cfg.Files()
		if err == nil {
			pos, err := seen.Stamp(files)
			if err == nil && uint64(pos) != last {
				if last != 0 {
					changed()
				}
				last = uint64(pos)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
