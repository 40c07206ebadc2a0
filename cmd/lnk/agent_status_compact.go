package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store/compact"
)

// compactLongEvents is how many events make a compact conversation one
// lnk agent status names: compact keeps no index of its frames, so each
// turn reads and decompresses the whole conversation, about 3 ms a
// thousand events on two cores (308 ms a turn at 100,000 against 0.14 for
// the log, issue #29).
const compactLongEvents = 10_000

// longCompact is a compact conversation past compactLongEvents.
type longCompact struct {
	Thread string `json:"thread"`
	Events int64  `json:"events"`
}

// longCompacts finds the compact conversations of chats past
// compactLongEvents among folders (the conversations' folder names). It
// reads each whole to count it, as each of its turns does: a compression
// ratio bounds no count of events from the files' size.
func longCompacts(ctx context.Context, chats string, folders []string, problem func(string, ...any)) []longCompact {
	var out []longCompact
	var d *compact.Driver
	for _, name := range folders {
		thread, err := contract.FolderThread(name)
		if err != nil {
			continue
		}
		if d == nil {
			d = compact.Open(chats)
			defer d.Close()
		}
		last, err := d.Latest(ctx, thread, 1)
		if err != nil {
			problem("count the events of %s: %v", thread, err)
			continue
		}
		if len(last) == 1 && last[0].Seq > compactLongEvents {
			out = append(out, longCompact{Thread: thread, Events: last[0].Seq})
		}
	}
	return out
}

// writeLongCompacts tells the owner what each long compact conversation
// costs a turn, and how to keep it another way.
func writeLongCompacts(w io.Writer, long []longCompact) {
	for _, l := range long {
		fmt.Fprintf(w, "  %-9s %s is compact and %d events long: each turn reads and decompresses all of it (about %d ms on two cores, at 3 ms a thousand events); lnk agent chat convert --to log (or sqlite) keeps a turn's cost the same at any length\n", "", l.Thread, l.Events, l.Events*3/1000)
	}
}
