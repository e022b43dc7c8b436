package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StatusError is an HTTP error answer from a provider.
type StatusError struct {
	// Provider is the provider's name.
	Provider string
	// Code is the HTTP status code.
	Code int
	// Message is the provider's error message, if its body had one.
	Message string
	// RetryAfter is the Retry-After of the answer resolved to a duration
	// (Retry-After-Ms, Retry-After in seconds or as an HTTP date); 0 when
	// absent.
	RetryAfter time.Duration
}

// Error says which provider answered what.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s answered %d %s", e.Provider, e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// newStatusError builds a StatusError from an answer's status, headers and
// error message; now resolves an HTTP-date Retry-After.
func newStatusError(provider string, code int, h http.Header, message string, now time.Time) *StatusError {
	const maxMessage = 500
	message = strings.TrimSpace(message)
	if len(message) > maxMessage {
		message = message[:maxMessage] + "…"
	}
	return &StatusError{Provider: provider, Code: code, Message: message, RetryAfter: retryAfter(h, now)}
}

// maxRetryAfter caps what a provider may ask us to wait, so that a
// nonsense header cannot park the tool.
const maxRetryAfter = time.Hour

// retryAfter reads Retry-After-Ms (OpenAI), then Retry-After as seconds or
// as an HTTP date relative to now. Absent or unreadable: 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	if d < 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

// Class is what Classify makes of an error.
type Class struct {
	// Retryable: another attempt may succeed (429, 408, 409, 5xx,
	// transport errors).
	Retryable bool
	// RetryAfter is the wait the provider asked for; 0 when none.
	RetryAfter time.Duration
	// Auth: the provider refused the key (401, 403).
	Auth bool
}

// Classify says whether err may pass on a later attempt. Context
// cancellation and deadlines are not retryable: the caller's time is up.
func Classify(err error) Class {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Class{}
	}
	var se *StatusError
	if !errors.As(err, &se) {
		// Connection refused or reset, DNS, TLS, a body cut short: an
		// outage that may pass.
		return Class{Retryable: true}
	}
	switch c := se.Code; {
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		return Class{Auth: true}
	case c == http.StatusTooManyRequests || c == http.StatusRequestTimeout || c == http.StatusConflict || c >= 500:
		return Class{Retryable: true, RetryAfter: se.RetryAfter}
	}
	return Class{}
}
