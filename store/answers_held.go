package store

import (
	"context"
	"time"
)

// KeepHeld keeps an answer of thread for the one who asks for that
// thread's own (lnk agent chat, through KeptAfter): a single-phase
// recover leaves it kept, since the bridge that asks one sends what it
// takes to the chat, and a link:<name> thread's answers go to no chat. A
// two-phase recover hands it over like any other, and done lets it go.
func (f *Folders) KeepHeld(ctx context.Context, thread, text string, at time.Time, seq int64) (string, error) {
	return f.keep(ctx, thread, text, at, seq, true)
}
