package harness

import (
	"context"
	"strings"
	"sync"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/internal/jsonx"
	"github.com/lnk-dev/link/store"
)

// cutNote ends an answer cut at the bridge's limit, saying why.
const cutNote = "\n\n[The answer was cut here: it passed 16 MiB, the most a chat's bridge reads of one.]"

// chunkOverhead is what one agent_message_chunk's notification adds to
// its text on the wire, counted generously.
const chunkOverhead = 160

// answer is a turn's answer as its caller gets it: the text streamed so
// far, whether the caller has gone, and whether the answer reached the
// bridge's limit. Streaming never fails the turn: a caller gone is only
// noted, so the turn runs to its end and its answer is kept.
type answer struct {
	ctx      context.Context // the caller's; nil when there's no caller
	s        acp.Stream      // nil when there's no caller
	max      int
	activity *bool

	mu     sync.Mutex
	text   strings.Builder // everything streamed, the answer as kept
	sent   int             // how much of text went to the caller: the rest is held (flush)
	wire   int             // bytes streamed, as the bridge reads them
	gone   bool
	capped bool
	rounds int // rounds that streamed text, for the break between them
}

// newAnswer streams to s under ctx; a nil s is a turn nobody waits for.
func newAnswer(ctx context.Context, s acp.Stream, max int, activity *bool) *answer {
	if ctx == nil || s == nil {
		ctx = context.Background()
	}
	return &answer{ctx: ctx, s: s, max: max, activity: activity, gone: s == nil}
}

// setActivity sets the _meta.link.activity of the calls streamed from
// now on (nil: none).
func (a *answer) setActivity(activity *bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.activity = activity
}

// startRound marks a new model round: its text, if any, is set apart
// from the last round's.
func (a *answer) startRound() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.text.Len() > 0 {
		a.rounds++
	}
}

// chunk streams text as part of the answer and says how much of it went:
// all of it, or, at the bridge's limit, the part that fits, with capped
// true; the note saying why has then been added. With more (the model
// already holds what follows: model.Delta.More) the text is held, to go
// in one agent_message_chunk with what follows it, until a chunk without
// more or flush; at the limit nothing is held.
func (a *answer) chunk(text string, more bool) (sent string, capped bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.capped {
		return "", true
	}
	if a.rounds > 0 && a.text.Len() > 0 && text != "" {
		// The first text of a round after another's.
		a.rounds = 0
		text = "\n\n" + text
	}
	room := a.max - a.wire - chunkOverhead - wireLen(cutNote) - chunkOverhead
	if cost := wireLen(text) + chunkOverhead; cost > room {
		a.capped = true
		sent = jsonx.Fit(text, room-chunkOverhead)
		a.add(sent + cutNote)
		a.flushLocked()
		return sent, true
	}
	a.add(text)
	if !more {
		a.flushLocked()
	}
	return text, false
}

// add adds text to the answer, to be streamed by the next flush.
func (a *answer) add(text string) {
	a.text.WriteString(text)
	if text != "" {
		a.wire += wireLen(text) + chunkOverhead
	}
}

// flush streams the text held (chunk's more) to the caller: a model's
// stream calls it as it ends, however it ends.
func (a *answer) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
}

// flushLocked streams what of the answer hasn't gone yet as one chunk,
// unless the caller is gone; a failed write means it has gone.
func (a *answer) flushLocked() {
	if a.sent == a.text.Len() {
		return
	}
	text := a.text.String()[a.sent:]
	a.sent = a.text.Len()
	if a.gone {
		return
	}
	if ctx, ok := a.caller(); !ok || a.s.Chunk(ctx, text) != nil {
		a.gone = true
	}
}

// toolCalls streams the start of a round's calls, each titled with its
// tool's name: begun together, in one write when the stream can
// (acp.CallsStreamer).
func (a *answer) toolCalls(calls []store.ToolCall) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
	if a.gone {
		return
	}
	ctx, ok := a.caller()
	if !ok {
		a.gone = true
		return
	}
	if cs, ok := a.s.(acp.CallsStreamer); ok {
		starts := make([]acp.ToolCallStart, len(calls))
		for i, c := range calls {
			starts[i] = acp.ToolCallStart{ID: c.ID, Title: c.Name}
		}
		a.gone = cs.ToolCalls(ctx, starts, a.activity) != nil
		return
	}
	for _, c := range calls {
		if a.s.ToolCall(ctx, c.ID, c.Name, a.activity) != nil {
			a.gone = true
			return
		}
	}
}

// toolDone streams a call's end.
func (a *answer) toolDone(id string, failed bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushLocked()
	if a.gone {
		return
	}
	status := acp.ToolCompleted
	if failed {
		status = acp.ToolFailed
	}
	if ctx, ok := a.caller(); !ok || a.s.ToolCallUpdate(ctx, id, status, a.activity) != nil {
		a.gone = true
	}
}

// callerGone says whether the caller went before the answer's end: a
// write failed, or its context ended, other than by session/cancel.
func (a *answer) callerGone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, live := a.caller()
	return a.gone || !live
}

// Text is the answer as streamed, whether or not anyone took it.
func (a *answer) Text() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.text.String()
}

// wireLen is how many bytes s takes as a JSON string, counted without
// encoding it (jsonx.StringLen: what json.Marshal writes, fuzzed).
func wireLen(s string) int {
	return jsonx.StringLen(s)
}
