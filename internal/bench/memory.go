package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("metrics %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics %s: status %d", url, resp.StatusCode)
	}
	b, ok := ParseRSS(resp.Body)
	if !ok {
		return 0, fmt.Errorf("metrics %s: no %s", url, MetricRSS)
	}
	return b, nil
}

// ParseRSS finds process_resident_memory_bytes in a Prometheus text exposition.
func ParseRSS(r io.Reader) (int64, bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, MetricRSS)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		return int64(v), true
	}
	return 0, false
}

func dockerRSS(ctx context.Context, docker string, src MemorySource) (int64, string, error) {
	name := src.Container
	if name == "" && src.Service != "" {
		out, err := exec.CommandContext(ctx, docker, "ps", "--filter",
			"label=com.docker.compose.service="+src.Service, "--format", "{{.Names}}").Output()
		if err != nil {
			return 0, "", fmt.Errorf("docker ps: %w", err)
		}
		name, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	if name == "" {
		return 0, "", fmt.Errorf("no container of compose service %q", src.Service)
	}
	out, err := exec.CommandContext(ctx, docker, "stats", "--no-stream", "--format", "{{.MemUsage}}", name).Output()
	if err != nil {
		return 0, name, fmt.Errorf("docker stats %s: %w", name, err)
	}
	b, err := ParseMemUsage(string(out))
	return b, name, err
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
