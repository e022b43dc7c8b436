package observability

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/settdev/sett/internal/metrics"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerEndpoints(t *testing.T) {
	t.Parallel()
	s := NewServer("127.0.0.1:0")
	var ready atomic.Bool
	s.AddReadyCheck("redis", func(context.Context) error {
		if !ready.Load() {
			return errors.New("not connected")
		}
		return nil
	})
	c := s.Registry().NewCounter(metrics.Opts{Name: "sett_test_total", Help: "test"})
	c.Inc()
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	base := "http://" + s.Addr()

	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "redis: not connected") {
		t.Errorf("/readyz while not ready = %d %q, want 503 naming the failed check", code, body)
	}
	ready.Store(true)
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz when ready = %d", code)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "sett_test_total 1") ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics = %d, lacks the registered counter or the Go collector", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := NewLogger(&buf, LogJSON, "info", "cub", "demo")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug().Msg("hidden")
	log.Info().Str("claim_id", "c1").Msg("shown")
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, `"component":"cub"`) ||
		!strings.Contains(out, `"instance":"demo"`) || !strings.Contains(out, `"claim_id":"c1"`) {
		t.Fatalf("log output %q", out)
	}
	if _, err := NewLogger(&buf, "yaml", "info", "x", ""); err == nil {
		t.Error("an unknown format was accepted")
	}
	if _, err := NewLogger(&buf, LogJSON, "loud", "x", ""); err == nil {
		t.Error("an unknown level was accepted")
	}
}
