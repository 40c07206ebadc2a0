package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// A message sent once (contract.MessageMeta): its id is kept with its
// event, and a prompt whose id the conversation holds already is answered
// contract.CodeAlreadyReceived, nothing stored and no turn run. Its
// sender records the message before it sends it and sends it again after
// a crash of either side, so without this a message stored just before
// the crash would begin a second turn.

// receivedMargin is how long before a message's since its id is still
// looked for: the sender's clock and the harness's are the machine's,
// but a clock set back between the two would hide the first.
const receivedMargin = 10 * time.Minute

// receivedRead is how many of the latest events a look for an id reads
// first; it reads four times more each time the events it read all came
// after the message's since.
const receivedRead = 64

// received says which event of c holds the message id once.ID, 0 when
// none written since once.Since (less receivedMargin) does.
func (h *Harness) received(ctx context.Context, c *conv, once contract.MessageOnce) (int64, error) {
	after := once.Since.Add(-receivedMargin)
	for n := receivedRead; ; n *= 4 {
		events, err := store.Latest(ctx, c.keeper(), c.thread, n)
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", c.thread, err)
		}
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			if e.Kind == store.KindMessage && e.MessageID == once.ID {
				return e.Seq, nil
			}
		}
		if len(events) < n || events[0].Seq <= 1 || events[0].Time.Before(after) {
			return 0, nil
		}
	}
}

// checkReceived refuses a message whose id c holds already.
func (h *Harness) checkReceived(ctx context.Context, c *conv, once *contract.MessageOnce) error {
	if once == nil {
		return nil
	}
	seq, err := h.received(ctx, c, *once)
	if err != nil || seq == 0 {
		return err
	}
	data, _ := json.Marshal(contract.AlreadyReceived{ID: once.ID, Seq: seq})
	return &acp.Error{
		Code:    contract.CodeAlreadyReceived,
		Message: fmt.Sprintf("message %s was received already, as event %d of %s: it is not stored again, and its answer went where the first's goes", once.ID, seq, c.thread),
		Data:    data,
	}
}

// appendMessage appends msg, a prompt's message, as append does; a
// message sent once is looked for first under the conversation's lock,
// so two of the same id racing here store one.
func (h *Harness) appendMessage(ctx context.Context, c *conv, msg store.Event, once *contract.MessageOnce) (store.Event, error) {
	defer h.locks.lock(c.agent, c.thread)()
	if err := h.checkReceived(ctx, c, once); err != nil {
		return msg, err
	}
	return h.appendLocked(ctx, c, msg)
}

// messageOnce reads the prompt's contract.MessageMeta: nil when it has
// none.
func messageOnce(p acp.Prompt) (*contract.MessageOnce, error) {
	m, ok, err := contract.ParseMessageOnce(p.Meta)
	if err != nil || !ok {
		return nil, err
	}
	return &m, nil
}

// answerFor is the answer of a turn begun by a prompt streaming to s: one
// nobody waits for when the message asks its answer kept for
// _link/recover from the start (contract.MessageOnce.Recover), so it is
// never streamed to a caller that goes once it has _link/taken.
func answerFor(ctx context.Context, s acp.Stream, max int, activity *bool, once *contract.MessageOnce) *answer {
	if once != nil && once.Recover {
		return newAnswer(nil, nil, max, activity)
	}
	return newAnswer(ctx, s, max, activity)
}
