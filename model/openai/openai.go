// Package openai is a model.Provider for the Chat Completions API, spoken
// over net/http (model/sse), for every server that speaks it: OpenAI,
// OpenRouter (with the cost it reports), Ollama (at OLLAMA_HOST's /v1) and
// any compatible base URL. The answer streams as it comes, reasoning
// marked apart from text; streamed tool calls are put together by their
// index; images go as data URLs, audio as input_audio, PDFs as file
// parts; usage is read from the stream's last chunk, with the cache's
// share and OpenRouter's usage.cost. It links no SDK: OpenAI's Go SDK
// cost lnk-link-harness 7.6 MB of idle memory
// (docs/decisions/038-idle-memory.md).
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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/sse"
)

// OllamaKey is the key sent to Ollama when none is given: Ollama takes
// none, and reads none it is sent.
const OllamaKey = "ollama"

// Options says how the provider reaches the server. Nothing is read from
// the environment: the key and address come from here and the Route.
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
	// 429, 5xx) before its answer began is sent again, with a backoff
	// between (sse.Backoff); 0 sends it once, and the caller decides
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
	url     string // the API's chat/completions
	header  http.Header
	hc      *http.Client
	retries int
	name    string
	now     func() time.Time
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
	p := &Provider{url: strings.TrimRight(base, "/") + "/chat/completions", header: http.Header{}, hc: hc, retries: o.Retries, name: name, now: o.Now}
	if p.now == nil {
		p.now = time.Now
	}
	p.header.Set("Content-Type", "application/json")
	p.header.Set("Accept", "text/event-stream")
	p.header.Set("User-Agent", "Link")
	if key != "" {
		p.header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range o.Headers {
		p.header.Set(k, v)
	}
	return p, nil
}

// Name is the provider's name in its answers.
func (p *Provider) Name() string { return p.name }

// Stream sends req to the Chat Completions API, streaming, and calls
// onDelta with each piece of text and reasoning as it comes. req.Model is
// the API's name of the model (Route.APIModel).
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (_ model.Response, err error) {
	start := p.now()
	res, err := p.post(ctx, req)
	if err != nil {
		return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, err)
	}
	defer res.Body.Close()
	var a answer
	var thinking strings.Builder
	events := sse.NewReader(res.Body)
	burst := sse.NewBurst(onDelta) // deltas read in one burst say More
	defer burst.FlushFailed(&err)
	for {
		if ok, err := burst.Next(events); err != nil || !ok {
			if err != nil {
				return model.Response{}, err
			}
			break
		}
		data := events.Event().Data
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return model.Response{}, fmt.Errorf("stream %s %s: a chunk the stream can't take: %.200s", p.name, req.Model, data)
		}
		ex := c.extras()
		if ex.Error != "" {
			return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, model.ClassifyError(0, strings.TrimSpace(string(data))))
		}
		if err := a.add(&c); err != nil {
			return model.Response{}, fmt.Errorf("stream %s %s: %w: %.200s", p.name, req.Model, err, data)
		}
		thinking.WriteString(ex.Reasoning)
		if ex.Reasoning != "" {
			if err := burst.Add(model.Delta{Thinking: ex.Reasoning}); err != nil {
				return model.Response{}, err
			}
		}
		var text string
		for _, ch := range c.Choices {
			if ch.Index == 0 {
				text += ch.Delta.Content + ch.Delta.Refusal
			}
		}
		if text != "" {
			if err := burst.Add(model.Delta{Text: text}); err != nil {
				return model.Response{}, err
			}
		}
	}
	if err := burst.Flush(); err != nil {
		return model.Response{}, err
	}
	if err := events.Err(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, err)
	}
	if !a.begun {
		return model.Response{}, fmt.Errorf("stream %s %s: %w", p.name, req.Model, model.ClassifyError(0, "the stream ended without an answer"))
	}
	return a.response(p.name, thinking.String(), p.now().Sub(start)), nil
}

// response is the answer a stream gave, of provider's, with its
// thinking as streamed: its stop (a round of calls ended "stop" by some
// compatible servers taken as one of calls), calls, usage and cost.
func (a *answer) response(provider, thinking string, latency time.Duration) model.Response {
	resp := model.Response{
		Text:       a.text.String(),
		StopReason: model.NormalizeStop(a.finish),
		Model:      a.model,
		Provider:   provider,
		ID:         a.id,
		Latency:    latency,
	}
	if thinking != "" {
		resp.Thinking = []model.Thinking{{Text: thinking}}
	}
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(i) + "_" + a.id
		}
		resp.Calls = append(resp.Calls, model.ToolCall{ID: id, Name: c.name.String(), Input: Arguments(c.args.String())})
	}
	if len(resp.Calls) > 0 && resp.StopReason == model.StopEnd {
		// Some compatible servers end a round of calls with "stop".
		resp.StopReason = model.StopToolUse
	}
	if u := a.usage; u != nil {
		resp.Usage = model.Usage{
			In:         max(0, u.Prompt-u.CacheRead-u.CacheWrite),
			Out:        u.Completion,
			CacheRead:  u.CacheRead,
			CacheWrite: u.CacheWrite,
		}
		if u.Cost != nil {
			resp.CostUSD = *u.Cost
		}
	}
	return resp
}

// post sends req's call, its large strings quoted into the body as it is
// read (jsonx.Holes), and returns the streaming response, or the refusal
// as a *model.Error.
func (p *Provider) post(ctx context.Context, req model.Request) (*http.Response, error) {
	var h jsonx.Holes
	small, err := json.Marshal(p.params(req, &h))
	if err != nil {
		return nil, err
	}
	size, open := h.Body(small)
	res, err := sse.Post(ctx, p.hc, sse.Request{URL: p.url, Header: p.header, Size: size, Body: open, Retries: p.retries})
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 {
		return nil, model.Refusal(ctx, res)
	}
	return res, nil
}

// answer is a streamed answer put together, chunk by chunk: choice 0's
// text, its calls by index, why it finished, and the last usage told.
type answer struct {
	begun     bool
	id, model string
	text      strings.Builder
	finish    string
	calls     []call
	usage     *usage
}

// call is a streamed tool call put together: its id, and its name's and
// arguments' pieces.
type call struct {
	id         string
	name, args strings.Builder
}

// maxCalls is the most tool calls one answer may make.
const maxCalls = 1024

// add puts c's pieces in a; a chunk naming a call out of order (past the
// next one) is refused.
func (a *answer) add(c *chunk) error {
	a.begun = true
	if a.id == "" {
		a.id = c.ID
	}
	if a.model == "" {
		a.model = c.Model
	}
	if c.Usage != nil {
		a.usage = c.extras().Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.text.WriteString(ch.Delta.Content)
		a.text.WriteString(ch.Delta.Refusal)
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index > int64(len(a.calls)) || tc.Index >= maxCalls {
				return errors.New("a tool call out of order")
			}
			if tc.Index == int64(len(a.calls)) {
				a.calls = append(a.calls, call{})
			}
			t := &a.calls[tc.Index]
			if tc.ID != "" {
				t.id = tc.ID
			}
			t.name.WriteString(tc.Function.Name)
			t.args.WriteString(tc.Function.Arguments)
		}
	}
	return nil
}
