package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/lnk-dev/link/acp"
	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/tools/send"
)

// Sent is the Sender of tools/send: each message one exchange at the
// endpoint (the proof, the key, one WebSocket), its id said so the
// harness stores it once however often it comes.
type Sent struct{}

var _ Sender = Sent{}

// target is to as tools/send names an endpoint.
func target(to Endpoint) send.Target {
	return send.Target{URL: to.URL, Key: to.Key, Agent: to.Agent, AgentID: to.AgentID}
}

// message is m as tools/send sends it; wait reads its answer.
func message(m Message, wait bool) send.Message {
	return send.Message{ID: m.ID, Since: m.Since, Thread: m.Thread, From: m.From, Hops: m.Hops, Tools: m.Tools, Model: m.Model, Text: m.Text, Wait: wait}
}

// sendErr is a failed send as the team reads it: a refusal ErrRefused,
// a message the harness had before the failure ErrReceived (its answer
// is kept), anything else to be tried again.
func sendErr(err error) error {
	var se *send.Error
	var ae *acp.Error
	switch {
	case errors.As(err, &se) && se.Refused:
		return fmt.Errorf("%w: %v", ErrRefused, err)
	case errors.As(err, &se) && se.Taken && errors.As(err, &ae):
		// The harness had the message and answered its prompt with an
		// error: its turn failed, and no answer is kept.
		return fmt.Errorf("%w: %s", ErrFailed, ae.Message)
	case errors.As(err, &se) && se.Taken:
		return fmt.Errorf("%w: %v", ErrReceived, err)
	}
	return err
}

// Ask sends m and reads its turn's answer. A message that joined a turn
// already running in its thread is answered by that turn, whose caller
// has its answer: it is said so.
func (Sent) Ask(ctx context.Context, to Endpoint, m Message) (string, error) {
	res, err := send.Send(ctx, target(to), message(m, true))
	switch {
	case err != nil:
		return "", sendErr(err)
	case res.Already:
		return "", ErrReceived
	case res.Steered:
		return "[It joined a turn already running in " + m.Thread + ", whose answer answers it there.]", nil
	}
	return res.Answer, nil
}

// Tell sends m and lets the connection go once the harness has it, its
// answer kept for the owner.
func (Sent) Tell(ctx context.Context, to Endpoint, m Message) error {
	res, err := send.Send(ctx, target(to), message(m, false))
	switch {
	case err != nil:
		if err := sendErr(err); errors.Is(err, ErrReceived) {
			return nil // it has the message: told
		} else {
			return err
		}
	case res.Already:
		return ErrReceived
	}
	return nil
}

// Kept is thread's answers kept at to, in two phases, every page of
// them looked through (send.Kept).
func (Sent) Kept(ctx context.Context, to Endpoint, thread string) ([]Kept, error) {
	all, err := send.Kept(ctx, target(to))
	if err != nil {
		return nil, err
	}
	var out []Kept
	for _, a := range all {
		if a.ID != "" && a.Thread == thread {
			out = append(out, Kept{ID: a.ID, Thread: a.Thread, Text: a.Text})
		}
	}
	return out, nil
}

// Done lets the answers kept at to with ids go.
func (Sent) Done(ctx context.Context, to Endpoint, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := send.Recover(ctx, target(to), contract.RecoverParams{Done: ids})
	return err
}
