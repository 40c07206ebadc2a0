package log

import (
	"sync"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// conv is what the driver keeps of one conversation between its calls:
// its folder's paths, made once rather than at each call, and its log as
// the driver's last call left it or read it (seen).
type conv struct {
	dir, events, lease string

	mu   sync.Mutex
	seen seen
}

// seen is a conversation's log as a call found or left it, under the
// conversation's lock: the file's stamp, and the number of its last
// event. A call that finds the file with the same stamp, its birth known,
// finds the lines it was left with: every writer of a log (each driver's
// Append, in any process) only adds complete lines at its end, or cuts
// off a final line a writer didn't finish, so one file of one length
// holds the same lines. Its tail needn't be read again to know its last
// number or that nothing came after it. A file replaced, or removed and
// made again, is another file (its identity, or its birth); one written
// to is another length. The zero seen matches no file.
type seen struct {
	stamp fsx.Stamp
	last  int64
	// event is the last event as the call that wrote it had it (at most
	// maxSeenEvent bytes a line), nil when a read found it or it was
	// longer: a read from its number finds it without reading or parsing
	// its line (every driver's Read gives an event as it was appended:
	// store/storetest), as a turn's read from the last event it kept
	// does. It shares its parts with the one appended, which no one
	// changes once it is written.
	event *store.Event
}

// maxSeenEvent is the longest line whose event seen keeps: a turn's
// answer mostly fits, and a driver keeping a thousand conversations holds
// at most 8 MiB of them.
const maxSeenEvent = 8 << 10

// holds says whether the file stamped st is the one s saw, as it was.
func (s seen) holds(st fsx.Stamp) bool { return st.Born != 0 && s.stamp == st }

// saw is what the conversation's log is now known to hold: s, or nothing
// when the call found it otherwise than as it left it.
func (c *conv) saw(s seen) {
	c.mu.Lock()
	c.seen = s
	c.mu.Unlock()
}

// lastSeen is the conversation's log as last seen.
func (c *conv) lastSeen() seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// maxConvs bounds the conversations a driver keeps between calls; past
// it one is let go for each new one.
const maxConvs = 1024

// convs are the conversations a driver keeps between calls, by thread.
type convs struct {
	mu sync.Mutex
	m  map[string]*conv
}

// conv is the thread's conversation as d keeps it, its paths made at its
// first call.
func (d *Driver) conv(thread string) (*conv, error) {
	d.convs.mu.Lock()
	c := d.convs.m[thread]
	d.convs.mu.Unlock()
	if c != nil {
		return c, nil
	}
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return nil, err
	}
	dir := fsx.Join(d.chats, name)
	c = &conv{dir: dir, events: fsx.Join(dir, EventsFile), lease: fsx.Join(dir, LeaseFile)}
	d.convs.mu.Lock()
	defer d.convs.mu.Unlock()
	if had := d.convs.m[thread]; had != nil {
		return had, nil
	}
	if d.convs.m == nil {
		d.convs.m = map[string]*conv{}
	}
	if len(d.convs.m) >= maxConvs {
		for k := range d.convs.m {
			delete(d.convs.m, k)
			break
		}
	}
	d.convs.m[thread] = c
	return c, nil
}
