package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/model"
)

// MaxBreakpoints is how many cache_control breakpoints the Messages API
// takes in one request.
const MaxBreakpoints = 4

// params makes a Messages API request of req: its system sections, tools
// and conversation as Anthropic's blocks, with the cache's breakpoints
// (breakpoints says where).
func (p *Provider) params(req model.Request) request {
	return p.paramsHeld(req, nil)
}

// paramsHeld is params with the conversation's large texts and
// attachments held by h (nil holds none), put in place as the request is
// sent (Stream), so the encoder, which copies a block's bytes at each
// level it nests, copies only placeholders.
func (p *Provider) paramsHeld(req model.Request, h *jsonx.Holes) request {
	out := request{
		Model:     req.Model,
		MaxTokens: int64(req.MaxTokens),
		System:    system(req.System),
		Tools:     tools(req.Tools),
		Stream:    true,
	}
	turns := messages(req.Messages, h)
	if out.MaxTokens <= 0 {
		out.MaxTokens = p.maxTokens
	}
	if req.ToolChoice == model.ToolNone && len(out.Tools) > 0 {
		out.ToolChoice = &typeOnly{Type: "none"}
	}
	switch p.thinking {
	case ThinkingAdaptive:
		out.Thinking = &thinkingArg{Type: "adaptive"}
	case ThinkingEnabled:
		out.Thinking = &thinkingArg{Type: "enabled", BudgetTokens: p.thinkingBudget}
		if out.MaxTokens <= p.thinkingBudget {
			out.MaxTokens = p.thinkingBudget + p.maxTokens
		}
	case ThinkingDisabled:
		out.Thinking = &thinkingArg{Type: "disabled"}
	}
	breakpoints(&out, turns, req.System)
	for _, t := range turns {
		out.Messages = append(out.Messages, message{Role: string(t.role), Content: t.blocks})
	}
	return out
}

// system is the prompt's sections as text blocks, empty ones left out.
func system(sections []model.Section) []block {
	var out []block
	for _, s := range sections {
		if s.Text == "" {
			continue
		}
		out = append(out, textBlock(s.Text))
	}
	return out
}

// tools are the tools offered, each with its input's schema as given.
func tools(ts []model.Tool) []tool {
	var out []tool
	for _, t := range ts {
		out = append(out, tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema()})
	}
	return out
}

// turn is one message as sent: its role and its blocks.
type turn struct {
	role   model.Role
	blocks []block
}

// messages is the conversation as Anthropic's messages: each part as the
// block the API takes, a message left empty dropped, and neighbours of one
// role merged, as the API wants them alternating.
func messages(msgs []model.Message, h *jsonx.Holes) []turn {
	var out []turn
	for _, m := range msgs {
		var blocks []block
		for _, p := range m.Parts {
			if b, ok := partBlock(p, m.Role, h); ok {
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

// partBlock is one part as the block the API takes; ok is false for a part
// that has nothing to send (empty text, thinking without its signature,
// which the API would refuse). A part the API can't take (audio, an image
// or document of a type it doesn't read) is told in text (model.Unsent).
func partBlock(p model.Part, role model.Role, h *jsonx.Holes) (b block, ok bool) {
	switch p.Kind {
	case model.KindText:
		if p.Text == "" {
			return b, false
		}
		return textBlock(h.Hold(p.Text)), true
	case model.KindImage:
		mime := strings.ToLower(p.MimeType)
		if !imageTypes[mime] || p.Data == "" {
			return textBlock(model.Unsent(p)), true
		}
		return block{Type: "image", Source: &source{Type: "base64", MediaType: mime, Data: h.Hold(p.Data)}}, true
	case model.KindDocument:
		return document(p, h), true
	case model.KindToolUse:
		return block{Type: "tool_use", ID: p.ID, Name: p.Name, Input: json.RawMessage(Input(p.Input))}, true
	case model.KindToolResult:
		r := block{Type: "tool_result", ToolUseID: p.ID, IsError: p.IsError}
		if p.Text != "" {
			r.Content = []block{textBlock(h.Hold(p.Text))}
		}
		return r, true
	case model.KindThinking:
		if role != model.RoleAssistant {
			return b, false
		}
		if p.Redacted != "" {
			return block{Type: "redacted_thinking", Data: p.Redacted}, true
		}
		if p.Signature == "" {
			return b, false
		}
		text := p.Text
		return block{Type: "thinking", Thinking: &text, Signature: p.Signature}, true
	case model.KindAudio:
		return textBlock(model.Unsent(p)), true
	}
	if p.Text == "" {
		return b, false
	}
	return textBlock(h.Hold(p.Text)), true
}

// document is a document part as a document block: a PDF as its bytes, a
// text document (given as text, or as the bytes of a text/* type) as plain
// text; any other is told in text.
func document(p model.Part, h *jsonx.Holes) block {
	d := block{Type: "document", Title: p.Name}
	mime := strings.ToLower(p.MimeType)
	switch {
	case p.Data == "" && p.Text != "":
		d.Source = &source{Type: "text", MediaType: "text/plain", Data: h.Hold(p.Text)}
	case p.Data != "" && mime == "application/pdf":
		d.Source = &source{Type: "base64", MediaType: "application/pdf", Data: h.Hold(p.Data)}
	case p.Data != "" && (strings.HasPrefix(mime, "text/") || mime == "application/json"):
		raw, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil || !utf8.Valid(raw) {
			return textBlock(model.Unsent(p))
		}
		d.Source = &source{Type: "text", MediaType: "text/plain", Data: string(raw)}
	default:
		return textBlock(model.Unsent(p))
	}
	return d
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
func breakpoints(p *request, turns []turn, sections []model.Section) {
	left := MaxBreakpoints
	mark := func(cc **typeOnly) {
		if left > 0 && cc != nil {
			*cc = ephemeral
			left--
		}
	}
	if n := len(p.Tools); n > 0 {
		mark(&p.Tools[n-1].CacheControl)
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
func lastCacheControl(blocks []block) **typeOnly {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].cacheable() {
			return &blocks[i].CacheControl
		}
	}
	return nil
}
