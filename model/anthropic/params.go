package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// MaxBreakpoints is how many cache_control breakpoints the Messages API
// takes in one request.
const MaxBreakpoints = 4

// params makes a Messages API request of req: its system sections, tools
// and conversation as Anthropic's blocks, with the cache's breakpoints
// (breakpoints says where).
func (p *Provider) params(req model.Request) sdk.MessageNewParams {
	return p.paramsHeld(req, nil)
}

// paramsHeld is params with the conversation's large texts and
// attachments held by h (nil holds none), put in place as the request is
// sent (Stream), so the SDK's encoder, which copies a block's bytes at
// each level it nests, copies only placeholders.
func (p *Provider) paramsHeld(req model.Request, h *jsonx.Holes) sdk.MessageNewParams {
	out := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(req.MaxTokens),
		System:    system(req.System),
		Tools:     tools(req.Tools),
	}
	turns := messages(req.Messages, h)
	if out.MaxTokens <= 0 {
		out.MaxTokens = p.maxTokens
	}
	if req.ToolChoice == model.ToolNone && len(out.Tools) > 0 {
		none := sdk.NewToolChoiceNoneParam()
		out.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &none}
	}
	switch p.thinking {
	case ThinkingAdaptive:
		out.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	case ThinkingEnabled:
		out.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: p.thinkingBudget}}
		if out.MaxTokens <= p.thinkingBudget {
			out.MaxTokens = p.thinkingBudget + p.maxTokens
		}
	case ThinkingDisabled:
		disabled := sdk.NewThinkingConfigDisabledParam()
		out.Thinking = sdk.ThinkingConfigParamUnion{OfDisabled: &disabled}
	}
	breakpoints(&out, turns, req.System)
	for _, t := range turns {
		if t.role == model.RoleAssistant {
			out.Messages = append(out.Messages, sdk.NewAssistantMessage(t.blocks...))
		} else {
			out.Messages = append(out.Messages, sdk.NewUserMessage(t.blocks...))
		}
	}
	return out
}

// system is the prompt's sections as text blocks, empty ones left out.
func system(sections []model.Section) []sdk.TextBlockParam {
	var out []sdk.TextBlockParam
	for _, s := range sections {
		if s.Text == "" {
			continue
		}
		out = append(out, sdk.TextBlockParam{Text: s.Text})
	}
	return out
}

// tools are the tools offered, each with its input's schema as given.
func tools(ts []model.Tool) []sdk.ToolUnionParam {
	var out []sdk.ToolUnionParam
	for _, t := range ts {
		tp := &sdk.ToolParam{
			Name:        t.Name,
			InputSchema: param.Override[sdk.ToolInputSchemaParam](t.InputSchema()),
		}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: tp})
	}
	return out
}

// turn is one message as sent: its role and its blocks.
type turn struct {
	role   model.Role
	blocks []sdk.ContentBlockParamUnion
}

// messages is the conversation as Anthropic's messages: each part as the
// block the API takes, a message left empty dropped, and neighbours of one
// role merged, as the API wants them alternating.
func messages(msgs []model.Message, h *jsonx.Holes) []turn {
	var out []turn
	for _, m := range msgs {
		var blocks []sdk.ContentBlockParamUnion
		for _, p := range m.Parts {
			if b, ok := block(p, m.Role, h); ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		role := model.RoleUser
		if m.Role == model.RoleAssistant {
			role = model.RoleAssistant
		}
		if n := len(out); n > 0 && out[n-1].role == role {
			out[n-1].blocks = append(out[n-1].blocks, blocks...)
			continue
		}
		out = append(out, turn{role: role, blocks: blocks})
	}
	return out
}

// imageTypes are the image types the Messages API takes.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// block is one part as the block the API takes; ok is false for a part
// that has nothing to send (empty text, thinking without its signature,
// which the API would refuse). A part the API can't take (audio, an image
// or document of a type it doesn't read) is told in text (model.Unsent).
func block(p model.Part, role model.Role, h *jsonx.Holes) (b sdk.ContentBlockParamUnion, ok bool) {
	switch p.Kind {
	case model.KindText:
		if p.Text == "" {
			return b, false
		}
		return sdk.NewTextBlock(h.Hold(p.Text)), true
	case model.KindImage:
		if !imageTypes[strings.ToLower(p.MimeType)] || p.Data == "" {
			return sdk.NewTextBlock(model.Unsent(p)), true
		}
		return sdk.NewImageBlockBase64(strings.ToLower(p.MimeType), h.Hold(p.Data)), true
	case model.KindDocument:
		return document(p, h), true
	case model.KindToolUse:
		return sdk.NewToolUseBlock(p.ID, json.RawMessage(Input(p.Input)), p.Name), true
	case model.KindToolResult:
		r := &sdk.ToolResultBlockParam{ToolUseID: p.ID}
		if p.Text != "" {
			r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: h.Hold(p.Text)}}}
		}
		if p.IsError {
			r.IsError = sdk.Bool(true)
		}
		return sdk.ContentBlockParamUnion{OfToolResult: r}, true
	case model.KindThinking:
		if role != model.RoleAssistant {
			return b, false
		}
		if p.Redacted != "" {
			return sdk.NewRedactedThinkingBlock(p.Redacted), true
		}
		if p.Signature == "" {
			return b, false
		}
		return sdk.NewThinkingBlock(p.Signature, p.Text), true
	case model.KindAudio:
		return sdk.NewTextBlock(model.Unsent(p)), true
	}
	if p.Text == "" {
		return b, false
	}
	return sdk.NewTextBlock(h.Hold(p.Text)), true
}

// document is a document part as a document block: a PDF as its bytes, a
// text document (given as text, or as the bytes of a text/* type) as plain
// text; any other is told in text.
func document(p model.Part, h *jsonx.Holes) sdk.ContentBlockParamUnion {
	d := &sdk.DocumentBlockParam{}
	if p.Name != "" {
		d.Title = sdk.String(p.Name)
	}
	mime := strings.ToLower(p.MimeType)
	switch {
	case p.Data == "" && p.Text != "":
		d.Source.OfText = &sdk.PlainTextSourceParam{Data: h.Hold(p.Text)}
	case p.Data != "" && mime == "application/pdf":
		d.Source.OfBase64 = &sdk.Base64PDFSourceParam{Data: h.Hold(p.Data)}
	case p.Data != "" && (strings.HasPrefix(mime, "text/") || mime == "application/json"):
		raw, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil || !utf8.Valid(raw) {
			return sdk.NewTextBlock(model.Unsent(p))
		}
		d.Source.OfText = &sdk.PlainTextSourceParam{Data: string(raw)}
	default:
		return sdk.NewTextBlock(model.Unsent(p))
	}
	return sdk.ContentBlockParamUnion{OfDocument: d}
}

// Input is a call's input as sent: the input if it is a JSON object, else
// {} (the API takes only an object).
func Input(s string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return "{}"
	}
	return s
}

// breakpoints puts the cache's ephemeral breakpoints where they keep the
// cache from one call to the next, at most MaxBreakpoints: after the tools,
// after the last system section that allows one (Section.Cache), on the
// last user message, and on the user message before it, so the previous
// call's prefix, which ended there, is read.
func breakpoints(p *sdk.MessageNewParams, turns []turn, sections []model.Section) {
	left := MaxBreakpoints
	mark := func(cc *sdk.CacheControlEphemeralParam) {
		if left > 0 && cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
			left--
		}
	}
	if n := len(p.Tools); n > 0 {
		mark(&p.Tools[n-1].OfTool.CacheControl)
	}
	// The system blocks are the non-empty sections, in order.
	last, i := -1, 0
	for _, s := range sections {
		if s.Text == "" {
			continue
		}
		if s.Cache {
			last = i
		}
		i++
	}
	if last >= 0 {
		mark(&p.System[last].CacheControl)
	}
	users := 0
	for i := len(turns) - 1; i >= 0 && users < 2; i-- {
		if turns[i].role != model.RoleUser {
			continue
		}
		if cc := lastCacheControl(turns[i].blocks); cc != nil {
			mark(cc)
			users++
		}
	}
}

// lastCacheControl is the cache_control of the last block that takes one,
// nil if none does.
func lastCacheControl(blocks []sdk.ContentBlockParamUnion) *sdk.CacheControlEphemeralParam {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		switch {
		case b.OfText != nil:
			return &b.OfText.CacheControl
		case b.OfImage != nil:
			return &b.OfImage.CacheControl
		case b.OfDocument != nil:
			return &b.OfDocument.CacheControl
		case b.OfToolResult != nil:
			return &b.OfToolResult.CacheControl
		case b.OfToolUse != nil:
			return &b.OfToolUse.CacheControl
		}
	}
	return nil
}
