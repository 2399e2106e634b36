//go:build e2e

package e2e_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStackConvergesToPostgres(t *testing.T) {
	s := MustStack(t)

	// The recipe's first output, as text.
	resp, err := http.Get(s.api + "/ranking")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "==== Leading Products ====") {
		t.Fatalf("/ranking text: %q", body)
	}

	token := s.postOrders(t, 25)
	want := s.truth(t)
	for _, path := range []string{"/ranking", "/ranking-accelerated", "/ranking-materialized"} {
		// Read-your-writes: with the last write's token, the first answer is exact.
		got, pos, code := s.ranking(t, path, token)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, got)
		}
		if got != want {
			t.Fatalf("%s = %s, want %s (Postgres)", path, got, want)
		}
		if pos < token {
			t.Fatalf("%s reflects %s, want at least %s", path, pos, token)
		}
	}
	// Without a token the read side converges on its own within seconds.
	resp, err = http.Post(s.api+"/orders", "application/json", strings.NewReader(`{"product_id": 2, "count": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want = s.truth(t)
	for _, path := range []string{"/ranking-accelerated", "/ranking-materialized"} {
		waitFor(t, path+" to converge", time.Minute, func() bool {
			got, _, _ := s.ranking(t, path, 0)
			return got == want
		})
	}

	// The benchmark tool's smoke setting against the real stack, so it cannot rot.
	out := t.TempDir()
	bench := exec.Command("go", "run", "./cmd/bench", "--quick", "--url", s.api, "--postgres-url", s.pgURL, "--out", out)
	bench.Dir = s.dir
	report, err := bench.CombinedOutput()
	t.Logf("bench --quick:\n%s", report)
	if err != nil {
		t.Fatalf("bench --quick: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(out, "latest.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/ranking-materialized", "/noop", "Requests/sec"} {
		if !strings.Contains(string(md), want) {
			t.Fatalf("bench report lacks %q", want)
		}
	}
}
