package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// params makes a Chat Completions request of req: the system sections as
// one system message, the conversation as the API's messages, the tools
// as functions, usage asked for at the stream's end. Its large strings
// are held by h (nil holds none), to be put in place as the body is sent.
func (p *Provider) params(req model.Request, h *jsonx.Holes) chatRequest {
	out := chatRequest{
		Model:         p.apiModel(req.Model),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
	}
	marks := p.cacheMarks(req.Model)
	if sys := system(req.System, marks, h); sys != nil {
		out.Messages = append(out.Messages, *sys)
	}
	out.Messages = append(out.Messages, messages(req.Messages, marks, h)...)
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.InputSchema()}})
	}
	if req.ToolChoice == model.ToolNone && len(out.Tools) > 0 {
		out.ToolChoice = "none"
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models take only max_completion_tokens; the
		// compatible servers all take max_tokens.
		if p.name == model.ProviderOpenAI {
			out.MaxCompletionTokens = int64(req.MaxTokens)
		} else {
			out.MaxTokens = int64(req.MaxTokens)
		}
	}
	if p.name == model.ProviderOpenRouter {
		// OpenRouter reports the call's cost in its usage when asked.
		out.Usage = &usageAsk{Include: true}
	}
	return out
}

// apiModel is the model's name as the API wants it: Ollama's without the
// ollama/ Link names it by.
func (p *Provider) apiModel(name string) string {
	if p.name == model.ProviderOllama {
		return strings.TrimPrefix(name, "ollama/")
	}
	return name
}

// cacheMarks says whether the provider takes Anthropic's cache_control
// breakpoints on text parts: OpenRouter does for Anthropic's models, which
// cache nothing without them.
func (p *Provider) cacheMarks(name string) bool {
	return p.name == model.ProviderOpenRouter && strings.HasPrefix(name, "anthropic/")
}

// system is the prompt's sections as one system message, nil if all are
// empty: their texts joined by blank lines, or, where breakpoints are
// taken, a text part each with one after the last section that allows it.
func system(sections []model.Section, marks bool, h *jsonx.Holes) *message {
	var parts []part
	last := -1
	for _, s := range sections {
		if s.Text == "" {
			continue
		}
		if s.Cache {
			last = len(parts)
		}
		parts = append(parts, textPart(s.Text))
	}
	if len(parts) == 0 {
		return nil
	}
	if marks && last >= 0 {
		for i := range parts {
			parts[i].Text = h.Hold(parts[i].Text)
		}
		parts[last].CacheControl = ephemeral
		return &message{Role: "system", Content: parts}
	}
	texts := make([]string, len(parts))
	for i, pt := range parts {
		texts[i] = pt.Text
	}
	return &message{Role: "system", Content: h.Hold(strings.Join(texts, "\n\n"))}
}

// messages is the conversation as the API's messages: an assistant
// message's text and calls (its thinking has no place in the format and
// is left out), each tool's answer a tool message of its own, right after
// the calls, and the rest of a user message after them. With marks, the
// last two user messages end with a cache breakpoint.
func messages(msgs []model.Message, marks bool, h *jsonx.Holes) []message {
	var out []message
	lastAssistant := -1 // the index in out of an assistant message to merge the next one into
	var users []int     // the indexes in out of the user messages
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			a, ok := assistantMessage(m.Parts)
			if !ok {
				continue
			}
			if lastAssistant >= 0 {
				merge(&out[lastAssistant], a)
				continue
			}
			out = append(out, a)
			lastAssistant = len(out) - 1
			continue
		}
		var content []part
		for _, pt := range m.Parts {
			if pt.Kind == model.KindToolResult {
				text := pt.Text
				if pt.IsError {
					text = "Error: " + text
				}
				out = append(out, message{Role: "tool", Content: h.Hold(text), ToolCallID: pt.ID})
				continue
			}
			if c, ok := contentPart(pt, h); ok {
				content = append(content, c)
			}
		}
		if len(content) == 0 {
			continue
		}
		lastAssistant = -1
		out = append(out, message{Role: "user", Content: content})
		users = append(users, len(out)-1)
	}
	for i := range out {
		// Held once merged: a placeholder is the whole of its string.
		if a := &out[i]; a.Role == "assistant" && a.Content != nil {
			a.Content = h.Hold(a.Content.(string))
		}
	}
	for i, u := range users {
		parts := out[u].Content.([]part)
		if marks && i >= len(users)-2 {
			// The cache's breakpoints, on the last two user messages.
			for j := len(parts) - 1; j >= 0; j-- {
				if parts[j].Type == "text" {
					parts[j].CacheControl = ephemeral
					break
				}
			}
			continue
		}
		// A user message of one text part is sent as a string, as every
		// compatible server takes it.
		if len(parts) == 1 && parts[0].Type == "text" {
			out[u].Content = parts[0].Text
		}
	}
	return out
}

// assistantMessage is an assistant message's text and calls; ok is false when it
// has neither.
func assistantMessage(parts []model.Part) (a message, ok bool) {
	a.Role = "assistant"
	var text []string
	for _, pt := range parts {
		switch pt.Kind {
		case model.KindText:
			if pt.Text != "" {
				text = append(text, pt.Text)
			}
		case model.KindToolUse:
			a.ToolCalls = append(a.ToolCalls, toolCall{ID: pt.ID, Type: "function", Function: callFunction{Name: pt.Name, Arguments: Arguments(pt.Input)}})
		}
	}
	if len(text) > 0 {
		a.Content = strings.Join(text, "\n\n")
	}
	return a, len(text) > 0 || len(a.ToolCalls) > 0
}

// merge adds b's text and calls to a's, for two assistant messages in a
// row.
func merge(a *message, b message) {
	if b.Content != nil {
		if a.Content != nil {
			a.Content = a.Content.(string) + "\n\n" + b.Content.(string)
		} else {
			a.Content = b.Content
		}
	}
	a.ToolCalls = append(a.ToolCalls, b.ToolCalls...)
}

// audioFormats are the audio types input_audio takes, by its format name.
var audioFormats = map[string]string{
	"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
	"audio/mpeg": "mp3", "audio/mp3": "mp3",
}

// contentPart is one part of a user message as a content part; ok is false for
// one with nothing to send. A part the API can't take as data is told in
// text (model.Unsent).
func contentPart(p model.Part, h *jsonx.Holes) (c part, ok bool) {
	mime := strings.ToLower(p.MimeType)
	switch p.Kind {
	case model.KindText:
		return textPart(h.Hold(p.Text)), p.Text != ""
	case model.KindImage:
		if !strings.HasPrefix(mime, "image/") || p.Data == "" {
			return textPart(model.Unsent(p)), true
		}
		return part{Type: "image_url", ImageURL: &imageURL{URL: h.Hold("data:" + mime + ";base64," + p.Data)}}, true
	case model.KindAudio:
		format, ok := audioFormats[mime]
		if !ok || p.Data == "" {
			return textPart(model.Unsent(p)), true
		}
		return part{Type: "input_audio", InputAudio: &inputAudio{Data: h.Hold(p.Data), Format: format}}, true
	case model.KindDocument:
		return document(p, h), true
	case model.KindThinking, model.KindToolUse:
		return c, false
	}
	return textPart(h.Hold(p.Text)), p.Text != ""
}

// document is a document part: a PDF as a file part of its bytes, a text
// document as a text part holding it, any other told in text.
func document(p model.Part, h *jsonx.Holes) part {
	mime := strings.ToLower(p.MimeType)
	text, isText := p.Text, p.Data == "" && p.Text != ""
	switch {
	case p.Data != "" && mime == "application/pdf":
		name := p.Name
		if name == "" {
			name = "document.pdf"
		}
		return part{Type: "file", File: &file{FileData: h.Hold("data:application/pdf;base64," + p.Data), Filename: name}}
	case p.Data != "" && (strings.HasPrefix(mime, "text/") || mime == "application/json"):
		raw, err := base64.StdEncoding.DecodeString(p.Data)
		if err == nil && utf8.Valid(raw) {
			text, isText = string(raw), true
		}
	}
	if !isText {
		return textPart(model.Unsent(p))
	}
	head := "A document"
	if p.Name != "" {
		head += fmt.Sprintf(" named %q", p.Name)
	}
	if mime != "" {
		head += " (" + mime + ")"
	}
	return textPart(h.Hold(head + ":\n\n" + text))
}

// Arguments is a call's arguments as sent: the input if it is a JSON
// object, else {}.
func Arguments(s string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return "{}"
	}
	return s
}
