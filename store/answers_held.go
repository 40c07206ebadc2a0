package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lnk-dev/link/contract"
)

// KeepHeld keeps an answer of thread for the one who asks for that
// thread's own (lnk agent chat, through KeptAfter): a single-phase
// recover leaves it kept, since the bridge that asks one sends what it
// takes to the chat, and a link:<name> thread's answers go to no chat. A
// two-phase recover hands it over like any other, and done lets it go.
func (f *Folders) KeepHeld(ctx context.Context, thread, text string, at time.Time, seq int64) (string, error) {
	if at.IsZero() {
		at = f.now()
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	k := Kept{ID: name + idSep + randomHex(12), Thread: thread, Text: text, Kept: at.UTC(), Seq: seq, Held: true}
	err = f.update(ctx, thread, func(dir string) error {
		all, err := readAnswers(dir, thread)
		if err != nil {
			return err
		}
		return writeAnswers(dir, append(all, k))
	})
	if err != nil {
		return "", fmt.Errorf("keep an answer of %s: %w", thread, err)
	}
	return k.ID, nil
}
