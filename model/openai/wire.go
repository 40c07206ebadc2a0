package openai

// The Chat Completions API's request, as this provider sends it: the
// fields it sets, each omitted when unset as the API's reference has them
// optional.

// chatRequest is a call's body.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []message     `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	Tools               []tool        `json:"tools,omitempty"`
	ToolChoice          string        `json:"tool_choice,omitempty"`
	MaxCompletionTokens int64         `json:"max_completion_tokens,omitempty"`
	MaxTokens           int64         `json:"max_tokens,omitempty"`
	// Usage asks OpenRouter for the call's cost in its usage.
	Usage *usageAsk `json:"usage,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type usageAsk struct {
	Include bool `json:"include"`
}

// message is one message: system, user (Content a string or []part),
// assistant (Content a string or none, and its ToolCalls) or tool (its
// answer to ToolCallID).
type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// part is a content part: text, image_url, input_audio or file, and a
// cache breakpoint where OpenRouter passes one on to Anthropic.
type part struct {
	Type         string        `json:"type"`
	Text         string        `json:"text,omitempty"`
	ImageURL     *imageURL     `json:"image_url,omitempty"`
	InputAudio   *inputAudio   `json:"input_audio,omitempty"`
	File         *file         `json:"file,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type file struct {
	FileData string `json:"file_data,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is a cache_control breakpoint as OpenRouter passes it on.
var ephemeral = &cacheControl{Type: "ephemeral"}

func textPart(s string) part { return part{Type: "text", Text: s} }

// tool is a function offered to the model.
type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// toolCall is an assistant's call, sent back as it was made.
type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function callFunction `json:"function"`
}

type callFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}
