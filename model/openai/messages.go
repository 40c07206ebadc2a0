package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// params makes a Chat Completions request of req: the system sections as
// one system message, the conversation as the API's messages, the tools
// as functions, usage asked for at the stream's end. Its large strings
// are held by h (nil holds none), to be put in place as the body is sent.
func (p *Provider) params(req model.Request, h *jsonx.Holes) sdk.ChatCompletionNewParams {
	out := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.apiModel(req.Model)),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	marks := p.cacheMarks(req.Model)
	if sys := system(req.System, marks, h); sys != nil {
		out.Messages = append(out.Messages, *sys)
	}
	out.Messages = append(out.Messages, messages(req.Messages, marks, h)...)
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: t.InputSchema()}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		out.Tools = append(out.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if req.ToolChoice == model.ToolNone && len(out.Tools) > 0 {
		out.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: sdk.String("none")}
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models take only max_completion_tokens; the
		// compatible servers all take max_tokens.
		if p.name == model.ProviderOpenAI {
			out.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			out.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	if p.name == model.ProviderOpenRouter {
		// OpenRouter reports the call's cost in its usage when asked.
		out.SetExtraFields(map[string]any{"usage": map[string]any{"include": true}})
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

// ephemeral is a cache_control breakpoint as OpenRouter passes it on.
var ephemeral = map[string]any{"cache_control": map[string]any{"type": "ephemeral"}}

// system is the prompt's sections as one system message, nil if all are
// empty: their texts joined by blank lines, or, where breakpoints are
// taken, a text part each with one after the last section that allows it.
func system(sections []model.Section, marks bool, h *jsonx.Holes) *sdk.ChatCompletionMessageParamUnion {
	var parts []sdk.ChatCompletionContentPartTextParam
	last := -1
	for _, s := range sections {
		if s.Text == "" {
			continue
		}
		if s.Cache {
			last = len(parts)
		}
		parts = append(parts, sdk.ChatCompletionContentPartTextParam{Text: s.Text})
	}
	if len(parts) == 0 {
		return nil
	}
	if marks && last >= 0 {
		for i := range parts {
			parts[i].Text = h.Hold(parts[i].Text)
		}
		parts[last].SetExtraFields(ephemeral)
		m := sdk.SystemMessage(parts)
		return &m
	}
	texts := make([]string, len(parts))
	for i, pt := range parts {
		texts[i] = pt.Text
	}
	m := sdk.SystemMessage(h.Hold(strings.Join(texts, "\n\n")))
	return &m
}

// messages is the conversation as the API's messages: an assistant
// message's text and calls (its thinking has no place in the format and
// is left out), each tool's answer a tool message of its own, right after
// the calls, and the rest of a user message after them. With marks, the
// last two user messages end with a cache breakpoint.
func messages(msgs []model.Message, marks bool, h *jsonx.Holes) []sdk.ChatCompletionMessageParamUnion {
	var out []sdk.ChatCompletionMessageParamUnion
	var lastAssistant *sdk.ChatCompletionAssistantMessageParam
	var users []*sdk.ChatCompletionUserMessageParam
	for _, m := range msgs {
		if m.Role == model.RoleAssistant {
			a, ok := assistantMessage(m.Parts)
			if !ok {
				continue
			}
			if lastAssistant != nil {
				merge(lastAssistant, a)
				continue
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: a})
			lastAssistant = out[len(out)-1].OfAssistant
			continue
		}
		var content []sdk.ChatCompletionContentPartUnionParam
		for _, pt := range m.Parts {
			if pt.Kind == model.KindToolResult {
				text := pt.Text
				if pt.IsError {
					text = "Error: " + text
				}
				out = append(out, sdk.ToolMessage(h.Hold(text), pt.ID))
				continue
			}
			if c, ok := part(pt, h); ok {
				content = append(content, c)
			}
		}
		if len(content) == 0 {
			continue
		}
		lastAssistant = nil
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfUser: &sdk.ChatCompletionUserMessageParam{
			Content: sdk.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: content},
		}})
		users = append(users, out[len(out)-1].OfUser)
	}
	for _, m := range out {
		// Held once merged: a placeholder is the whole of its string.
		if a := m.OfAssistant; a != nil && a.Content.OfString.Valid() {
			a.Content.OfString = sdk.String(h.Hold(a.Content.OfString.Value))
		}
	}
	for i, u := range users {
		parts := u.Content.OfArrayOfContentParts
		if marks && i >= len(users)-2 {
			// The cache's breakpoints, on the last two user messages.
			for j := len(parts) - 1; j >= 0; j-- {
				if parts[j].OfText != nil {
					parts[j].OfText.SetExtraFields(ephemeral)
					break
				}
			}
			continue
		}
		// A user message of one text part is sent as a string, as every
		// compatible server takes it.
		if len(parts) == 1 && parts[0].OfText != nil {
			u.Content = sdk.ChatCompletionUserMessageParamContentUnion{OfString: sdk.String(parts[0].OfText.Text)}
		}
	}
	return out
}

// assistantMessage is an assistant message's text and calls; ok is false when it
// has neither.
func assistantMessage(parts []model.Part) (a *sdk.ChatCompletionAssistantMessageParam, ok bool) {
	a = &sdk.ChatCompletionAssistantMessageParam{}
	var text []string
	for _, pt := range parts {
		switch pt.Kind {
		case model.KindText:
			if pt.Text != "" {
				text = append(text, pt.Text)
			}
		case model.KindToolUse:
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       pt.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: pt.Name, Arguments: Arguments(pt.Input)},
			}})
		}
	}
	if len(text) > 0 {
		a.Content.OfString = sdk.String(strings.Join(text, "\n\n"))
	}
	return a, len(text) > 0 || len(a.ToolCalls) > 0
}

// merge adds b's text and calls to a's, for two assistant messages in a
// row.
func merge(a, b *sdk.ChatCompletionAssistantMessageParam) {
	if b.Content.OfString.Valid() {
		if a.Content.OfString.Valid() {
			a.Content.OfString = sdk.String(a.Content.OfString.Value + "\n\n" + b.Content.OfString.Value)
		} else {
			a.Content.OfString = b.Content.OfString
		}
	}
	a.ToolCalls = append(a.ToolCalls, b.ToolCalls...)
}

// audioFormats are the audio types input_audio takes, by its format name.
var audioFormats = map[string]string{
	"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
	"audio/mpeg": "mp3", "audio/mp3": "mp3",
}

// part is one part of a user message as a content part; ok is false for
// one with nothing to send. A part the API can't take as data is told in
// text (model.Unsent).
func part(p model.Part, h *jsonx.Holes) (c sdk.ChatCompletionContentPartUnionParam, ok bool) {
	mime := strings.ToLower(p.MimeType)
	switch p.Kind {
	case model.KindText:
		return sdk.TextContentPart(h.Hold(p.Text)), p.Text != ""
	case model.KindImage:
		if !strings.HasPrefix(mime, "image/") || p.Data == "" {
			return sdk.TextContentPart(model.Unsent(p)), true
		}
		return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: h.Hold("data:" + mime + ";base64," + p.Data)}), true
	case model.KindAudio:
		format, ok := audioFormats[mime]
		if !ok || p.Data == "" {
			return sdk.TextContentPart(model.Unsent(p)), true
		}
		return sdk.InputAudioContentPart(sdk.ChatCompletionContentPartInputAudioInputAudioParam{Data: h.Hold(p.Data), Format: format}), true
	case model.KindDocument:
		return document(p, h), true
	case model.KindThinking, model.KindToolUse:
		return c, false
	}
	return sdk.TextContentPart(h.Hold(p.Text)), p.Text != ""
}

// document is a document part: a PDF as a file part of its bytes, a text
// document as a text part holding it, any other told in text.
func document(p model.Part, h *jsonx.Holes) sdk.ChatCompletionContentPartUnionParam {
	mime := strings.ToLower(p.MimeType)
	text, isText := p.Text, p.Data == "" && p.Text != ""
	switch {
	case p.Data != "" && mime == "application/pdf":
		f := sdk.ChatCompletionContentPartFileFileParam{FileData: sdk.String(h.Hold("data:application/pdf;base64," + p.Data))}
		name := p.Name
		if name == "" {
			name = "document.pdf"
		}
		f.Filename = sdk.String(name)
		return sdk.FileContentPart(f)
	case p.Data != "" && (strings.HasPrefix(mime, "text/") || mime == "application/json"):
		raw, err := base64.StdEncoding.DecodeString(p.Data)
		if err == nil && utf8.Valid(raw) {
			text, isText = string(raw), true
		}
	}
	if !isText {
		return sdk.TextContentPart(model.Unsent(p))
	}
	head := "A document"
	if p.Name != "" {
		head += fmt.Sprintf(" named %q", p.Name)
	}
	if mime != "" {
		head += " (" + mime + ")"
	}
	return sdk.TextContentPart(h.Hold(head + ":\n\n" + text))
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
