package integration

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// consoleGoal carries markup that would run if the console did not escape
// it: the test asserts in the browser that it never does.
const consoleGoal = `Add a /health endpoint <script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

// startConsole runs the real `sett ui` against the stack and returns the
// URL it printed.
func startConsole(t *testing.T, s *stacktest.Stack, sett string, args ...string) *url.URL {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, sett, append([]string{"ui", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "SETT_REDIS_URL="+s.Redis.URL(), "SETT_INSTANCE="+s.Instance)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`(http://\S+)`)
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("sett ui exited before printing its URL")
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("sett ui printed %q, want its URL", line)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for range lines {
			}
		}()
		return u
	case <-time.After(wait):
		t.Fatal("sett ui printed no URL")
	}
	return nil
}

// browser starts headless Chromium (Debian's chromium on PATH: a missing
// browser fails the test) and records every JavaScript dialog.
func browser(t *testing.T) (context.Context, *dialogLog) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the console test needs Debian's chromium on PATH (apt-get install chromium; .ci/run installs it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1360, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialogs := &dialogLog{}
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.add(d.Message)
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return ctx, dialogs
}

// dialogLog collects the messages of the dialogs a page opened.
type dialogLog struct {
	mu   sync.Mutex
	msgs []string
}

func (d *dialogLog) add(m string) { d.mu.Lock(); d.msgs = append(d.msgs, m); d.mu.Unlock() }

func (d *dialogLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.msgs...)
}

// step runs browser actions against one deadline.
func step(t *testing.T, ctx context.Context, what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// read runs one browser action that returns a value.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshotDir is where shot writes: $SETT_SCREENSHOTS (relative to the
// repository root, as `make screenshots` sets it to docs/img) when set,
// else a temporary directory, so that a test run never changes the
// source tree.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SETT_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir) // tests run in integration/
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("SETT_SCREENSHOTS=%s: %v", os.Getenv("SETT_SCREENSHOTS"), err)
	}
	return dir
}

// shot writes a full-page PNG into dir (see screenshotDir).
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := read(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// notPwned asserts that no payload ran on the current page.
func notPwned(t *testing.T, ctx context.Context, dialogs *dialogLog) {
	t.Helper()
	pwned := read(t, ctx, "read window.pwned", chromedp.Evaluate[bool](`window.pwned !== undefined`))
	if d := dialogs.all(); pwned || len(d) > 0 {
		t.Fatalf("a payload executed in the console (window.pwned set: %v, dialogs: %v)", pwned, d)
	}
}

// TestConsoleInBrowser drives the real console in headless Chromium,
// through a reverse proxy on a sub-path that authenticates the user: a
// goal whose Plan is gated and reviewed (rejected once) shows up without
// reload, is approved by button and by keyboard, shows v1 → v2 with both
// reviews in its graph, and completes; the approvals record the proxy's
// user. Screenshots of each step go to a temporary directory, or to
// $SETT_SCREENSHOTS (`make screenshots` writes docs/img).
func TestConsoleInBrowser(t *testing.T) {
	shots := screenshotDir(t)
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s}
approvals:
  artefact_types: ["Plan"]
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sett-reviewer", "--require", "tests"], bidding_strategy: review, consumes: ["Plan"]}
`)
	bin := stacktest.BuildCLI(t)
	ctx, dialogs := browser(t)
	s.Up("planner", "reviewer")
	const tok = "e2e-console-token-0123456789"
	direct := startConsole(t, s, bin.Sett, "--token", tok, "--base-path", "/ops/sett", "--trusted-user-header", "X-Forwarded-User", "--by", "nobody")
	if direct.Path != "/ops/sett/" || direct.Query().Get("token") != tok {
		t.Fatalf("sett ui printed %s, want the base path and the token", direct)
	}
	// The proxy authenticates "carol" and passes her name on; it keeps
	// the Host, as proxies configured for the console do.
	target := &url.URL{Scheme: "http", Host: direct.Host}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
		pr.Out.Header.Set("X-Forwarded-User", "carol")
	}})
	t.Cleanup(proxy.Close)
	base := proxy.URL + "/ops/sett"

	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	step(t, ctx, "open the console through the proxy", wait,
		chromedp.Navigate(base+"/?token="+tok), chromedp.WaitVisible(css(`#live-dot.on`)))
	if loc := read(t, ctx, "read the location", chromedp.Location()); strings.Contains(loc, tok) {
		t.Errorf("the token stays in the address bar: %s", loc)
	}

	wf := s.PostGoal(consoleGoal)
	row := fmt.Sprintf(`tr[id="wf-%s"]`, wf)
	step(t, ctx, "the new workflow appears without reload", wait, chromedp.WaitVisible(css(row)))
	if goal := read(t, ctx, "read the goal cell", chromedp.Text(css(row+" td.goal"))); !strings.Contains(goal, "<script>window.pwned=1</script>") {
		t.Errorf("the goal shows as %q, want its markup as text", goal)
	}
	notPwned(t, ctx, dialogs)
	shot(t, ctx, shots, "console-list.png")

	v1 := waitPending(t, s, wf, 1)
	v1sel := fmt.Sprintf(`section[data-artefact="%s"]`, v1.ArtefactID)
	step(t, ctx, "go to the approvals inbox", wait, chromedp.Click(css(`#nav-approvals`)), chromedp.WaitVisible(css(v1sel)))
	notPwned(t, ctx, dialogs)
	shot(t, ctx, shots, "console-approvals.png")
	step(t, ctx, "approve v1 by button", wait, chromedp.Click(css(v1sel+` button.approve`)), chromedp.WaitNotPresent(css(v1sel)))

	v2 := waitPending(t, s, wf, 2)
	v2sel := fmt.Sprintf(`section[data-artefact="%s"]`, v2.ArtefactID)
	step(t, ctx, "v2 appears in the inbox without reload", wait, chromedp.WaitVisible(css(v2sel)))
	// A decision on the superseded v1 (a stale form) is refused with the
	// reason shown.
	step(t, ctx, "submit a stale decision on v1", wait,
		chromedp.SetAttributeValue(css(v2sel+` .approve-form input[name=artefact]`), "value", v1.ArtefactID),
		chromedp.Click(css(v2sel+` button.approve`)), chromedp.WaitVisible(css(`#error`)))
	if refusal := read(t, ctx, "read the refusal", chromedp.Text(css(`#error`))); !strings.Contains(refusal, "Refused") || !strings.Contains(refusal, "version 2") {
		t.Errorf("stale decision shows %q, want it refused naming version 2", refusal)
	}
	shot(t, ctx, shots, "console-stale-decision.png")
	step(t, ctx, "approve v2 with the keyboard", wait,
		chromedp.WaitVisible(css(v2sel+`.focus`)), chromedp.KeyEvent("a"), chromedp.WaitNotPresent(css(v2sel)))

	step(t, ctx, "open the workflow", wait, chromedp.Navigate(base+"/w/"+wf), chromedp.WaitVisible(css(`#graph`)))
	step(t, ctx, "the workflow completes on the page", 2*wait,
		chromedp.WaitVisible(chromedp.Search(`//span[@id="wf-status" and text()="completed"]`)))
	nodes := read(t, ctx, "read the graph", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#graph .node')).map(n => n.getAttribute('class') + ' | ' + n.textContent.replace(/\s+/g, ' ').trim())`))
	graph := strings.Join(nodes, "\n")
	for _, want := range []string{"Plan v1", "Plan v2", "review-no", "review-ok", "approved by carol", "→ rework", "bids"} {
		if !strings.Contains(graph, want) {
			t.Errorf("the graph lacks %q:\n%s", want, graph)
		}
	}
	if n := read(t, ctx, "count version edges", chromedp.Evaluate[int](`document.querySelectorAll('#graph path.edge.version').length`)); n < 1 {
		t.Errorf("no v1 → v2 edge in the graph")
	}
	notPwned(t, ctx, dialogs)
	shot(t, ctx, shots, "console-workflow.png")
	step(t, ctx, "compare v1 and v2", wait, chromedp.Click(css(`a.diff-link`)), chromedp.WaitVisible(css(`#diff`)))
	if n := read(t, ctx, "count changed lines", chromedp.Evaluate[int](`document.querySelectorAll('#diff tr.add, #diff tr.change').length`)); n == 0 {
		t.Error("the diff of v1 and v2 shows no change")
	}
	shot(t, ctx, shots, "console-diff.png")

	reviews := stacktest.OfType(s.Artefacts(wf), "HumanReview")
	if len(reviews) != 2 {
		t.Fatalf("%d human reviews, want the two approvals", len(reviews))
	}
	for _, hr := range reviews {
		if hr.Metadata["decided_by"] != "carol" || hr.Metadata["channel"] != string(blackboard.ChannelConsole) {
			t.Errorf("approval recorded as %q via %q, want carol via console", hr.Metadata["decided_by"], hr.Metadata["channel"])
		}
	}
}
