package model

import (
	"context"
	"strings"
	"time"
)

// Provider answers a Request, streaming it as it comes.
type Provider interface {
	// Stream sends req and calls onDelta with each piece of the answer as
	// it arrives, in order; an error from onDelta ends the call with that
	// error. It returns the whole answer once the provider has finished.
	// A refusal of the prompt as too long is an error wrapping
	// ErrPromptTooLong.
	Stream(ctx context.Context, req Request, onDelta func(Delta) error) (Response, error)
}

// Delta is a piece of an answer as it streams. One of Text and Thinking
// is set.
type Delta struct {
	// Text is a piece of the answer's text, to show as it comes.
	Text string
	// Thinking is a piece of the model's thinking: kept, never shown.
	Thinking string
	// More says the provider already holds what follows this piece: the
	// next call of onDelta, or Stream's return, comes without waiting on
	// the model, so a caller may send this piece's text together with the
	// next's. False whenever what follows may wait (the network, a delay):
	// a piece sent at once then is never held back.
	More bool
}

// Response is a model's whole answer to one Request, and what the provider
// said of the call. Its Thinking, ToolCall and Usage have the fields of the
// store's (store.Thinking(t) converts), so an answer event keeps them as
// they are.
type Response struct {
	Text     string
	Thinking []Thinking
	Calls    []ToolCall
	// StopReason says why the answer ended, NormalizeStop'd.
	StopReason StopReason
	// Model is the model the provider says answered; Provider is which
	// provider (anthropic, openai, openrouter, ollama, ...).
	Model    string
	Provider string
	// ID is the provider's id of the response, for its logs.
	ID    string
	Usage Usage
	// Latency is from sending the request to the answer's end.
	Latency time.Duration
	// CostUSD is the cost the provider reported, 0 where it reports none.
	CostUSD float64
}

// Thinking is one thinking block of an answer, kept so a later call can
// send it back (ThinkingPart), never shown. Redacted holds a block the
// provider sent encrypted.
type Thinking struct {
	Text      string
	Signature string
	Redacted  string
}

// ToolCall is one call an answer makes.
type ToolCall struct {
	ID    string
	Name  string // as offered: memory__search
	Input string // its arguments, a JSON object
}

// Usage is the provider's own count of a call's tokens. In counts the
// prompt's tokens not read from the cache nor written to it; CacheRead and
// CacheWrite those that were.
type Usage struct {
	In         int64
	Out        int64
	CacheRead  int64
	CacheWrite int64
}

// StopReason says why an answer ended.
type StopReason string

// The reasons an answer ends, in Link's words.
const (
	StopEnd       StopReason = "end"        // the model finished
	StopToolUse   StopReason = "tool_use"   // the model called tools and waits for their answers
	StopMaxTokens StopReason = "max_tokens" // cut at MaxTokens
	StopRefusal   StopReason = "refusal"    // the provider or model refused to answer
)

// NormalizeStop maps a provider's own stop reason to Link's: Anthropic's
// end_turn, stop_sequence, pause_turn, tool_use, max_tokens, refusal;
// OpenAI's stop, tool_calls, function_call, length, content_filter; the
// Responses API's max_output_tokens; Gemini's STOP, MAX_TOKENS, SAFETY,
// RECITATION; Ollama's stop, length. Anything else is returned as it is.
func NormalizeStop(reason string) StopReason {
	switch strings.ToLower(reason) {
	case "end_turn", "stop", "stop_sequence", "pause_turn", "end", "completed":
		return StopEnd
	case "tool_use", "tool_calls", "function_call":
		return StopToolUse
	case "max_tokens", "length", "max_output_tokens":
		return StopMaxTokens
	case "refusal", "content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii":
		return StopRefusal
	}
	return StopReason(reason)
}
