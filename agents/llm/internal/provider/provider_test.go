package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/settdev/sett/internal/fakellm"
)

// fakeClock is the clock of a Retrier under test: its timers record each
// wait, move the clock forward by it and fire at once, so no test sleeps.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

// newFakeClock starts at the real time (whole seconds, as HTTP dates have
// them): a Retrier's deadline also bounds the real context of its calls.
func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now().Truncate(time.Second)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

func (c *fakeClock) NewTimer() backoff.Timer { return &fakeTimer{c: c, ch: make(chan time.Time, 1)} }

type fakeTimer struct {
	c  *fakeClock
	ch chan time.Time
}

func (t *fakeTimer) Start(d time.Duration) {
	t.c.mu.Lock()
	t.c.now = t.c.now.Add(d)
	t.c.waits = append(t.c.waits, d)
	now := t.c.now
	t.c.mu.Unlock()
	t.ch <- now
}
func (t *fakeTimer) Stop()               {}
func (t *fakeTimer) C() <-chan time.Time { return t.ch }
func (c *fakeClock) retrier() *Retrier {
	return &Retrier{NowFunc: c.Now, NewTimerFunc: c.NewTimer, RandomizationFactor: -1}
}

func serve(t *testing.T, s fakellm.Script) (*fakellm.Server, *httptest.Server) {
	t.Helper()
	fs := fakellm.New(s)
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv
}

var verdictSchema = map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "string"}},
	"required": []string{"verdict"}, "additionalProperties": false}

func TestOpenAIRequestAndAnswer(t *testing.T) {
	fs, srv := serve(t, fakellm.Script{Rules: []fakellm.Rule{{Name: "r", Match: []string{"SYS", "USER"}, Answers: []string{`{"verdict":"approve"}`}}}})
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key-123"})
	temp := 0.0
	resp, err := p.Complete(context.Background(), Request{Model: "gpt-x", System: "SYS", User: "USER", MaxTokens: 99, Temperature: &temp,
		JSON: true, Schema: verdictSchema, SchemaName: "verdict"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"verdict":"approve"}` || resp.Model != "gpt-x" || resp.Stop != StopDone || resp.InputTokens == 0 || resp.OutputTokens == 0 {
		t.Errorf("resp = %+v", resp)
	}
	rec := fs.Requests()[0]
	if rec.System != "SYS" || rec.User != "USER" || rec.ResponseFormat != "json_schema" || rec.MaxTokens != 99 || !rec.HasKey || rec.Model != "gpt-x" {
		t.Errorf("record = %+v", rec)
	}
}

func TestOpenAIWithoutKeySendsNone(t *testing.T) {
	fs, srv := serve(t, fakellm.Script{Rules: []fakellm.Rule{{Name: "r", Answers: []string{"ok"}}}})
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"})
	if _, err := p.Complete(context.Background(), Request{Model: "llama3", User: "hi"}); err != nil {
		t.Fatal(err)
	}
	if rec := fs.Requests()[0]; rec.HasKey || rec.ResponseFormat != "" {
		t.Errorf("record = %+v: a local server needs no key, and text needs no response_format", rec)
	}
}

func TestOpenAIFallsBackWhenResponseFormatIsRefused(t *testing.T) {
	fs := fakellm.New(fakellm.Script{Rules: []fakellm.Rule{{Name: "r", Answers: []string{`{"verdict":"approve"}`}}}})
	var formats []string
	var mu sync.Mutex
	// A server that knows only json_object, as some OpenAI-compatible
	// servers do.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body := string(raw)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(body, `"json_schema"`):
			formats = append(formats, "json_schema")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"response_format type json_schema is not supported","type":"invalid_request_error"}}`))
			return
		case strings.Contains(body, `"json_object"`):
			formats = append(formats, "json_object")
		default:
			formats = append(formats, "none")
		}
		r.Body = io.NopCloser(strings.NewReader(body))
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var logged []string
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", LogFunc: func(f string, a ...any) { logged = append(logged, f) }})
	req := Request{Model: "m", User: "u", JSON: true, Schema: verdictSchema, SchemaName: "verdict"}
	for range 2 {
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(formats, ","); got != "json_schema,json_object,json_object" {
		t.Errorf("formats sent = %s: refused once, then json_object remembered", got)
	}
	if len(logged) != 1 {
		t.Errorf("logged %d lines", len(logged))
	}
}

func TestRetryAfter429ThenAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter func(now time.Time) string
		want       time.Duration
	}{
		{name: "seconds", retryAfter: func(time.Time) string { return "7" }, want: 7 * time.Second},
		{name: "http date", retryAfter: func(now time.Time) string { return now.Add(12 * time.Second).Format(http.TimeFormat) }, want: 12 * time.Second},
	} {
		for _, provider := range []string{"openai", "anthropic"} {
			t.Run(tc.name+"/"+provider, func(t *testing.T) {
				clock := newFakeClock()
				fs, srv := serve(t, fakellm.Script{
					Rules:  []fakellm.Rule{{Name: "r", Answers: []string{"the answer"}}},
					Faults: []fakellm.Fault{{Status: 429, RetryAfter: tc.retryAfter(clock.Now()), Times: 1}},
				})
				p := newProvider(provider, srv.URL, clock.Now)
				r := clock.retrier()
				var notified []time.Duration
				r.NotifyFunc = func(err error, wait time.Duration) { notified = append(notified, wait) }
				resp, err := r.Complete(context.Background(), p, Request{Model: "m", User: "u"})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != "the answer" || resp.Attempts != 2 {
					t.Errorf("resp = %+v", resp)
				}
				if recs := fs.Requests(); len(recs) != 2 || recs[0].Status != 429 || recs[1].Status != 200 {
					t.Fatalf("requests = %+v: one 429 then one answer (the SDK must not retry on its own)", recs)
				}
				if w := clock.Waits(); len(w) != 1 || w[0] != tc.want || notified[0] != tc.want {
					t.Errorf("waits = %v, want [%s] (Retry-After beats the 1s backoff)", w, tc.want)
				}
			})
		}
	}
}

func newProvider(name, url string, now func() time.Time) Provider {
	if name == "anthropic" {
		return NewAnthropic(AnthropicConfig{BaseURL: url, APIKey: "sk-ant-test", NowFunc: now})
	}
	return NewOpenAI(OpenAIConfig{BaseURL: url + "/v1", APIKey: "sk-test", NowFunc: now})
}

func TestRetryBackoffGrowsAndStops(t *testing.T) {
	clock := newFakeClock()
	fs, srv := serve(t, fakellm.Script{Rules: []fakellm.Rule{{Name: "r", Answers: []string{"x"}}},
		Faults: []fakellm.Fault{{Status: 500}}})
	r := clock.retrier()
	r.MaxAttempts = 4
	_, err := r.Complete(context.Background(), newProvider("openai", srv.URL, clock.Now), Request{Model: "m", User: "u"})
	var gu *GaveUpError
	if !errors.As(err, &gu) || gu.Attempts != 4 || !strings.Contains(err.Error(), "4 attempts made (LLM_MAX_ATTEMPTS)") ||
		!strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Fatalf("err = %v", err)
	}
	if w := clock.Waits(); len(w) != 3 || w[0] != time.Second || w[1] != 2*time.Second || w[2] != 4*time.Second {
		t.Errorf("waits = %v, want 1s 2s 4s", w)
	}
	if n := len(fs.Requests()); n != 4 {
		t.Errorf("%d requests", n)
	}
}

func TestRetryStopsAtTheDeadline(t *testing.T) {
	clock := newFakeClock()
	fs, srv := serve(t, fakellm.Script{Rules: []fakellm.Rule{{Name: "r", Answers: []string{"x"}}},
		Faults: []fakellm.Fault{{Status: 429, RetryAfter: "120"}}})
	r := clock.retrier()
	r.Deadline = clock.Now().Add(30 * time.Second)
	_, err := r.Complete(context.Background(), newProvider("anthropic", srv.URL, clock.Now), Request{Model: "m", User: "u"})
	var gu *GaveUpError
	if !errors.As(err, &gu) || gu.Attempts != 1 || !strings.Contains(err.Error(), "the provider asks to retry after 2m0s, after the deadline (30s left of LLM_TIMEOUT)") {
		t.Fatalf("err = %v", err)
	}
	if len(clock.Waits()) != 0 || len(fs.Requests()) != 1 {
		t.Errorf("waited %v, %d requests: a wait past the deadline is not started", clock.Waits(), len(fs.Requests()))
	}
	if !Classify(gu.Last).Retryable {
		t.Error("the last error stays a retryable one")
	}
}

func TestAuthErrorsAreNotRetried(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			clock := newFakeClock()
			fs, srv := serve(t, fakellm.Script{APIKey: "the-right-key", Rules: []fakellm.Rule{{Name: "r", Answers: []string{"x"}}}})
			_, err := clock.retrier().Complete(context.Background(), newProvider(provider, srv.URL, clock.Now), Request{Model: "m", User: "u"})
			var se *StatusError
			if !errors.As(err, &se) || se.Code != 401 || !Classify(err).Auth || Classify(err).Retryable {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), provider+" answered 401 Unauthorized: fakellm: invalid API key") {
				t.Errorf("err = %v", err)
			}
			if len(fs.Requests()) != 1 || len(clock.Waits()) != 0 {
				t.Errorf("a refused key was retried")
			}
		})
	}
}

func TestTransportErrorsAreRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	clock := newFakeClock()
	r := clock.retrier()
	r.MaxAttempts = 2
	_, err := r.Complete(context.Background(), newProvider("openai", url, clock.Now), Request{Model: "m", User: "u"})
	var gu *GaveUpError
	if !errors.As(err, &gu) || gu.Attempts != 2 {
		t.Fatalf("err = %v", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Class
	}{
		{&StatusError{Code: 429, RetryAfter: time.Second}, Class{Retryable: true, RetryAfter: time.Second}},
		{&StatusError{Code: 503}, Class{Retryable: true}},
		{&StatusError{Code: 408}, Class{Retryable: true}},
		{&StatusError{Code: 401}, Class{Auth: true}},
		{&StatusError{Code: 403}, Class{Auth: true}},
		{&StatusError{Code: 400}, Class{}},
		{&StatusError{Code: 404}, Class{}},
		{context.Canceled, Class{}},
		{errors.New("connection reset by peer"), Class{Retryable: true}},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"2.5"}}, 2500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"999999"}}, time.Hour},
		{http.Header{"Retry-After": {"soon"}}, 0},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tc.h, got, tc.want)
		}
	}
}
