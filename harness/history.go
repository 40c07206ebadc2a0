package harness

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/lnk-dev/link/store"
)

// DefaultKeepEvents bounds the events a harness keeps between turns, in
// bytes as estimated (eventSize), over every conversation: about forty
// conversations whose windows hold 100,000 tokens, with their messages.
const DefaultKeepEvents = 32 << 20

// keptLately is how lately a conversation kept was used for a
// conversation not kept to take its place past the bound: none used
// since is let go for one that would have to be read anyway.
const keptLately = 30 * time.Second

// history keeps, between turns, the events of the conversations whose
// turns ran lately, so the next turn reads only what was written after
// them rather than the whole conversation. It is a cache and holds
// nothing that matters: each event is as read from the store, or as a
// turn here appended it right after the events before it, which a read
// gives back the same (reader.follows); events are never changed once
// written, and a turn proves the conversation is the one kept by reading
// its last kept event again, byte for byte (history.check); one that
// isn't is read whole. An entry unused for a sweep's time goes, and the
// least lately used go first past max, so an idle harness holds none;
// but a conversation that was not kept takes no place past max from one
// used lately (keptLately): many conversations taking turns, more than
// max holds, would each let go the one whose turn is next, and none would
// ever be found kept. So those kept stay kept, and the rest are read.
type history struct {
	mu   sync.Mutex
	kept map[histKey]*histEntry
	size int
	max  int
}

type histKey struct{ agent, thread string }

type histEntry struct {
	kept
	size int
	used time.Time
}

// kept is what a turn keeps of its conversation for the next turn here:
// the events read, from the window's start, and their size (eventSize's
// sum, counted as they were added), the window counts of the first of
// them (reader.counts), the window among them (windowView), its
// messages as last sent (keptMessages) and the last model_set and
// chat_set among them (lastSets).
type kept struct {
	events []store.Event
	bytes  int
	counts []int
	win    windowView
	msgs   keptMessages
	sets   lastSets
	// again: these are the events kept after the conversation's last
	// turn here, taken and kept again (put).
	again bool
}

func newHistory(max int) *history {
	return &history{kept: map[histKey]*histEntry{}, max: max}
}

// take hands over what is kept of thread, forgetting it, so only one
// turn has it; its events are nil when none are.
func (hs *history) take(agent, thread string) kept {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	k := histKey{agent, thread}
	e := hs.kept[k]
	if e == nil {
		return kept{}
	}
	delete(hs.kept, k)
	hs.size -= e.size
	e.kept.again = true
	return e.kept
}

// put keeps k's events (read from the store, in order from the window's
// start) of thread as of now, with the window counts of the first of
// them (counts[i] is window.Count(events[i])) and the window among them,
// letting the least lately used go past max; but when k is not kept
// again (again) and every other one past max was used lately
// (keptLately), k goes instead.
func (hs *history) put(agent, thread string, k kept, now time.Time) {
	if len(k.events) == 0 || hs.max <= 0 {
		return
	}
	size := k.bytes + k.msgs.size()
	if size > hs.max {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	k.counts = k.counts[:min(len(k.counts), len(k.events))]
	key := histKey{agent, thread}
	if old := hs.kept[key]; old != nil {
		hs.size -= old.size
	}
	hs.kept[key] = &histEntry{kept: k, size: size, used: now}
	hs.size += size
	for hs.size > hs.max {
		var oldest histKey
		var at time.Time
		for hk, e := range hs.kept {
			if hk != key && (at.IsZero() || e.used.Before(at)) {
				oldest, at = hk, e.used
			}
		}
		if !k.again && now.Sub(at) < keptLately {
			oldest = key
		}
		hs.size -= hs.kept[oldest].size
		delete(hs.kept, oldest)
		if oldest == key {
			return
		}
	}
}

// expire lets go every entry last used before t.
func (hs *history) expire(t time.Time) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for k, e := range hs.kept {
		if e.used.Before(t) {
			hs.size -= e.size
			delete(hs.kept, k)
		}
	}
}

// forget lets go every entry.
func (hs *history) forget() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.kept = map[histKey]*histEntry{}
	hs.size = 0
}

// len is how many conversations are kept.
func (hs *history) len() int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.kept)
}

// same says whether a and b are the same event, as the store keeps it.
// Their JSON is compared: store.MarshalLine's line is json.Marshal's with
// a newline (its held strings filled in as json.Marshal writes them), so
// json.Marshal's alone, made without holding or filling, says the same.
func same(a, b store.Event) bool {
	if a.Seq != b.Seq {
		return false
	}
	x, err := json.Marshal(a)
	if err != nil {
		return false
	}
	y, err := json.Marshal(b)
	return err == nil && bytes.Equal(x, y)
}

// eventSize estimates the bytes an event holds in memory.
func eventSize(e store.Event) int {
	n := 256 + len(e.Text) + len(e.Header) + len(e.From) + len(e.FromName) + len(e.Model) + len(e.ResponseID)
	for _, p := range e.Parts {
		n += 64 + len(p.Data) + len(p.Text) + len(p.Name) + len(p.MimeType)
	}
	for _, th := range e.Thinking {
		n += 64 + len(th.Text) + len(th.Signature) + len(th.Redacted)
	}
	for _, c := range e.Calls {
		n += 64 + len(c.ID) + len(c.Name) + len(c.Input)
	}
	return n
}
