package httpprobe

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(http.StatusOK)
		case "/failing":
			http.Error(w, "redis: not reachable\nmore detail", http.StatusServiceUnavailable)
		case "/empty":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	for _, tc := range []struct {
		name, addr, path string
		want             string // "" for nil
	}{
		{"ready", addr, "/readyz", ""},
		{"first line of a failing check", addr, "/failing", "/failing answered 503 Service Unavailable: redis: not reachable"},
		{"status alone without a body", addr, "/empty", "/empty answered 503 Service Unavailable"},
		{"connection refused, without the URL", closed, "/readyz", "/readyz: dial tcp " + closed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Get(context.Background(), tc.addr, tc.path, time.Minute)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Get = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("Get = %v, want an error starting %q", err, tc.want)
			case tc.want != "" && strings.Contains(err.Error(), "http://"):
				t.Fatalf("Get = %v: the URL is repeated", err)
			}
		})
	}
}
