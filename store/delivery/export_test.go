package delivery

import (
	"context"
	"time"

	"github.com/lnk-dev/link/contract"
)

// Parse reads answers.json of thread's folder (parse).
var Parse = parse

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

// TakeAfter hands over the first answer of thread kept at or after t,
// the one that answered a message sent at t, and forgets it; ok is false
// when there is none. One kept before t was never the message's.
func (a *Answers) TakeAfter(ctx context.Context, thread string, t time.Time) (k Answer, ok bool, err error) {
	gone, err := a.removeAt(ctx, thread, func(all []Answer) map[int]bool {
		first := -1
		for i, c := range all {
			if !c.At.Before(t) && (first < 0 || c.At.Before(all[first].At)) {
				first = i
			}
		}
		if first < 0 {
			return nil
		}
		return map[int]bool{first: true}
	})
	if err != nil || len(gone) == 0 {
		return Answer{}, false, err
	}
	return gone[0], true, nil
}
