package delivery

import (
	"context"

	"github.com/lnk-dev/link/contract"
)

// HandOver is a recover of a's answers as _link/recover asks one (Recover),
// its answers read back as Answers: id (two-phase), thread and text.
func (a *Answers) HandOver(ctx context.Context, twoPhase bool, pass map[string]bool) ([]Answer, error) {
	res, err := a.Recover(ctx, contract.RecoverParams{TwoPhase: twoPhase}, pass)
	var out []Answer
	for _, r := range res.Answers {
		out = append(out, Answer{ID: r.ID, Thread: r.Thread, Text: r.Text})
	}
	return out, err
}

// Done lets the answers with ids go, as a recover's done does.
func (a *Answers) Done(ctx context.Context, ids []string) error {
	if ids == nil {
		ids = []string{}
	}
	_, err := a.Recover(ctx, contract.RecoverParams{Done: ids}, nil)
	return err
}
