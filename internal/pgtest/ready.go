package pgtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/testcontainers/testcontainers-go/wait"
)

// readyStrategy waits until Postgres accepts a TCP connection with the test
// credentials. The image's init phase runs a server on the Unix socket only, so a
// TCP connection means the final server is up.
type readyStrategy struct {
	postgres *Postgres
	timeout  time.Duration
}

var _ wait.Strategy = (*readyStrategy)(nil)

func (s *readyStrategy) Timeout() *time.Duration { return &s.timeout }

func (s *readyStrategy) String() string { return "postgres accepting TCP connections" }

func (s *readyStrategy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	var lastErr error
	for {
		if err := s.ping(ctx); err == nil {
			return nil
		} else {
			lastErr = err
		}
		state, err := target.State(ctx)
		if err == nil && !state.Running {
			return fmt.Errorf("container exited with code %d before accepting connections:\n%s",
				state.ExitCode, logTail(ctx, target, 20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres not ready after %s: %w; last log lines:\n%s",
				s.timeout, lastErr, logTail(context.WithoutCancel(ctx), target, 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *readyStrategy) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, s.postgres.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.Ping(ctx)
}

// logTail returns the last n lines of the container's log, for error messages.
func logTail(ctx context.Context, target wait.StrategyTarget, n int) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := target.Logs(ctx)
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
