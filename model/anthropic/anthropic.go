// Package anthropic is a model.Provider for Anthropic's Messages API,
// spoken over net/http (model/sse) as anthropic-sdk-go v2 spoke it: the
// answer streamed as it comes (thinking marked apart from text, never shown), tool use,
// thinking kept with its signature and sent back as the API requires,
// images and PDFs as the API takes them, and the cache's ephemeral
// breakpoints where they keep the prompt cached from one call to the
// next. It links no SDK: anthropic-sdk-go cost lnk-link-harness 4.4 MB
// of idle memory (docs/decisions/038-idle-memory.md).
//
// cmd wires it to a model.Route whose Provider is model.ProviderAnthropic:
//
//	p, err := anthropic.New(route, anthropic.Options{APIKey: env[route.KeyEnv]})
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
	"github.com/lnk-dev/link/model/sse"
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

// Options says how the provider reaches Anthropic. Nothing is read from
// the environment: the key and address come from here and the Route.
type Options struct {
	// BaseURL is Anthropic's address without /v1; "" is the Route's, else
	// model.AnthropicURL.
	BaseURL string
	// APIKey is the key, sent as anthropic-sdk-go v2 sent it
	// (Authorization: Bearer). Required.
	APIKey string
	// HTTPClient makes the calls; nil is a client of the provider's own.
	// A call's context bounds it.
	HTTPClient *http.Client
	// Retries is how many times a call the API refused as retryable (429,
	// 529, 5xx) before its answer began is sent again, with a backoff
	// between (sse.Backoff); 0 sends it once, and the caller decides
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
	url            string // the API's /v1/messages
	header         http.Header
	hc             *http.Client
	retries        int
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
	p.url, p.hc, p.retries = strings.TrimRight(base, "/")+"/v1/messages", hc, o.Retries
	p.header = http.Header{}
	p.header.Set("Content-Type", "application/json")
	p.header.Set("Accept", "text/event-stream")
	p.header.Set("User-Agent", "Link")
	p.header.Set("Anthropic-Version", apiVersion)
	p.header.Set("Authorization", "Bearer "+o.APIKey)
	return p, nil
}

// Stream sends req to the Messages API, streaming, and calls onDelta with
// each piece of text and thinking as it comes. req.Model is the API's name
// of the model (Route.APIModel).
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta) error) (_ model.Response, err error) {
	start := p.now()
	res, err := p.post(ctx, req)
	if err != nil {
		return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, err)
	}
	defer res.Body.Close()
	var msg answer
	var text strings.Builder
	var texts int // text blocks begun, so a later one starts on a new paragraph
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
		e := events.Event()
		data := bytes.TrimSuffix(e.Data, []byte("\n"))
		switch {
		case e.Type == "ping" || len(data) == 0:
			continue
		case e.Type == "error":
			return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, model.ClassifyError(0, string(data)))
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			return model.Response{}, fmt.Errorf("stream anthropic %s: an event the stream can't take: %.200s", req.Model, data)
		}
		if ev.Type == "error" {
			// An error event without its event: line (a proxy's).
			return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, model.ClassifyError(0, string(data)))
		}
		if err := msg.add(&ev); err != nil {
			return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, err)
		}
		d := delta(&ev, &texts, text.Len())
		if d == (model.Delta{}) {
			continue
		}
		text.WriteString(d.Text)
		if err := burst.Add(d); err != nil {
			return model.Response{}, err
		}
	}
	if err := burst.Flush(); err != nil {
		return model.Response{}, err
	}
	if err := events.Err(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, err)
	}
	if msg.id == "" {
		return model.Response{}, fmt.Errorf("stream anthropic %s: %w", req.Model, model.ClassifyError(0, "the stream ended before its message began"))
	}
	return msg.response(text.String(), p.now().Sub(start)), nil
}

// delta is what a stream's event adds to the answer streamed: its text
// (a text block after one with text begins on a new paragraph; texts
// counts those begun, streamed the bytes of text so far) or thinking.
func delta(ev *event, texts *int, streamed int) model.Delta {
	var d model.Delta
	switch ev.Type {
	case "content_block_start":
		if ev.ContentBlock.Type == "text" {
			if *texts > 0 && streamed > 0 {
				d.Text = "\n\n"
			}
			*texts++
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
	return d
}

// response is the message a stream gave, with text, its text as
// streamed: its stop, usage, thinking and calls.
func (a *answer) response(text string, latency time.Duration) model.Response {
	resp := model.Response{
		Text:       text,
		StopReason: model.NormalizeStop(a.stopReason),
		Model:      a.model,
		Provider:   Name,
		ID:         a.id,
		Usage: model.Usage{
			In:         a.usage.InputTokens,
			Out:        a.usage.OutputTokens,
			CacheRead:  a.usage.CacheReadInputTokens,
			CacheWrite: a.usage.CacheCreationInputTokens,
		},
		Latency: latency,
	}
	for _, b := range a.blocks {
		switch b.Type {
		case "thinking":
			resp.Thinking = append(resp.Thinking, model.Thinking{Text: b.thinking.String(), Signature: b.signature.String()})
		case "redacted_thinking":
			resp.Thinking = append(resp.Thinking, model.Thinking{Redacted: b.Data})
		case "tool_use":
			resp.Calls = append(resp.Calls, model.ToolCall{ID: b.ID, Name: b.Name, Input: Input(string(b.Input))})
		}
	}
	return resp
}

// post sends req's call, its large strings quoted into the body as it is
// read (jsonx.Holes), and returns the streaming response, or the refusal
// as a *model.Error.
func (p *Provider) post(ctx context.Context, req model.Request) (*http.Response, error) {
	var h jsonx.Holes
	small, err := json.Marshal(p.paramsHeld(req, &h))
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

// answer is a streamed message put together, event by event, as the
// Messages API's reference says: message_start begins it, each block
// begins at the next index and takes its deltas (a text block's text is
// Stream's, not kept twice), message_delta says why
// it stopped and the usage so far, each count a whole (not added).
type answer struct {
	id, model, stopReason string
	usage                 usage
	blocks                []*answerBlock
}

// answerBlock is a block as it began, with its thinking and signature
// as their deltas add to them (a long thinking comes in many).
type answerBlock struct {
	streamedBlock
	thinking, signature strings.Builder
}

// maxBlocks is the most blocks one answer may have.
const maxBlocks = 4096

// add puts e in a; a block begun out of order, or a delta or stop for a
// block not begun, is refused.
func (a *answer) add(e *event) error {
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return errors.New("message_start without its message")
		}
		a.id, a.model, a.stopReason, a.usage = e.Message.ID, e.Message.Model, e.Message.StopReason, e.Message.Usage
	case "message_delta":
		if e.Delta != nil {
			a.stopReason = e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			a.usage.OutputTokens = u.OutputTokens
			if u.InputTokens != nil {
				a.usage.InputTokens = *u.InputTokens
			}
			if u.CacheCreationInputTokens != nil {
				a.usage.CacheCreationInputTokens = *u.CacheCreationInputTokens
			}
			if u.CacheReadInputTokens != nil {
				a.usage.CacheReadInputTokens = *u.CacheReadInputTokens
			}
		}
	case "content_block_start":
		if e.Index != int64(len(a.blocks)) || e.ContentBlock == nil || e.Index >= maxBlocks {
			return fmt.Errorf("block %d began, block %d expected", e.Index, len(a.blocks))
		}
		b := &answerBlock{streamedBlock: *e.ContentBlock}
		b.thinking.WriteString(b.Thinking)
		b.signature.WriteString(b.Signature)
		a.blocks = append(a.blocks, b)
	case "content_block_delta":
		if e.Index < 0 || e.Index >= int64(len(a.blocks)) || e.Delta == nil {
			return fmt.Errorf("a delta for block %d of %d", e.Index, len(a.blocks))
		}
		b := a.blocks[e.Index]
		switch e.Delta.Type {
		case "input_json_delta":
			if e.Delta.PartialJSON != "" {
				if string(b.Input) == "{}" {
					b.Input = nil
				}
				b.Input = append(b.Input, e.Delta.PartialJSON...)
			}
		case "thinking_delta":
			b.thinking.WriteString(e.Delta.Thinking)
		case "signature_delta":
			b.signature.WriteString(e.Delta.Signature)
		}
	case "content_block_stop":
		if e.Index < 0 || e.Index >= int64(len(a.blocks)) {
			return fmt.Errorf("block %d stopped of %d", e.Index, len(a.blocks))
		}
	}
	return nil
}
