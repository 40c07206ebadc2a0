// Package model is the seam between a turn and the model that answers it:
// a Request (the prompt's sections, the conversation, the tools offered), a
// Provider that streams the answer as it comes, and the Response it ends
// with (text, thinking, tool calls, usage, cost).
//
// It also holds the facts every provider shares: how a model is named
// (maker/name, as OpenRouter names it) and which provider serves a name in
// an environment (Resolve), how a provider's refusal of a prompt as too long
// is told (ClassifyError, ErrPromptTooLong), and what a model takes as data
// beside text (Takes).
//
// Implementations live in packages named after what they speak
// (model/anthropic, model/openai); model/scripted is the offline model and a
// queue of answers for tests; model/fakeprovider is a server speaking the
// real wire formats. This package imports only the standard library.
package model

import "encoding/json"

// Request is one call to a model: everything the model sees.
type Request struct {
	// Model is the model's name as Link names it (Resolve's input is the
	// spec's name; a Provider is given Route.APIModel, the name its API
	// wants).
	Model string
	// System is the prompt's sections in order, what changes least first.
	System []Section
	// Messages is the conversation, oldest first, alternating roles as the
	// provider wants them (a provider may merge neighbours of one role).
	Messages []Message
	// Tools is what the model may call, in the order offered.
	Tools []Tool
	// ToolChoice says whether the model may call a tool.
	ToolChoice ToolChoice
	// MaxTokens bounds the answer; 0 leaves it to the provider's default.
	MaxTokens int
}

// Section is one section of the system prompt.
type Section struct {
	Text string
	// Cache says a cache breakpoint may go after this section: everything
	// up to and including it is expected to be the same next turn.
	Cache bool
}

// Role says who a message is from.
type Role string

// The roles of a message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of the conversation: its role and its parts, in
// order. A tool's answer is a user message of tool_result parts.
type Message struct {
	Role  Role
	Parts []Part
}

// Kind says what a Part is.
type Kind string

// The kinds of part.
const (
	KindText       Kind = "text"
	KindImage      Kind = "image"
	KindAudio      Kind = "audio"
	KindDocument   Kind = "document"
	KindToolUse    Kind = "tool_use"
	KindToolResult Kind = "tool_result"
	KindThinking   Kind = "thinking"
)

// Part is one piece of a message. Which fields are used depends on Kind:
//
//	text         Text
//	image        MimeType, Data (base64)
//	audio        MimeType, Data (base64)
//	document     MimeType, Name, and Data (base64) or Text (its contents)
//	tool_use     ID, Name, Input (the call's arguments, JSON)
//	tool_result  ID (the call it answers), Text, IsError
//	thinking     Text, Signature, Redacted: an earlier answer's thinking,
//	             kept to send back as the provider gave it
type Part struct {
	Kind      Kind
	Text      string
	MimeType  string
	Data      string
	Name      string
	ID        string
	Input     string
	IsError   bool
	Signature string
	Redacted  string
}

// Text is a text part.
func Text(s string) Part { return Part{Kind: KindText, Text: s} }

// Image is an image part; data is base64.
func Image(mimeType, data string) Part {
	return Part{Kind: KindImage, MimeType: mimeType, Data: data}
}

// Audio is an audio part (a voice note); data is base64.
func Audio(mimeType, data string) Part {
	return Part{Kind: KindAudio, MimeType: mimeType, Data: data}
}

// Document is a document part with base64 data (a PDF).
func Document(mimeType, name, data string) Part {
	return Part{Kind: KindDocument, MimeType: mimeType, Name: name, Data: data}
}

// TextDocument is a document part given as its text.
func TextDocument(mimeType, name, text string) Part {
	return Part{Kind: KindDocument, MimeType: mimeType, Name: name, Text: text}
}

// ToolUse is a call an assistant message made; input is JSON.
func ToolUse(id, name, input string) Part {
	return Part{Kind: KindToolUse, ID: id, Name: name, Input: input}
}

// ToolResult answers the call with id callID.
func ToolResult(callID, text string, isError bool) Part {
	return Part{Kind: KindToolResult, ID: callID, Text: text, IsError: isError}
}

// ThinkingPart is thinking an earlier answer gave, sent back as it was.
func ThinkingPart(t Thinking) Part {
	return Part{Kind: KindThinking, Text: t.Text, Signature: t.Signature, Redacted: t.Redacted}
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string // as offered: memory__search
	Description string
	Schema      string // its input's JSON schema, an object; empty is {"type":"object"}
}

// ToolText is one tool's own instructions, as its server gave them (MCP's
// initialize answer): the system prompt's tools section says them for the
// tools offered.
type ToolText struct {
	Tool string // its name: memory
	Text string
}

// InputSchema is the tool's input schema as a provider sends it: the
// schema given if it is a JSON object, with "type":"object" where it says
// no type; an empty or broken one is {"type":"object"}.
func (t Tool) InputSchema() map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(t.Schema), &m) != nil || m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return m
}

// ToolChoice says whether the model may call a tool this round.
type ToolChoice string

// The choices. The tools are still offered with ToolNone, so the prompt (and
// the provider's cache of it) stays the same: the round after a turn's last
// round of calls is told to call nothing.
const (
	ToolAuto ToolChoice = ""     // the model decides
	ToolNone ToolChoice = "none" // the model must answer without calling
)

// LastUserText is the text of the last user message that has any, its text
// parts joined by newlines; "" if none has.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != RoleUser {
			continue
		}
		var s string
		for _, p := range m.Parts {
			if p.Kind != KindText || p.Text == "" {
				continue
			}
			if s != "" {
				s += "\n"
			}
			s += p.Text
		}
		if s != "" {
			return s
		}
	}
	return ""
}
