package store

import "time"

// Kind says what an event records.
type Kind string

// The kinds of event. docs/events.md describes each and its fields.
const (
	KindMessage    Kind = "message"     // a message from the owner or from others
	KindAnswer     Kind = "answer"      // one model call's answer: text, thinking, tool calls, usage
	KindToolResult Kind = "tool_result" // one tool call's answer
	KindSummary    Kind = "summary"     // a summary of the events it covers
	KindModelSet   Kind = "model_set"   // /model:set: the conversation's model from here on
	KindCheckpoint Kind = "checkpoint"  // where the window starts, and the tokens before it
	KindChatSet    Kind = "chat_set"    // /chat:verbose: the conversation's own settings from here on
	KindFailure    Kind = "failure"     // a turn that failed: why the model couldn't answer, never sent to it
)

// Event is one entry of a conversation's append-only log. Its Seq is
// written once, and nothing of it changes after it is written. Fields
// not used by its Kind are left empty.
type Event struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`

	// A message: who sent it (empty From is the owner), the header it was
	// sent to the model with (date, local time, connection, speaker), its
	// text and attachments. Steered marks one that joined a running turn.
	// MessageID is the id a sender on the owner's machine gave it
	// (contract.MessageMeta), so it is never stored twice.
	From      string `json:"from,omitempty"`
	FromName  string `json:"fromName,omitempty"`
	Hops      int    `json:"hops,omitempty"`
	Header    string `json:"header,omitempty"`
	Text      string `json:"text,omitempty"`
	Parts     []Part `json:"parts,omitempty"`
	Steered   bool   `json:"steered,omitempty"`
	MessageID string `json:"messageId,omitempty"`

	// An answer: thinking (kept, never shown), the calls it makes, and
	// what the provider said of the call.
	Thinking   []Thinking `json:"thinking,omitempty"`
	Calls      []ToolCall `json:"calls,omitempty"`
	Model      string     `json:"model,omitempty"`
	Provider   string     `json:"provider,omitempty"`
	ResponseID string     `json:"responseId,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	LatencyMS  int64      `json:"latencyMs,omitempty"`
	CostUSD    float64    `json:"costUsd,omitempty"`
	// Seen is the last event the model was given for this answer: a
	// message written after it, before the answer (one that joined the
	// turn while the model answered), is read after the answer.
	Seen int64 `json:"seen,omitempty"`

	// A tool's answer: which call it answers, and whether it failed.
	CallID  string `json:"callId,omitempty"`
	Tool    string `json:"tool,omitempty"`
	IsError bool   `json:"isError,omitempty"`

	// A summary: the range of events it stands for.
	Covers *Range `json:"covers,omitempty"`

	// An answer's, a summary's or a checkpoint's: where the window starts
	// (an answer's: the window it was answered with; a summary's: the
	// window after it).
	Window *Checkpoint `json:"window,omitempty"`

	// A chat_set: whether the conversation's tool calls are shown
	// (/chat:verbose), false written as false.
	Verbose *bool `json:"verbose,omitempty"`
}

// Part is an attachment of a message: an image, a voice note or a document,
// its bytes base64 as the prompt carried them.
type Part struct {
	Type     string `json:"type"` // image, audio, resource
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"` // a resource's URI or file name
	Data     string `json:"data,omitempty"` // base64
	Text     string `json:"text,omitempty"` // a text resource's contents
}

// Thinking is a provider's thinking block, kept so a later call can send it
// back, never shown.
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// ToolCall is one call an answer makes.
type ToolCall struct {
	ID    string `json:"id"`
	Name  string `json:"name"`  // as offered: memory__search
	Input string `json:"input"` // its arguments, JSON
}

// Usage is the provider's own count of a call's tokens.
type Usage struct {
	In         int64 `json:"in"`
	Out        int64 `json:"out"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
}

// Range is a closed range of sequence numbers.
type Range struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Checkpoint says where a window starts: its first event, that event's
// time, and the rough tokens of the conversation before it.
type Checkpoint struct {
	Start        int64     `json:"start"`
	StartTime    time.Time `json:"startTime"`
	TokensBefore int64     `json:"tokensBefore"`
	// Model and Verbose are what the last model_set and chat_set before
	// Start set ("" and nil when none did), so a turn reading from Start
	// knows them without reading what came before.
	Model   string `json:"model,omitempty"`
	Verbose *bool  `json:"verbose,omitempty"`
}

// FinalAnswer says whether e ends a turn: an answer that makes no call,
// or a failure, the turn's end without one (the caller was told why, the
// model never is).
func FinalAnswer(e Event) bool {
	return e.Kind == KindAnswer && len(e.Calls) == 0 || e.Kind == KindFailure
}

// InUTC is e with its times in UTC, as a driver writes them and a read
// gives them back.
func InUTC(e Event) Event {
	e.Time = e.Time.UTC()
	if e.Window != nil {
		w := *e.Window
		w.StartTime = w.StartTime.UTC()
		e.Window = &w
	}
	return e
}
