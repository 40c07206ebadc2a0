package acp

import (
	"context"
	"encoding/json"

	"github.com/lnk-dev/link/contract"
)

// Prompt is one session/prompt as an agent sees it, its _meta.link already
// checked.
type Prompt struct {
	Agent  string            // the agent answering, as the endpoint routed it
	Thread string            // the session's id: the thread (telegram:42)
	Link   contract.LinkMeta // its _meta.link
	Tools  *[]string         // the connection's Link-Tools header, nil if none
	Blocks []Block           // its content: text, image, audio, resource
	Meta   json.RawMessage   // its _meta as it came, for a harness that passes it on
}

// Block is one content block of a prompt, as ACP carries it.
type Block struct {
	Type     string    `json:"type"` // text, image, audio, resource, resource_link
	Text     string    `json:"text,omitempty"`
	Data     string    `json:"data,omitempty"` // base64, for image and audio
	MimeType string    `json:"mimeType,omitempty"`
	URI      string    `json:"uri,omitempty"`
	Resource *Resource `json:"resource,omitempty"`
}

// Resource is an embedded resource: a document, as text or base64 blob.
type Resource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// Stream carries a turn's answer back while it runs. Its calls fail once
// the caller has gone; an agent that keeps the turn going ignores that.
type Stream interface {
	// Taken tells _link/taken: the agent has the message.
	Taken(ctx context.Context) error
	// Chunk streams a piece of the answer as an agent_message_chunk.
	Chunk(ctx context.Context, text string) error
	// ToolCall streams a tool call, titled with the tool's name; activity,
	// when not nil, is _meta.link.activity.
	ToolCall(ctx context.Context, id, title string, activity *bool) error
	// ToolCallUpdate streams a tool call's end: status is completed or failed.
	ToolCallUpdate(ctx context.Context, id, status string, activity *bool) error
}

// CallsStreamer is a Stream that streams the tool calls a round begins
// together in one write, as Serve's streams do.
type CallsStreamer interface {
	// ToolCalls streams each of calls as ToolCall does, in order.
	ToolCalls(ctx context.Context, calls []ToolCallStart, activity *bool) error
}

// ToolCallStart is a tool call begun: its id, and its title, the tool's
// name.
type ToolCallStart struct{ ID, Title string }

// Outcome is how a prompt ended: its stop reason, whether it joined a
// running turn whose answer answers it, and what to call once its
// response is written.
type Outcome struct {
	StopReason string // end_turn, max_tokens, refusal, cancelled
	Steered    bool   // the prompt joined a running turn, whose answer answers it
	// Delivered, when not nil, is called once the prompt's response was
	// written to the framer, and never when that write failed (the client
	// gone before it): an agent that held the answer until its caller had
	// it lets it go here. Serve calls it on the prompt's goroutine before
	// Serve returns.
	Delivered func()
}

// Agent answers an endpoint's prompts. Link Harness and the conformance
// kit's reference agent implement it; the hub forwards raw ACP instead.
type Agent interface {
	// Prompt answers one prompt, streaming its answer to s.
	Prompt(ctx context.Context, p Prompt, s Stream) (Outcome, error)
	// Recover answers _link/recover for agent.
	Recover(ctx context.Context, agent string, p contract.RecoverParams) (contract.RecoverResult, error)
}
