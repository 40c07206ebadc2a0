package openai

import (
	"bytes"
	"encoding/json"
)

// extras is what a streamed chunk says beyond what the SDK's types hold:
// the reasoning OpenRouter, Ollama and others stream (reasoning, or
// reasoning_content), the usage as the provider counted it (with
// OpenRouter's cost and cache writes), and an error sent inside the
// stream.
type extras struct {
	Reasoning string
	Usage     *usage
	Error     string // the error's JSON, "" if none
}

// usage is a chunk's usage: the prompt's tokens (cached ones included),
// the answer's, those read from the cache and written to it, and the cost
// OpenRouter reports (nil where none is).
type usage struct {
	Prompt, Completion, CacheRead, CacheWrite int64
	Cost                                      *float64
}

// wireChunk is the part of a chunk's JSON parseChunk reads.
type wireChunk struct {
	Choices []struct {
		Delta struct {
			Reasoning        *string `json:"reasoning"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens     int64 `json:"cached_tokens"`
			CacheWriteTokens int64 `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
		Cost *float64 `json:"cost"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// parseChunk reads a chunk's extras from its raw JSON. A chunk that says
// none of them (most chunks, which the SDK has read already) is not
// decoded again; one that isn't JSON has none.
func parseChunk(raw []byte) extras {
	var e extras
	if !bytes.Contains(raw, []byte(`"reasoning`)) && !bytes.Contains(raw, []byte(`"usage"`)) && !bytes.Contains(raw, []byte(`"error"`)) {
		return e
	}
	var w wireChunk
	if json.Unmarshal(raw, &w) != nil {
		return e
	}
	for _, c := range w.Choices {
		switch {
		case c.Delta.Reasoning != nil:
			e.Reasoning += *c.Delta.Reasoning
		case c.Delta.ReasoningContent != nil:
			e.Reasoning += *c.Delta.ReasoningContent
		}
	}
	if u := w.Usage; u != nil {
		e.Usage = &usage{
			Prompt: u.PromptTokens, Completion: u.CompletionTokens,
			CacheRead: u.PromptTokensDetails.CachedTokens, CacheWrite: u.PromptTokensDetails.CacheWriteTokens,
			Cost: u.Cost,
		}
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		e.Error = string(w.Error)
	}
	return e
}
