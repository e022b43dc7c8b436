package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// JSONMode says how an OpenAI-compatible request asks for JSON.
type JSONMode string

// The JSON modes, strongest first. A server that refuses one (a 400 about
// response_format) is asked again with the next.
const (
	// JSONSchema sends response_format json_schema (Structured Outputs)
	// when the request has a schema, else json_object.
	JSONSchema JSONMode = "schema"
	// JSONObject sends response_format json_object (JSON mode).
	JSONObject JSONMode = "object"
	// JSONOff sends no response_format: the prompt asks for JSON and the
	// tolerant parser reads it.
	JSONOff JSONMode = "off"
)

// Valid reports whether m is a JSON mode.
func (m JSONMode) Valid() bool { return m == JSONSchema || m == JSONObject || m == JSONOff }

// OpenAIConfig configures an OpenAI-compatible provider.
type OpenAIConfig struct {
	// BaseURL is the API root including /v1
	// ("http://localhost:11434/v1" for Ollama); "" is OpenAI's.
	BaseURL string
	// APIKey is sent as a bearer token; "" sends none (local servers).
	APIKey string
	// JSONMode is the strongest way to ask for JSON; "" means JSONSchema.
	JSONMode JSONMode
	// HTTPClient replaces the SDK's client (tests); nil keeps it.
	HTTPClient *http.Client
	// NowFunc is the clock that resolves HTTP-date Retry-After headers; nil
	// is time.Now.
	NowFunc func() time.Time
	// LogFunc, when set, receives one line when the server refuses a JSON
	// mode and the request is sent again with a weaker one.
	LogFunc func(format string, args ...any)
}

// OpenAI is a Provider for OpenAI-compatible Chat Completions endpoints.
// It is safe for concurrent use.
type OpenAI struct {
	client openai.Client
	cfg    OpenAIConfig

	mu sync.Mutex
	// mode is the JSON mode this server accepts, weakened when it
	// refuses one.
	mode JSONMode
}

// NewOpenAI returns a provider for cfg. The SDK's own retries are off: the
// Retrier is the one retry policy.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.JSONMode == "" {
		cfg.JSONMode = JSONSchema
	}
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &OpenAI{client: openai.NewClient(opts...), cfg: cfg, mode: cfg.JSONMode}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Complete sends one Chat Completions request. When the server refuses the
// response_format (a 400 or 422 that names it), it is sent again once per
// weaker JSON mode, and the weaker mode is kept for later calls.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	for {
		p.mu.Lock()
		mode := p.mode
		p.mu.Unlock()
		resp, err := p.complete(ctx, req, mode)
		if err == nil || !req.JSON || mode == JSONOff || !refusesResponseFormat(err) {
			return resp, err
		}
		weaker := JSONOff
		if mode == JSONSchema && req.Schema != nil {
			weaker = JSONObject
		}
		if p.cfg.LogFunc != nil {
			p.cfg.LogFunc("the server refused response_format in mode %q (%v); asking again with mode %q", mode, err, weaker)
		}
		p.mu.Lock()
		p.mode = weaker
		p.mu.Unlock()
	}
}

// refusesResponseFormat reports whether err is a server's refusal of the
// response_format parameter.
func refusesResponseFormat(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || (se.Code != http.StatusBadRequest && se.Code != http.StatusUnprocessableEntity) {
		return false
	}
	m := strings.ToLower(se.Message)
	for _, word := range []string{"response_format", "json_schema", "json_object", "schema", "json mode"} {
		if strings.Contains(m, word) {
			return true
		}
	}
	return false
}

func (p *OpenAI) complete(ctx context.Context, req Request, mode JSONMode) (Response, error) {
	params := openai.ChatCompletionNewParams{Model: req.Model}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	params.Messages = append(params.Messages, openai.UserMessage(req.User))
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.JSON {
		switch {
		case mode == JSONSchema && req.Schema != nil:
			params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: req.SchemaName, Schema: req.Schema, Strict: openai.Bool(true)}}
		case mode == JSONSchema || mode == JSONObject:
			params.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
		}
	}
	cc, err := p.client.Chat.Completions.New(ctx, params)
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			var h http.Header
			if apiErr.Response != nil {
				h = apiErr.Response.Header
			}
			msg := apiErr.Message
			if msg == "" {
				msg = apiErr.RawJSON()
			}
			return Response{}, newStatusError(p.Name(), apiErr.StatusCode, h, msg, p.cfg.NowFunc())
		}
		return Response{}, err
	}
	if len(cc.Choices) == 0 {
		return Response{}, &StatusError{Provider: p.Name(), Code: http.StatusOK, Message: "the answer holds no choices"}
	}
	ch := cc.Choices[0]
	r := Response{Text: ch.Message.Content, Model: cc.Model, InputTokens: cc.Usage.PromptTokens,
		OutputTokens: cc.Usage.CompletionTokens, Stop: StopReason(ch.FinishReason)}
	if r.Model == "" {
		r.Model = req.Model
	}
	if ch.Message.Refusal != "" {
		r.Text, r.Stop = ch.Message.Refusal, StopRefusal
	}
	if ch.FinishReason == "content_filter" {
		r.Stop = StopRefusal
	}
	return r, nil
}
