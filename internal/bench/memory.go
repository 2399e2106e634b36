package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/docker/go-units"
)

// MetricRSS is the Prometheus process collector's resident memory gauge.
const MetricRSS = "process_resident_memory_bytes"

// MemorySource says where to read one runtime's memory: its Prometheus endpoint,
// else its container's docker stats.
type MemorySource struct {
	Runtime    string // "accelerated"
	MetricsURL string // http://host:9090/metrics; skipped when empty
	Container  string // container name; when empty, the container of Compose service Service
	Service    string // Compose service name, to find the container
	Project    string // Compose project of Service; any when empty
	// Self reads this process's own resident memory (/proc/self/statm).
	Self bool
}

// Memory is one reading of a runtime's resident memory.
type Memory struct {
	Runtime string `json:"runtime"`
	Bytes   int64  `json:"bytes"`  // 0 when unknown
	Source  string `json:"source"` // where it came from, or why there is none
}

// ReadMemory reads src's memory from its metrics when given, else from docker stats
// when docker (the CLI) is set, else says n/a. It never fails: a reading that cannot
// be had says why in Source.
func ReadMemory(ctx context.Context, client *http.Client, docker string, src MemorySource) Memory {
	m := Memory{Runtime: src.Runtime, Source: "n/a"}
	if src.Self {
		b, err := selfRSS()
		if err != nil {
			m.Source = "n/a: " + err.Error()
			return m
		}
		m.Bytes, m.Source = b, "/proc/self/statm"
		return m
	}
	var why []string
	if src.MetricsURL != "" {
		b, err := scrapeRSS(ctx, client, src.MetricsURL)
		if err == nil {
			m.Bytes, m.Source = b, src.MetricsURL
			return m
		}
		why = append(why, err.Error())
	}
	if docker != "" {
		b, name, err := dockerRSS(ctx, docker, src)
		if err == nil {
			m.Bytes, m.Source = b, "docker stats "+name
			return m
		}
		why = append(why, err.Error())
	}
	if len(why) > 0 {
		m.Source = "n/a: " + strings.Join(why, "; ")
	}
	return m
}

func scrapeRSS(ctx context.Context, client *http.Client, url string) (int64, error) {
	v, err := scrape(ctx, client, url, MetricKey{Name: MetricRSS})
	if err != nil {
		return 0, err
	}
	return int64(v[0]), nil
}

// ParseRSS finds process_resident_memory_bytes in a Prometheus text exposition.
func ParseRSS(r io.Reader) (int64, bool) {
	v, found := ParseMetrics(r, []MetricKey{{Name: MetricRSS}})
	return int64(v[0]), found[0]
}

func dockerRSS(ctx context.Context, docker string, src MemorySource) (int64, string, error) {
	name := src.Container
	if name == "" {
		var err error
		if name, err = composeContainer(ctx, docker, src.Project, src.Service); err != nil {
			return 0, "", err
		}
	}
	out, err := exec.CommandContext(ctx, docker, "stats", "--no-stream", "--format", "{{.MemUsage}}", name).Output()
	if err != nil {
		return 0, name, fmt.Errorf("docker stats %s: %w", name, err)
	}
	b, err := ParseMemUsage(string(out))
	return b, name, err
}

// selfRSS is this process's resident memory: statm's second field, in pages.
func selfRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("own memory: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("own memory: /proc/self/statm %q", strings.TrimSpace(string(b)))
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("own memory: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}

// ParseMemUsage reads the used part of docker stats' MemUsage, "123.4MiB / 1.9GiB".
func ParseMemUsage(s string) (int64, error) {
	used, _, _ := strings.Cut(strings.TrimSpace(s), "/")
	b, err := units.RAMInBytes(strings.TrimSpace(used))
	if err != nil {
		return 0, fmt.Errorf("docker stats memory %q: %w", strings.TrimSpace(s), err)
	}
	return b, nil
}
