package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestLoopbackAddr(t *testing.T) {
	tests := []struct{ addr, want, wantErr string }{
		{":8080", "127.0.0.1:8080", ""},
		{"0.0.0.0:9000", "127.0.0.1:9000", ""},
		{"[::]:8081", "127.0.0.1:8081", ""},
		{"10.0.0.5:8080", "10.0.0.5:8080", ""},
		{"8080", "", "SETT_HTTP_ADDR"},
	}
	for _, tt := range tests {
		got, err := loopbackAddr(tt.addr)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("loopbackAddr(%q) err = %v, want one naming %s", tt.addr, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("loopbackAddr(%q) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
}

func TestHealthcheckAsksReadyz(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			http.Error(w, "not leading yet", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := Healthcheck(context.Background(), addr); err != nil {
		t.Errorf("ready daemon: %v", err)
	}
	ready.Store(false)
	if err := Healthcheck(context.Background(), addr); err == nil || !strings.Contains(err.Error(), "not leading yet") {
		t.Errorf("unready daemon: %v, want its answer", err)
	}
	srv.Close()
	if err := Healthcheck(context.Background(), addr); err == nil {
		t.Error("a daemon that is gone passed the check")
	}
}
