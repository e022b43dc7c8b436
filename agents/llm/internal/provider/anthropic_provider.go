package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// DefaultAnthropicMaxTokens bounds an answer when the request gives no
// MaxTokens: the Messages API requires a bound.
const DefaultAnthropicMaxTokens = 4096

// AnthropicConfig configures the Anthropic provider.
type AnthropicConfig struct {
	// BaseURL is the API root without /v1; "" is Anthropic's.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// HTTPClient replaces the SDK's client (tests); nil keeps it.
	HTTPClient *http.Client
	// NowFunc is the clock that resolves HTTP-date Retry-After headers; nil
	// is time.Now.
	NowFunc func() time.Time
}

// Anthropic is a Provider for the Anthropic Messages API. It is safe for
// concurrent use.
type Anthropic struct {
	client anthropic.Client
	now    func() time.Time
}

// NewAnthropic returns a provider for cfg. The SDK neither reads the
// environment (no profiles, no federation: only the key given here) nor
// retries: the Retrier is the one retry policy.
func NewAnthropic(cfg AnthropicConfig) *Anthropic {
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0), option.WithAPIKey(cfg.APIKey)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Anthropic{client: anthropic.NewClient(opts...), now: cfg.NowFunc}
}

// Name returns "anthropic".
func (p *Anthropic) Name() string { return "anthropic" }

// Complete sends one Messages request. The Messages API has no JSON mode
// that every deployment accepts: a structured answer is asked for by the
// prompt and read by the tolerant parser.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: maxTokens,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.User))},
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			var h http.Header
			if apiErr.Response != nil {
				h = apiErr.Response.Header
			}
			return Response{}, newStatusError(p.Name(), apiErr.StatusCode, h, errorMessage(apiErr.RawJSON()), p.now())
		}
		return Response{}, err
	}
	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	u := msg.Usage
	r := Response{Text: text.String(), Model: string(msg.Model),
		// What the prompt cost in all: fresh input plus cache writes and
		// reads, which Anthropic counts apart.
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens}
	if r.Model == "" {
		r.Model = req.Model
	}
	switch msg.StopReason {
	case anthropic.StopReasonMaxTokens:
		r.Stop = StopLength
	case anthropic.StopReasonRefusal:
		r.Stop = StopRefusal
	default:
		// end_turn, stop_sequence: the answer is complete.
		r.Stop = StopDone
	}
	return r, nil
}

// errorMessage returns the message of an Anthropic error body
// ({"type": "error", "error": {"type": ..., "message": ...}}), or the body
// itself when it has none.
func errorMessage(body string) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &doc) == nil && doc.Error.Message != "" {
		return doc.Error.Message
	}
	return body
}
