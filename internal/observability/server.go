package observability

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/settdev/sett/internal/metrics"
)

// ReadyFunc reports why a component is not ready, or nil when it is.
type ReadyFunc func(ctx context.Context) error

// Server serves /healthz (the process is up), /readyz (every readiness
// check passes) and /metrics (Prometheus text format) for one daemon.
//
// Build it with NewServer; Run blocks until ctx ends. Safe for concurrent
// use.
type Server struct {
	addr     string
	registry *metrics.Registry
	mu       sync.Mutex
	checks   map[string]ReadyFunc
	listener net.Listener
}

// NewServer returns a server for addr (":8080", "127.0.0.1:0", ...) with a
// fresh metrics registry that already holds the Go runtime and process
// series.
func NewServer(addr string) *Server {
	return &Server{addr: addr, registry: metrics.NewStandardRegistry(), checks: map[string]ReadyFunc{}}
}

// Registry is where the daemon registers its metrics.
func (s *Server) Registry() *metrics.Registry { return s.registry }

// AddReadyCheck adds a named readiness check.
func (s *Server) AddReadyCheck(name string, f ReadyFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks[name] = f
}

// Listen binds the address; Addr is known afterwards. Run calls it when
// the caller did not.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		return nil
	}
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("observability: listen on %s: %w", s.addr, err)
	}
	s.listener = l
	return nil
}

// Addr is the bound address (after Listen).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return s.addr
	}
	return s.listener.Addr().String()
}

// Run serves until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", s.ready)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", metrics.ContentType)
		_ = s.registry.WriteText(w)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.listener) }()
	select {
	case err := <-errc:
		return fmt.Errorf("observability: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("observability: shutdown: %w", err)
	}
	return nil
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	checks := make(map[string]ReadyFunc, len(s.checks))
	for k, v := range s.checks {
		checks[k] = v
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var failed []string
	for name, f := range checks {
		if err := f(ctx); err != nil {
			failed = append(failed, name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		for _, f := range failed {
			_, _ = fmt.Fprintln(w, f)
		}
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}
