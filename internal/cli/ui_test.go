package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestUIRefusesAShortToken(t *testing.T) {
	e := newTestEnv(t)
	_, _, err := e.run(t, "ui", "--token", "short")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("sett ui --token short: %v (exit %d), want a usage error naming the minimum", err, ExitCode(err))
	}
}

// TestUIServesTheInstance runs `sett ui` against a seeded workflow: it
// prints a loopback URL with the token, serves the workflow's graph with
// both versions and reviews to a bearer client, refuses an anonymous one,
// and stops when its context ends.
func TestUIServesTheInstance(t *testing.T) {
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := e.runContext(ctx, "ui", "--listen", "127.0.0.1:0", "--token", "cli-test-token-0123456789", "--read-only")
		done <- err
	}()
	out := e.out.waitUntil(t, "the console URL", func(s string) bool { return strings.Contains(s, "token=") })
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/)\?token=cli-test-token-0123456789`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Read-only") {
		t.Fatalf("sett ui printed %q, want a loopback URL with the token and the read-only note", out)
	}
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", m[1]+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("w/"+s.goal.ID, ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	code, body := get("w/"+s.goal.ID, "cli-test-token-0123456789")
	if code != http.StatusOK {
		t.Fatalf("workflow page: %d\n%s", code, body)
	}
	for _, want := range []string{s.planV1.Type + " v1", s.planV2.Type + " v2", `class="node review-no"`, `class="node review-ok"`,
		`class="node failure dead"`, `class="edge version"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the workflow page lacks %q", want)
		}
	}
	if strings.Contains(body, `method="post"`) {
		t.Error("a read-only console renders a form")
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("sett ui after its context ended: %v", err)
	}
}
