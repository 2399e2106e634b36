//go:build browser

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

// Screenshots: SCREENSHOT=docs/img/live.png saves the page at laptop width
// once it shows an order on every path; SCREENSHOT_PHONE=... the same at phone
// width. Relative paths are from the repository's root.
const (
	envScreenshot      = "SCREENSHOT"
	envScreenshotPhone = "SCREENSHOT_PHONE"
)

// card is one path's card on the page, as live.js marks it up.
type card struct {
	Rows     string   `json:"rows"`     // data-rows: name:count,...
	State    string   `json:"state"`    // data-state: up, down, degraded, unknown
	Position string   `json:"position"` // data-position
	Mine     string   `json:"mine"`     // the order mark's data-state: visible, waiting
	MineMS   string   `json:"mineMS"`   // its data-ms
	MineText string   `json:"mineText"` // its text
	Replicas []string `json:"replicas"` // each replica's data-up
}

const readCards = `Object.fromEntries([...document.querySelectorAll(".path")].map(e => {
  const m = e.querySelector(".mine");
  return [e.dataset.path, {rows: e.dataset.rows || "", state: e.dataset.state || "", position: e.dataset.position || "",
    mine: m.dataset.state || "", mineMS: m.dataset.ms || "", mineText: m.textContent,
    replicas: [...e.querySelectorAll(".replica")].map(r => r.dataset.up)}];
}))`

var pathNames = []string{"postgres", "accelerated", "materialized"}

// browser is one headless Chromium tab with the page's console errors.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// MustBrowser starts Debian's chromium headless, closed at cleanup.
func MustBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found: apt-get install chromium (make test installs it: docker/preflight.sh deps)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in CI, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.problem("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			what := d.Text
			if d.Exception != nil {
				what += " " + d.Exception.Description
			}
			b.problem("exception at %s:%d: %s", d.URL, d.LineNumber, what)
		}
	}))
	b.ctx = ctx
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// checkConsole fails the test on any console error or exception so far.
func (b *browser) checkConsole(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Fatalf("the page logged errors:\n%s", strings.Join(b.problems, "\n"))
	}
}

// do runs steps in the tab, each call bounded by a minute.
func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// get runs one action that returns a value.
func get[T any](t *testing.T, b *browser, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

func (b *browser) cards(t *testing.T) map[string]card {
	t.Helper()
	return get(t, b, chromedp.Evaluate[map[string]card](readCards))
}

// waitCards polls the page until cond holds for its cards.
func (b *browser) waitCards(t *testing.T, what string, limit time.Duration, cond func(map[string]card) bool) map[string]card {
	t.Helper()
	var last map[string]card
	waitFor(t, what, limit, func() bool {
		last = b.cards(t)
		return cond(last)
	})
	return last
}

func (b *browser) screenshot(t *testing.T, env string, width, height int64, mobile bool) {
	t.Helper()
	name := os.Getenv(env)
	if name == "" {
		return
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join("..", "..", name)
	}
	var emulate []chromedp.EmulateViewportOption
	if mobile {
		emulate = append(emulate, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	b.do(t, chromedp.EmulateViewport(width, height, emulate...), chromedp.Sleep(time.Second)) // the chart redraws on resize
	png := get(t, b, chromedp.FullScreenshot(100))                                            // 100: PNG
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%dx%d): %d bytes", name, width, height, len(png))
}

func (s *stack) postOrder(t *testing.T, key string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.api+"/orders", nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /orders: %s", resp.Status)
	}
}

// TestLivePage drives the live page in headless Chromium against the compose
// stack, with the runtimes' keys and a write key on: the rankings it shows are
// Postgres's, an order posted with its button shows up on every path with the
// time it took, and a killed runtime shows as down, then up once started again.
func TestLivePage(t *testing.T) {
	const writeKey = "browser-test-write-key"
	s := MustStack(t, "API_WRITE_KEY="+writeKey)
	for range 10 {
		s.postOrder(t, writeKey)
	}
	b := MustBrowser(t)

	// A browser asking for / lands on the page.
	b.do(t, chromedp.Navigate(s.api+"/"), chromedp.WaitVisible(chromedp.CSS("#path-materialized")))
	location := get(t, b, chromedp.Location())
	if !strings.HasSuffix(location, "/live") {
		t.Fatalf("GET / in a browser ended at %s, want /live", location)
	}
	b.checkConsole(t)

	// The three rankings are Postgres's.
	want := strings.ReplaceAll(s.truth(t), ":null", ":0") // the page shows a product never sold as 0
	b.waitCards(t, "the page to show Postgres's ranking on every path", time.Minute, func(cs map[string]card) bool {
		for _, name := range pathNames {
			if cs[name].Rows != want {
				return false
			}
		}
		return true
	})

	// The write key is asked for; the order posted with the button appears on
	// every path with the time it took.
	b.do(t, chromedp.WaitVisible(chromedp.CSS("#key")))
	disabled := get(t, b, chromedp.JavascriptAttribute[bool](chromedp.CSS("#post"), "disabled"))
	if !disabled {
		t.Fatalf("the button is enabled before the write key is typed")
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS("#key"), writeKey), chromedp.Click(chromedp.CSS("#post")),
		chromedp.WaitVisible(chromedp.CSS("#order-status[data-order]")))
	order := get(t, b, chromedp.AttributeValue(chromedp.CSS("#order-status"), "data-order")).Value
	cs := b.waitCards(t, "order #"+order+" to be visible on every path", time.Minute, func(cs map[string]card) bool {
		for _, name := range pathNames {
			if cs[name].Mine != "visible" {
				return false
			}
		}
		return true
	})
	for _, name := range pathNames {
		c := cs[name]
		var ms float64
		if _, err := fmt.Sscan(c.MineMS, &ms); err != nil || ms <= 0 || !strings.Contains(c.MineText, "order #"+order+" visible") {
			t.Fatalf("%s: order mark %q (data-ms %q), want order #%s visible after a measured time", name, c.MineText, c.MineMS, order)
		}
		t.Logf("%s: %s", name, c.MineText)
	}
	want = strings.ReplaceAll(s.truth(t), ":null", ":0")
	b.waitCards(t, "every path to show the ranking with the order", time.Minute, func(cs map[string]card) bool {
		return cs["postgres"].Rows == want && cs["accelerated"].Rows == want && cs["materialized"].Rows == want
	})
	legend := get(t, b, chromedp.Text(chromedp.CSS("#legend")))
	if strings.Contains(legend, "no order yet") {
		t.Fatalf("chart legend %q: a series has no point after the order", legend)
	}
	if os.Getenv(envScreenshot)+os.Getenv(envScreenshotPhone) != "" {
		// A few more orders, so the picture's chart has a line.
		for range 4 {
			prev := order
			b.do(t, chromedp.Click(chromedp.CSS("#post")))
			waitFor(t, "the next order to be visible on runtime 2", time.Minute, func() bool {
				order = get(t, b, chromedp.AttributeValue(chromedp.CSS("#order-status"), "data-order")).Value
				c := b.cards(t)["materialized"]
				return order != prev && c.Mine == "visible" && strings.Contains(c.MineText, "#"+order+" ")
			})
		}
	}
	b.screenshot(t, envScreenshot, 1280, 1000, false)
	b.screenshot(t, envScreenshotPhone, 390, 844, true)
	b.do(t, chromedp.EmulateViewport(1280, 1000))

	// A killed runtime shows as down, then up once it is back.
	ctx := context.Background()
	docker := &chaos.Stack{Project: s.project, Dir: s.dir, Env: s.env}
	if err := docker.Signal(ctx, chaos.ServiceAccelerated, "KILL"); err != nil {
		t.Fatal(err)
	}
	b.waitCards(t, "the accelerated runtime to show as down", time.Minute, func(cs map[string]card) bool {
		c := cs["accelerated"]
		return c.State == "down" && !slices.Contains(c.Replicas, "true")
	})
	if c := b.cards(t)["materialized"]; c.State != "up" {
		t.Logf("materialized shows %q while accelerated is down", c.State)
	}
	// docker kill counts as a stop by hand, which Docker's restart policy
	// leaves alone: start it as an operator would (chaos does the same).
	if err := docker.WaitStopped(ctx, chaos.ServiceAccelerated, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := docker.Start(ctx, chaos.ServiceAccelerated); err != nil {
		t.Fatal(err)
	}
	b.waitCards(t, "the accelerated runtime to show as up again", 3*time.Minute, func(cs map[string]card) bool {
		c := cs["accelerated"]
		return c.State == "up" && slices.Contains(c.Replicas, "true")
	})
	b.checkConsole(t)
	if conn := get(t, b, chromedp.AttributeValue(chromedp.CSS("#conn"), "data-state")).Value; conn != "live" {
		t.Fatalf("the page's event stream is %q, want live", conn)
	}
}
