package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestConsoleURL(t *testing.T) {
	for _, tt := range []struct{ listen, base, want string }{
		{"0.0.0.0:7070", "", "http://127.0.0.1:7070/"},
		{":7070", "/sett/", "http://127.0.0.1:7070/sett/"},
		{"127.0.0.1:9000", "/x", "http://127.0.0.1:9000/x/"},
	} {
		if got, err := consoleURL(tt.listen, tt.base); err != nil || got != tt.want {
			t.Errorf("consoleURL(%q, %q) = %q, %v; want %q", tt.listen, tt.base, got, err, tt.want)
		}
	}
	if _, err := consoleURL("7070", ""); err == nil || !isUsage(err) {
		t.Errorf("a listen address without a port: %v", err)
	}
}

func TestUIHealthcheck(t *testing.T) {
	code := http.StatusUnauthorized // a console refuses a request without its token
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	listen := strings.TrimPrefix(srv.URL, "http://")
	if err := uiHealthcheck(context.Background(), listen, ""); err != nil {
		t.Errorf("a serving console: %v", err)
	}
	srv.Close()
	if err := uiHealthcheck(context.Background(), listen, ""); err == nil {
		t.Error("no console, yet the check passed")
	}
}
