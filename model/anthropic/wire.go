package anthropic

import "encoding/json"

// The Messages API's request and streamed events, as this provider sends
// and reads them: the fields it sets, each omitted when unset as the
// API's reference has them optional.

// apiVersion is the anthropic-version header sent with each call: the one
// anthropic-sdk-go v2.15 sent, whose request and event shapes these are.
const apiVersion = "2026-10-21"

// request is a call's body.
type request struct {
	Model      string       `json:"model"`
	MaxTokens  int64        `json:"max_tokens"`
	System     []block      `json:"system,omitempty"`
	Tools      []tool       `json:"tools,omitempty"`
	ToolChoice *typeOnly    `json:"tool_choice,omitempty"`
	Thinking   *thinkingArg `json:"thinking,omitempty"`
	Messages   []message    `json:"messages"`
	Stream     bool         `json:"stream"`
}

// typeOnly is an object that is only its type: a tool choice of none,
// thinking adaptive or disabled, a cache breakpoint.
type typeOnly struct {
	Type string `json:"type"`
}

// thinkingArg is the thinking asked for: its type, and its budget when
// enabled.
type thinkingArg struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens,omitempty"`
}

// ephemeral is the cache's breakpoint.
var ephemeral = &typeOnly{Type: "ephemeral"}

// tool is a tool offered to the model.
type tool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  map[string]any `json:"input_schema"`
	CacheControl *typeOnly      `json:"cache_control,omitempty"`
}

// message is one message: its role and its blocks.
type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of any type, with the fields its type has:
// text (Text), image and document (Source, a document's Title), tool_use
// (ID, Name, Input), tool_result (ToolUseID, Content, IsError), thinking
// (Thinking, Signature), redacted_thinking (Data), and a breakpoint on
// those that take one (cacheable).
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *source         `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []block         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	CacheControl *typeOnly       `json:"cache_control,omitempty"`
}

// cacheable says whether a breakpoint may be put on b.
func (b *block) cacheable() bool {
	switch b.Type {
	case "text", "image", "document", "tool_result", "tool_use":
		return true
	}
	return false
}

// source is an image's or document's bytes (base64) or a document's text.
type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func textBlock(s string) block { return block{Type: "text", Text: s} }

// event is one streamed event, the fields this provider reads of each
// type: message_start's message, content_block_start's block,
// content_block_delta's piece and message_delta's stop reason and usage,
// each block's by its index.
type event struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message *struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Usage      usage  `json:"usage"`
	} `json:"message"`
	ContentBlock *streamedBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens             int64  `json:"output_tokens"`
		InputTokens              *int64 `json:"input_tokens"`
		CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// usage is a message's tokens as the API counts them.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// streamedBlock is a block of the answer as it began, its deltas added.
type streamedBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}
