package openai

import (
	"encoding/json"
)

// chunk is a streamed chunk of a Chat Completions answer, the part of it
// this provider reads: its id and model, choice 0's pieces of text,
// refusal, reasoning (OpenRouter's and Ollama's reasoning, others'
// reasoning_content) and tool calls, why it finished, the usage as the
// provider counted it (with OpenRouter's cost and cache writes), and an
// error sent inside the stream.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int64  `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			Content          string  `json:"content"`
			Refusal          string  `json:"refusal"`
			Reasoning        *string `json:"reasoning"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
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

// extras is what a chunk says beside its text and calls: the reasoning
// streamed, the usage, and an error sent inside the stream.
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

// parseChunk reads a chunk's extras from its raw JSON; one that isn't a
// chunk has none.
func parseChunk(raw []byte) extras {
	var c chunk
	if json.Unmarshal(raw, &c) != nil {
		return extras{}
	}
	return c.extras()
}

func (c *chunk) extras() extras {
	var e extras
	for _, ch := range c.Choices {
		switch d := ch.Delta; {
		case d.Reasoning != nil:
			e.Reasoning += *d.Reasoning
		case d.ReasoningContent != nil:
			e.Reasoning += *d.ReasoningContent
		}
	}
	if u := c.Usage; u != nil {
		e.Usage = &usage{
			Prompt: u.PromptTokens, Completion: u.CompletionTokens,
			CacheRead: u.PromptTokensDetails.CachedTokens, CacheWrite: u.PromptTokensDetails.CacheWriteTokens,
			Cost: u.Cost,
		}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e.Error = string(c.Error)
	}
	return e
}
