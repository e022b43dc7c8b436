package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxBody bounds a request body.
const maxBody = 16 << 20

// Server is the fake provider: an http.Handler serving
//
//	POST /v1/chat/completions (and /chat/completions)  OpenAI Chat Completions
//	POST /v1/messages (and /messages)                  Anthropic Messages
//	GET  /v1/models                                     the model list (some clients probe it)
//	GET  /requests                                      every Record so far, as a JSON array
//	DELETE /requests                                    forget the records and restart every rule's sequence
//	GET  /healthz                                       200 "ok"
//
// It is safe for concurrent use; requests are answered one at a time so
// that sequences are deterministic.
type Server struct {
	mu      sync.Mutex
	script  Script
	ruleN   []int // answers given per rule
	faultN  []int // requests failed per fault
	records []Record
	journal io.Writer
	logFunc func(format string, args ...any)
	now     func() time.Time
}

// New returns a Server that answers by s. It does not validate s (see
// Script.Validate): a rule without answers answers an empty text.
func New(s Script) *Server {
	return &Server{script: s, ruleN: make([]int, len(s.Rules)), faultN: make([]int, len(s.Faults)), now: time.Now}
}

// SetJournal makes the Server append each Record to w as one JSON line
// (nil stops it). Write errors are ignored: the records stay in memory.
func (s *Server) SetJournal(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.journal = w
}

// SetLogFunc makes the Server log one line per request (nil: none).
func (s *Server) SetLogFunc(f func(format string, args ...any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logFunc = f
}

// Requests returns a copy of the records so far, oldest first.
func (s *Server) Requests() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.records...)
}

// Reset forgets the records and restarts every rule's and fault's count.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = nil
	clear(s.ruleN)
	clear(s.faultN)
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/healthz" && r.Method == http.MethodGet:
		_, _ = io.WriteString(w, "ok\n")
	case path == "/requests" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		recs := s.Requests()
		if recs == nil {
			recs = []Record{}
		}
		_ = json.NewEncoder(w).Encode(recs)
	case path == "/requests" && r.Method == http.MethodDelete:
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case (path == "/v1/models" || path == "/models") && r.Method == http.MethodGet:
		model := s.script.Model
		if model == "" {
			model = "fake-model"
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list",
			"data": []map[string]any{{"id": model, "object": "model", "created": 0, "owned_by": "fakellm"}}})
	case (path == "/v1/chat/completions" || path == "/chat/completions") && r.Method == http.MethodPost:
		s.serve(w, r, openAIAPI{})
	case (path == "/v1/messages" || path == "/messages") && r.Method == http.MethodPost:
		s.serve(w, r, anthropicAPI{})
	default:
		http.Error(w, fmt.Sprintf("fakellm: no route for %s %s; POST /v1/chat/completions or /v1/messages", r.Method, r.URL.Path), http.StatusNotFound)
	}
}

// api is one provider's wire format.
type api interface {
	name() string
	// parse reads a request body into a Record's request fields.
	parse(body []byte, rec *Record) error
	// hasKey reports whether the request carries key (or any key when
	// key is "").
	hasKey(r *http.Request, key string) bool
	// answer writes a successful answer.
	answer(w http.ResponseWriter, rec Record, inTokens, outTokens int64)
	// fail writes an error answer.
	fail(w http.ResponseWriter, status int, message string)
}

// serve answers one model request: parse, record, fault, rule.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, a api) {
	rec := Record{API: a.name(), Path: r.URL.Path, Fault: -1, ReceivedAt: s.now()}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil {
		err = a.parse(body, &rec)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Seq = len(s.records) + 1
	rec.HasKey = a.hasKey(r, "")
	status, message := http.StatusOK, ""
	switch {
	case err != nil:
		status, message = http.StatusBadRequest, "fakellm: "+err.Error()
	case s.script.APIKey != "" && !a.hasKey(r, s.script.APIKey):
		status, message = http.StatusUnauthorized, "fakellm: invalid API key"
	default:
		if i, f, ok := s.fault(rec); ok {
			rec.Fault = i
			status, message = f.Status, f.Message
			if message == "" {
				message = "fakellm: injected " + http.StatusText(f.Status)
			}
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
		} else if i, ok := s.rule(rec); ok {
			rule := s.script.Rules[i]
			rec.Rule = rule.Name
			if n := len(rule.Answers); n > 0 {
				rec.Answer = rule.Answers[min(s.ruleN[i], n-1)]
			}
			s.ruleN[i]++
		} else {
			status, message = http.StatusBadRequest, s.noRule()
		}
	}
	rec.Status = status
	if status == http.StatusOK {
		if rec.Model == "" || s.script.Model != "" {
			rec.Model = orDefault(s.script.Model, "fake-model")
		}
		a.answer(w, rec, tokens(rec.Prompt()), tokens(rec.Answer))
	} else {
		rec.Answer = message
		a.fail(w, status, message)
	}
	rec.RespondedAt = s.now()
	s.records = append(s.records, rec)
	if s.journal != nil {
		if b, err := json.Marshal(rec); err == nil {
			_, _ = s.journal.Write(append(b, '\n'))
		}
	}
	if s.logFunc != nil {
		s.logFunc("fakellm: #%d %s %s model=%q rule=%q fault=%d -> %d", rec.Seq, rec.API, rec.Path, rec.Model, rec.Rule, rec.Fault, rec.Status)
	}
}

// fault returns the first fault that matches rec and has requests left,
// and counts it. Callers hold mu.
func (s *Server) fault(rec Record) (int, Fault, bool) {
	for i, f := range s.script.Faults {
		if (f.Times <= 0 || s.faultN[i] < f.Times) && matches(f.Match, rec.Prompt()) {
			s.faultN[i]++
			return i, f, true
		}
	}
	return 0, Fault{}, false
}

// rule returns the first rule that matches rec. Callers hold mu.
func (s *Server) rule(rec Record) (int, bool) {
	for i, r := range s.script.Rules {
		if matches(r.Match, rec.Prompt()) {
			return i, true
		}
	}
	return 0, false
}

// noRule says that no rule matched and which rules there are.
func (s *Server) noRule() string {
	var names []string
	for _, r := range s.script.Rules {
		names = append(names, fmt.Sprintf("%s %q", r.Name, r.Match))
	}
	if len(names) == 0 {
		return "fakellm: the script has no rules; give one with --script"
	}
	return "fakellm: no rule matches this prompt; the rules are " + strings.Join(names, ", ")
}

func matches(subs []string, prompt string) bool {
	for _, sub := range subs {
		if !strings.Contains(prompt, sub) {
			return false
		}
	}
	return true
}

// tokens is the fake token count of a text: one per four bytes, at least
// one for a non-empty text.
func tokens(s string) int64 {
	return int64((len(s) + 3) / 4)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
