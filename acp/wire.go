package acp

import (
	"encoding/json"

	"github.com/lnk-dev/link/contract"
)

// ACP's methods Serve answers and Client sends.
const (
	MethodInitialize    = "initialize"
	MethodSessionNew    = "session/new"
	MethodSessionLoad   = "session/load"
	MethodSessionResume = "session/resume"
	MethodSessionPrompt = "session/prompt"
	MethodSessionCancel = "session/cancel" // a notification
	MethodSessionUpdate = "session/update" // a notification, agent to client
	MethodSessionClose  = "session/close"
	MethodSessionList   = "session/list"
	// MethodSetConfigOption sets one of a session's config options (its
	// model, where the agent offers one of category model).
	MethodSetConfigOption = "session/set_config_option"
	// MethodCancelRequest is a notification either side sends to cancel
	// a request of its own it no longer waits for (its requestId).
	MethodCancelRequest = "$/cancel_request"
)

// ProtocolVersion is the ACP version Serve speaks.
const ProtocolVersion = 1

// Stop reasons of a prompt's answer.
const (
	StopEndTurn   = "end_turn"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
	StopCancelled = "cancelled"
)

// Kinds of session/update Serve streams.
const (
	UpdateMessageChunk   = "agent_message_chunk"
	UpdateToolCall       = "tool_call"
	UpdateToolCallUpdate = "tool_call_update"
	// Kinds an agent may stream besides: a session's config options, its
	// title, and the context it uses (usage_update: used, size, cost).
	UpdateConfigOption = "config_option_update"
	UpdateSessionInfo  = "session_info_update"
	UpdateUsage        = "usage_update"
)

// Statuses of a tool call.
const (
	ToolInProgress = "in_progress"
	ToolCompleted  = "completed"
	ToolFailed     = "failed"
)

// InitializeResult is Serve's answer to initialize.
type InitializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []json.RawMessage `json:"authMethods"`
	Meta              *InitializeMeta   `json:"_meta,omitempty"`
}

// InitializeMeta is what Serve says of itself beyond ACP, in its
// initialize answer's _meta: under link, that its sessions are Link's
// threads (a session/resume of any thread takes it up, made when new, and
// each prompt's _meta.link is read), so a hub in front of it names each
// session by its thread and passes _link/recover on; and under state,
// that it answers the agent state methods itself (a StateKeeper).
type InitializeMeta struct {
	Link struct {
		Threads bool `json:"threads"`
		State   bool `json:"state,omitempty"`
	} `json:"link"`
}

// AgentCapabilities are what an endpoint says it does.
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
}

// PromptCapabilities are the content blocks a prompt may carry beyond text.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// SessionCapabilities are the session methods beyond ACP's baseline: each
// present member says its method is answered (session/resume,
// session/list, session/close).
type SessionCapabilities struct {
	Resume *struct{} `json:"resume,omitempty"`
	List   *struct{} `json:"list,omitempty"`
	Close  *struct{} `json:"close,omitempty"`
}

// sessionParams are session/resume's, session/load's and session/cancel's:
// only the session's id matters here.
type sessionParams struct {
	SessionID *string `json:"sessionId"`
}

// NewSessionResult is session/new's answer.
type NewSessionResult struct {
	SessionID     string         `json:"sessionId"`
	ConfigOptions []ConfigOption `json:"configOptions,omitempty"`
}

// OpenSessionResult is session/resume's and session/load's answer: the
// session's config options, when the agent has any.
type OpenSessionResult struct {
	ConfigOptions []ConfigOption `json:"configOptions,omitempty"`
}

// promptParams are session/prompt's, its blocks and _meta kept raw until
// checked.
type promptParams struct {
	SessionID *string         `json:"sessionId"`
	Prompt    json.RawMessage `json:"prompt"`
	Meta      json.RawMessage `json:"_meta"`
}

// PromptResult is session/prompt's answer: why the turn stopped, and in
// _meta.link whether the prompt joined a running turn.
type PromptResult struct {
	StopReason string `json:"stopReason"`
	Meta       *Meta  `json:"_meta,omitempty"`
}

// Steered says whether the answer said _meta.link.steered.
func (r PromptResult) Steered() bool { return r.Meta != nil && r.Meta.Link.Steered }

// Meta is a _meta holding Link's link member.
type Meta struct {
	Link contract.LinkMeta `json:"link"`
}

// Notification is session/update's params.
type Notification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// Update is the one session/update shape Serve sends and Client reads:
// a message chunk (Content, and MessageID: chunks of one message share
// it), a tool call or its update (ToolCallID, Title, Status), with
// _meta.link.activity when said. Fields of other kinds are not kept: a
// proxy forwards Notification.Update raw instead.
type Update struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       *TextContent `json:"content,omitempty"`
	MessageID     string       `json:"messageId,omitempty"`
	ToolCallID    string       `json:"toolCallId,omitempty"`
	Title         string       `json:"title,omitempty"`
	Status        string       `json:"status,omitempty"`
	Meta          *Meta        `json:"_meta,omitempty"`
}

// TextContent is a text content block.
type TextContent struct {
	Type string `json:"type"` // text
	Text string `json:"text"`
}
