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
)

// MetricCPU is the Prometheus process collector's CPU counter (user + system).
const MetricCPU = "process_cpu_seconds_total"

// MetricWatermark is the runtimes' gauge of the source position (a Postgres LSN
// as a number) that a dataset's data reflects, labelled dataset="<name>".
const MetricWatermark = "dataset_watermark_lsn"

// MetricKey names one sample of a Prometheus text exposition: a metric and, when
// Label is set, the value that label must have (other labels are ignored).
type MetricKey struct {
	Name  string
	Label string // e.g. "dataset"; none when empty
	Value string // e.g. "orders"
}

// ParseMetrics finds the value of each key in a Prometheus text exposition;
// found[i] says whether keys[i] was there. The first matching sample wins.
func ParseMetrics(r io.Reader, keys []MetricKey) (values []float64, found []bool) {
	values, found = make([]float64, len(keys)), make([]bool, len(keys))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		for i, k := range keys {
			if found[i] {
				continue
			}
			v, ok := sampleOf(line, k)
			if ok {
				values[i], found[i] = v, true
			}
		}
	}
	return values, found
}

// sampleOf parses line as a sample of k: `name{labels} value [timestamp]`.
func sampleOf(line string, k MetricKey) (float64, bool) {
	rest, ok := strings.CutPrefix(line, k.Name)
	if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
		return 0, false
	}
	labels := ""
	if rest[0] == '{' {
		end := strings.LastIndex(rest, "}")
		if end < 0 {
			return 0, false
		}
		labels, rest = rest[1:end], rest[end+1:]
	}
	if k.Label != "" && !hasLabel(labels, k.Label, k.Value) {
		return 0, false
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	return v, err == nil
}

// hasLabel reports whether the label set `a="x",b="y"` has name="value".
func hasLabel(labels, name, value string) bool {
	want := name + `="` + value + `"`
	for part := range strings.SplitSeq(labels, ",") {
		if strings.TrimSpace(part) == want {
			return true
		}
	}
	return false
}

// scrape reads url and returns the values of keys, failing when one is missing.
func scrape(ctx context.Context, client *http.Client, url string, keys ...MetricKey) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("metrics %s: status %d", url, resp.StatusCode)
	}
	vals, found := ParseMetrics(resp.Body, keys)
	_, _ = io.Copy(io.Discard, resp.Body)
	for i, ok := range found {
		if !ok {
			return nil, fmt.Errorf("metrics %s: no %s", url, keyText(keys[i]))
		}
	}
	return vals, nil
}

func keyText(k MetricKey) string {
	if k.Label == "" {
		return k.Name
	}
	return fmt.Sprintf("%s{%s=%q}", k.Name, k.Label, k.Value)
}

// composeContainer names the first container of a Compose service, of project
// when given (several stacks on one host must not be confused).
func composeContainer(ctx context.Context, docker, project, service string) (string, error) {
	return findContainer(ctx, docker, project, service, false)
}

// findContainer is composeContainer, also among stopped containers when all.
func findContainer(ctx context.Context, docker, project, service string, all bool) (string, error) {
	args := []string{"ps", "--filter", "label=com.docker.compose.service=" + service}
	if all {
		args = append(args, "-a")
	}
	if project != "" {
		args = append(args, "--filter", "label=com.docker.compose.project="+project)
	}
	out, err := exec.CommandContext(ctx, docker, append(args, "--format", "{{.Names}}")...).Output()
	if err != nil {
		return "", fmt.Errorf("docker ps: %w", err)
	}
	name, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if name == "" {
		return "", fmt.Errorf("no container of compose service %q (project %q)", service, project)
	}
	return name, nil
}
