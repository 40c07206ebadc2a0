// Package openai is a model.Provider for the Chat Completions API, through
// github.com/openai/openai-go/v3, for every server that speaks it: OpenAI,
// OpenRouter (with the cost it reports), Ollama (at OLLAMA_HOST's /v1) and
// any compatible base URL. The answer streams as it comes, reasoning
// marked apart from text; streamed tool calls are rebuilt by the SDK's
// ChatCompletionAccumulator; images go as data URLs, audio as
// input_audio, PDFs as file parts; usage is read from the stream's last
// chunk, with the cache's share and OpenRouter's usage.cost.
//
// cmd wires it to a model.Route whose Provider is model.ProviderOpenAI,
// model.ProviderOpenRouter or model.ProviderOllama, or to any compatible
// server by its address:
//
//	p, err := openai.New(route, openai.Options{APIKey: env[route.KeyEnv]})
package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// OllamaKey is the key sent to Ollama when none is given: Ollama takes
// none, and reads none it is sent.
const OllamaKey = "ollama"

// Options says how the provider reaches the server. The SDK reads nothing
// from the environment: the key and address come from here and the Route.
type Options struct {
	// BaseURL is the API's address, with its /v1 (as OPENAI_BASE_URL
	// is); "" is the Route's (Ollama's host with /v1 added).
	BaseURL string
	// APIKey is the key, sent as Authorization: Bearer. Required for
	// OpenAI and OpenRouter; Ollama is sent OllamaKey without one, and any
	// other server no key.
	APIKey string
	// HTTPClient makes the calls; nil is a client of the provider's own.
	// A call's context bounds it.
	HTTPClient *http.Client
	// Retries is how many times a call refused as retryable (408, 409,
	// 429, 5xx) before its answer began is sent again, with the SDK's
	// backoff between; 0 sends it once, and the caller decides
	// (model.Error.Retryable).
	Retries int
	// Name is the provider's name in the answers, for a compatible server
	// (lmstudio, vllm); "" is the Route's Provider, else "openai".
	Name string
	// Headers are sent with every call (OpenRouter's HTTP-Referer and
	// X-Title, which name the app).
	Headers map[string]string
	// Now is the clock latency is measured with; nil is time.Now.
	Now func() time.Time
}

// Provider streams answers from a Chat Completions API. Safe for
// concurrent use.
type Provider struct {
	chat sdk.ChatCompletionService
	name string
	now  func() time.Time
}

var _ model.Provider = (*Provider)(nil)

// New makes a provider for route with o. A route names its provider
// (openai, openrouter, ollama, or a compatible one's name) and its
// address; an empty route takes both from o.
func New(route model.Route, o Options) (*Provider, error) {
	name := o.Name
	if name == "" {
		name = route.Provider
	}
	if name == "" {
		name = model.ProviderOpenAI
	}
	if route.Provider == model.ProviderAnthropic {
		return nil, fmt.Errorf("openai: route is anthropic's: its API is the Messages API")
	}
	base := o.BaseURL
	if base == "" {
		base = strings.TrimRight(route.BaseURL, "/")
		if route.Provider == model.ProviderOllama && base != "" && !strings.HasSuffix(base, "/v1") {
			base += "/v1"
		}
	}
	if base == "" {
		switch route.Provider {
		case model.ProviderOpenAI, "":
			base = model.OpenAIURL
		case model.ProviderOpenRouter:
			base = model.OpenRouterURL
		case model.ProviderOllama:
			base = model.OllamaURL + "/v1"
		default:
			return nil, fmt.Errorf("openai: %s: no base URL", name)
		}
	}
	key := o.APIKey
	if key == "" {
		switch route.Provider {
		case model.ProviderOpenAI, model.ProviderOpenRouter:
			env := route.KeyEnv
			if env == "" {
				env = map[string]string{model.ProviderOpenAI: model.EnvOpenAIKey, model.ProviderOpenRouter: model.EnvOpenRouterKey}[route.Provider]
			}
			return nil, fmt.Errorf("openai: %s: no key: set %s", name, env)
		case model.ProviderOllama:
			key = OllamaKey
		}
	}
	if o.Retries < 0 {
		return nil, fmt.Errorf("openai: retries %d: must not be negative", o.Retries)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(base, "/") + "/"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(o.Retries),
		option.WithMiddleware(keepFailure),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	for k, v := range o.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	p := &Provider{name: name, now: o.Now}
	if p.now == nil {
		p.now = time.Now
	}
	// The service, not sdk.NewClient, which would add OPENAI_* from the
	// environment (an organization, a project, headers) to every server's
	// calls.
	p.chat = sdk.NewChatCompletionService(opts...)
	return p, nil
}

// Name is the provider's name in its answers.
func (p *Provider) Name() string { return p.name }

// Stream sends req to the Chat Completions API, streaming, and calls
// onDelta with each piece of text and reasoning as it comes. req.Model is
// the API's name of the model (Route.APIModel).
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (model.Response, error) {
	start := p.now()
	failed := &failure{}
	var h jsonx.Holes
	params := p.params(req, &h)
	var opts []option.RequestOption
	if h.Held() > 0 {
		// The large strings go in as the body is sent, not through the
		// SDK's encoder, which copies them at each level.
		opts = append(opts, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			if err := h.SetBody(r); err != nil {
				return nil, err
			}
			return next(r)
		}))
	}
	stream := p.chat.NewStreaming(context.WithValue(ctx, failureKey{}, failed), params, opts...)
	defer stream.Close()
	var acc sdk.ChatCompletionAccumulator
	var thinking strings.Builder
	var used *usage
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return model.Response{}, fmt.Errorf("stream %s %s: a chunk the stream can't take: %.200s", p.name, req.Model, chunk.RawJSON())
		}
		ex := parseChunk([]byte(chunk.RawJSON()))
		if ex.Error != "" {
			return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, model.ClassifyError(0, `{"error":`+ex.Error+`}`))
		}
		if ex.Usage != nil {
			used = ex.Usage
		}
		var d model.Delta
		d.Thinking = ex.Reasoning
		thinking.WriteString(ex.Reasoning)
		for _, c := range chunk.Choices {
			if c.Index == 0 {
				d.Text = c.Delta.Content + c.Delta.Refusal
			}
		}
		if d.Thinking != "" {
			if err := onDelta(model.Delta{Thinking: d.Thinking}); err != nil {
				return model.Response{}, err
			}
		}
		if d.Text != "" {
			if err := onDelta(model.Delta{Text: d.Text}); err != nil {
				return model.Response{}, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, classify(err, failed))
	}
	if len(acc.Choices) == 0 {
		return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, model.ClassifyError(0, "the stream ended without an answer"))
	}
	choice := acc.Choices[0]
	resp := model.Response{
		Text:       choice.Message.Content + choice.Message.Refusal,
		StopReason: model.NormalizeStop(choice.FinishReason),
		Model:      acc.Model,
		Provider:   p.name,
		ID:         acc.ID,
		Latency:    p.now().Sub(start),
	}
	if thinking.Len() > 0 {
		resp.Thinking = []model.Thinking{{Text: thinking.String()}}
	}
	for i, c := range choice.Message.ToolCalls {
		id := c.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i) + "_" + acc.ID
		}
		resp.Calls = append(resp.Calls, model.ToolCall{ID: id, Name: c.Function.Name, Input: Arguments(c.Function.Arguments)})
	}
	if len(resp.Calls) > 0 && resp.StopReason == model.StopEnd {
		// Some compatible servers end a round of calls with "stop".
		resp.StopReason = model.StopToolUse
	}
	if used == nil {
		used = &usage{Prompt: acc.Usage.PromptTokens, Completion: acc.Usage.CompletionTokens, CacheRead: acc.Usage.PromptTokensDetails.CachedTokens}
	}
	resp.Usage = model.Usage{
		In:         max(0, used.Prompt-used.CacheRead-used.CacheWrite),
		Out:        used.Completion,
		CacheRead:  used.CacheRead,
		CacheWrite: used.CacheWrite,
	}
	if used.Cost != nil {
		resp.CostUSD = *used.Cost
	}
	return resp, nil
}

// failure is a refused call's status and body, as the server sent them,
// kept by keepFailure for classify.
type failure struct {
	status int
	body   string
}

type failureKey struct{}

// keepFailure is a middleware that keeps the status and body of a call
// the server refused, whatever shape its error has (the SDK's error keeps
// only an {"error":{...}} object's inside).
func keepFailure(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	f, _ := req.Context().Value(failureKey{}).(*failure)
	if err != nil || f == nil || res.StatusCode < 400 {
		return res, err
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if rerr == nil {
		f.status, f.body = res.StatusCode, string(body)
	}
	return res, nil
}

// classify makes the error of a refused call a *model.Error (an error
// sent inside the stream has status 0); any other error, a context's end
// or a connection's, is returned as it is.
func classify(err error, f *failure) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
	switch {
	case f.status != 0:
		return model.ClassifyError(f.status, f.body)
	case errors.As(err, &apiErr):
		return model.ClassifyError(apiErr.StatusCode, apiErr.RawJSON())
	case errors.As(err, &streamErr):
		return model.ClassifyError(0, string(streamErr.Event.Data))
	}
	return err
}
