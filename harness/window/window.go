// Package window decides how much of a conversation the model sees: the
// window's size from the model's facts and the spec's [window] settings,
// a rough count of tokens, the drop points at which the oldest turns
// leave half the window at a time, the checkpoint each answer records,
// and when what leaves is summarized. It reads no store and calls no
// model: the turn gives it events and does what it says.
package window

import (
	"math"
	"unicode/utf8"

	"github.com/lnk-dev/link/store"
)

// Settings are the spec's [window] table.
type Settings struct {
	// Max is the window sent, in tokens. Link's default is held to the
	// model's window; one the user or a team set (MaxSet) is taken as
	// set, the provider refusing a prompt too long its only limit.
	Max    int
	MaxSet bool
	// CompactAt is the share of the conversation's room at which what
	// leaves at the next drop point is summarized; Never lets it leave
	// unsummarized (compact_at = "never").
	CompactAt float64
	Never     bool
	// SaveNotes: the model saves what matters with memory__remember before
	// it summarizes, in a conversation its owner spoke in.
	SaveNotes bool
	// Answer is the answer's share of the window when [model] answer
	// doesn't say its tokens.
	Answer float64
	// Margin is the share of the window kept free for the difference
	// between the rough count and the provider's.
	Margin float64
	// Unknown is the window of a model nobody described.
	Unknown int
}

// Link's [window] defaults.
const (
	DefaultMax       = 200000
	DefaultCompactAt = 0.75
	DefaultAnswer    = 0.125
	DefaultMargin    = 0.05
	DefaultUnknown   = 32768
)

// Defaults are Link's [window] settings.
func Defaults() Settings {
	return Settings{Max: DefaultMax, CompactAt: DefaultCompactAt, SaveNotes: true, Answer: DefaultAnswer, Margin: DefaultMargin, Unknown: DefaultUnknown}
}

// Size is the window sent to a model whose window is modelWindow: a
// window set is taken as set, Link's is held to the model's.
func (s Settings) Size(modelWindow int) int {
	if s.MaxSet && s.Max > 0 {
		return s.Max
	}
	max := s.Max
	if max <= 0 {
		max = DefaultMax
	}
	if modelWindow > 0 && modelWindow < max {
		return modelWindow
	}
	return max
}

// AnswerTokens is the answer's share of a window of size tokens: set
// ([model] answer) when positive, else the Answer share of the window,
// at most the model's longest answer when that is known (longest > 0).
func (s Settings) AnswerTokens(size, set, longest int) int {
	n := set
	if n <= 0 {
		share := s.Answer
		if share <= 0 {
			share = DefaultAnswer
		}
		n = int(float64(size) * share)
	}
	if longest > 0 && n > longest {
		n = longest
	}
	return n
}

// Room is the conversation's share of a window of size tokens: the window
// less the answer's, the instructions and tools (their rough tokens) and
// the margin. It is never below one token.
func (s Settings) Room(size, answer, instructions int) int {
	margin := s.Margin
	if margin < 0 {
		margin = 0
	}
	return max(1, size-answer-instructions-int(math.Ceil(float64(size)*margin)))
}

// Due says whether a window of tokens fills enough of room to be
// compacted at its next drop point.
func (s Settings) Due(tokens, room int) bool {
	if s.Never {
		return false
	}
	at := s.CompactAt
	if at <= 0 || at > 1 {
		at = DefaultCompactAt
	}
	return float64(tokens) >= at*float64(room)
}

// Tokens counts s roughly: four ASCII characters a token, rounded up, and
// one for any other character, so Chinese or an emoji isn't undercounted.
func Tokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
		other++
	}
	return (ascii+3)/4 + other
}

// perEvent is what each event costs beyond its text: its role and the
// provider's framing.
const perEvent = 4

// EventTokens counts an event roughly as the model sees it: a message's
// header, text and attachments (base64 as sent), an answer's thinking,
// text and calls, a tool's answer, a summary's text (the notes it saved are the
// prompt's, not the window's). Events the model
// doesn't see (a model_set, a chat_set, a checkpoint) count none. The
// count of an event never changes, so the drop points it fixes don't.
func EventTokens(e store.Event) int {
	switch e.Kind {
	case store.KindMessage:
		n := perEvent + Tokens(e.Header) + Tokens(e.Text)
		for _, p := range e.Parts {
			n += perEvent + Tokens(p.Name) + Tokens(p.MimeType) + Tokens(p.Data) + Tokens(p.Text)
		}
		return n
	case store.KindAnswer:
		n := perEvent + Tokens(e.Text)
		for _, th := range e.Thinking {
			n += Tokens(th.Text) + Tokens(th.Signature) + Tokens(th.Redacted)
		}
		for _, c := range e.Calls {
			n += perEvent + Tokens(c.ID) + Tokens(c.Name) + Tokens(c.Input)
		}
		return n
	case store.KindToolResult:
		return perEvent + Tokens(e.CallID) + Tokens(e.Text)
	case store.KindSummary:
		return perEvent + Tokens(e.Text)
	}
	return 0
}
