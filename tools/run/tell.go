package run

import (
	"context"
	"fmt"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/send"
)

// Teller tells a background command's end to the agent's endpoint
// through its Deliverer (its outbox in run's folder): a message from
// run:<id> in the conversation that started the command, at one hop
// past the message whose turn started it, keyed by the command (run.<id>,
// since its end) so that one told again after a crash is recorded once
// by the outbox and stored once by the harness.
type Teller struct{ Deliver *send.Deliverer }

// Tell records m's message in the outbox, to be sent whatever crashes
// after.
func (t Teller) Tell(_ context.Context, m background.Message) error {
	msg := send.Message{
		ID:     "run." + m.ID,
		Since:  m.Since,
		Thread: m.Thread,
		From:   "run:" + m.ID,
		Hops:   min(m.Hops+1, contract.MaxHops),
		Text:   m.Text,
	}
	if err := msg.Check(); err != nil {
		return fmt.Errorf("%w: %w", background.ErrUntellable, err)
	}
	_, err := t.Deliver.Send(msg)
	return err
}
