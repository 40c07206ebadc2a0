// Package anthropic is a model.Provider for Anthropic's Messages API,
// through github.com/anthropics/anthropic-sdk-go/v2: the answer streamed
// as it comes (thinking marked apart from text, never shown), tool use,
// thinking kept with its signature and sent back as the API requires,
// images and PDFs as the API takes them, and the cache's ephemeral
// breakpoints where they keep the prompt cached from one call to the
// next.
//
// cmd wires it to a model.Route whose Provider is model.ProviderAnthropic:
//
//	p, err := anthropic.New(route, anthropic.Options{APIKey: env[route.KeyEnv]})
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// Name is the provider's name in the answers it gives.
const Name = model.ProviderAnthropic

// DefaultMaxTokens bounds an answer whose Request leaves MaxTokens 0: the
// Messages API has no default of its own.
const DefaultMaxTokens = 8192

// The thinking configurations Options.Thinking names.
const (
	ThinkingDefault  = ""         // send none: the model's own default
	ThinkingAdaptive = "adaptive" // the model decides when and how much
	ThinkingEnabled  = "enabled"  // manual, with Options.ThinkingBudget
	ThinkingDisabled = "disabled" // none
)

// Options says how the provider reaches Anthropic. The SDK reads nothing
// from the environment: the key and address come from here and the Route.
type Options struct {
	// BaseURL is Anthropic's address without /v1; "" is the Route's, else
	// model.AnthropicURL.
	BaseURL string
	// APIKey is the key, sent as anthropic-sdk-go v2 sends it
	// (Authorization: Bearer). Required.
	APIKey string
	// HTTPClient makes the calls; nil is a client of the provider's own.
	// A call's context bounds it.
	HTTPClient *http.Client
	// Retries is how many times a call the API refused as retryable (429,
	// 529, 5xx) before its answer began is sent again, with the SDK's
	// backoff between; 0 sends it once, and the caller decides
	// (model.Error.Retryable).
	Retries int
	// MaxTokens bounds an answer whose Request leaves MaxTokens 0; 0 is
	// DefaultMaxTokens.
	MaxTokens int
	// Thinking is one of ThinkingDefault, ThinkingAdaptive,
	// ThinkingEnabled, ThinkingDisabled; ThinkingBudget is the tokens
	// thinking may take with ThinkingEnabled (at least 1024).
	Thinking       string
	ThinkingBudget int
	// Now is the clock latency is measured with; nil is time.Now.
	Now func() time.Time
}

// Provider streams answers from Anthropic's Messages API. Safe for
// concurrent use.
type Provider struct {
	client         sdk.Client
	maxTokens      int64
	thinking       string
	thinkingBudget int64
	now            func() time.Time
}

var _ model.Provider = (*Provider)(nil)

// New makes a provider for route (Provider "anthropic", or "" for any
// address speaking the Messages API) with o.
func New(route model.Route, o Options) (*Provider, error) {
	if route.Provider != "" && route.Provider != model.ProviderAnthropic {
		return nil, fmt.Errorf("anthropic: route is %s's, not anthropic's", route.Provider)
	}
	if o.APIKey == "" {
		env := route.KeyEnv
		if env == "" {
			env = model.EnvAnthropicKey
		}
		return nil, fmt.Errorf("anthropic: no key: set %s", env)
	}
	base := o.BaseURL
	if base == "" {
		base = route.BaseURL
	}
	if base == "" {
		base = model.AnthropicURL
	}
	if o.Retries < 0 {
		return nil, fmt.Errorf("anthropic: retries %d: must not be negative", o.Retries)
	}
	p := &Provider{maxTokens: DefaultMaxTokens, thinking: o.Thinking, thinkingBudget: int64(o.ThinkingBudget), now: o.Now}
	if o.MaxTokens > 0 {
		p.maxTokens = int64(o.MaxTokens)
	}
	switch o.Thinking {
	case ThinkingDefault, ThinkingAdaptive, ThinkingDisabled:
	case ThinkingEnabled:
		if o.ThinkingBudget < 1024 {
			return nil, fmt.Errorf("anthropic: thinking budget %d: at least 1024 tokens", o.ThinkingBudget)
		}
	default:
		return nil, fmt.Errorf("anthropic: thinking %q: one of adaptive, enabled, disabled or none", o.Thinking)
	}
	if p.now == nil {
		p.now = time.Now
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	p.client = sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(strings.TrimRight(base, "/")),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(o.Retries),
	)
	return p, nil
}

// Stream sends req to the Messages API, streaming, and calls onDelta with
// each piece of text and thinking as it comes. req.Model is the API's name
// of the model (Route.APIModel).
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	start := p.now()
	var h jsonx.Holes
	params := p.paramsHeld(req, &h)
	var opts []option.RequestOption
	if h.Held() > 0 {
		opts = append(opts, option.WithMiddleware(fillBody(&h)))
	}
	stream := p.client.Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var msg sdk.Message
	var text strings.Builder
	var texts int // text blocks begun, so a later one starts on a new paragraph
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, err)
		}
		var d model.Delta
		switch ev.Type {
		case "content_block_start":
			if ev.ContentBlock.Type == "text" {
				if texts > 0 && text.Len() > 0 {
					d.Text = "\n\n"
				}
				texts++
				d.Text += ev.ContentBlock.Text
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				d.Text = ev.Delta.Text
			case "thinking_delta":
				d.Thinking = ev.Delta.Thinking
			}
		}
		if d == (model.Delta{}) {
			continue
		}
		text.WriteString(d.Text)
		if err := onDelta(d); err != nil {
			return model.Response{}, err
		}
	}
	if err := stream.Err(); err != nil {
		return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, classify(err))
	}
	if msg.ID == "" {
		return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, model.ClassifyError(0, "the stream ended before its message began"))
	}
	resp := model.Response{
		Text:       text.String(),
		StopReason: model.NormalizeStop(string(msg.StopReason)),
		Model:      string(msg.Model),
		Provider:   Name,
		ID:         msg.ID,
		Usage: model.Usage{
			In:         msg.Usage.InputTokens,
			Out:        msg.Usage.OutputTokens,
			CacheRead:  msg.Usage.CacheReadInputTokens,
			CacheWrite: msg.Usage.CacheCreationInputTokens,
		},
		Latency: p.now().Sub(start),
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "thinking":
			resp.Thinking = append(resp.Thinking, model.Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			resp.Thinking = append(resp.Thinking, model.Thinking{Redacted: b.Data})
		case "tool_use":
			resp.Calls = append(resp.Calls, model.ToolCall{ID: b.ID, Name: b.Name, Input: Input(string(b.Input))})
		}
	}
	return resp, nil
}

// fillBody is the middleware that sends a request whose large strings h
// holds: the SDK's body, placeholders and all, is read (it is small) and
// the request sent with a body that quotes each string as it is read
// (jsonx.Holes.SetBody), so none is copied; a request sent again reads it
// again from its start.
func fillBody(h *jsonx.Holes) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if err := h.SetBody(r); err != nil {
			return nil, err
		}
		return next(r)
	}
}

// classify makes the SDK's error of a refused call a *model.Error (an
// error event inside a stream has status 0); any other error, a context's
// end or a connection's, is returned as it is.
func classify(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	status := apiErr.StatusCode
	if status == http.StatusOK {
		status = 0
	}
	body := apiErr.RawJSON()
	if body == "" {
		body = apiErr.Message
	}
	return model.ClassifyError(status, body)
}
