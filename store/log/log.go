// Package log keeps an agent's conversations as logs: each conversation a
// folder of its own, its events the lines of events.jsonl, one JSON event
// a line (store.MarshalLine). A lock on the file serializes writers across
// processes; an event is written only if its number is the next, an
// unfinished final line left by a writer that stopped is cut off before
// the next append, and an append is on the disk before it returns. The
// latest events are read backwards from the file's end, so a turn's read
// costs the same however long the conversation: each call opens the file
// once (fsx.File) and reads where its complete lines end and the last of
// them in one read, or none when the file is as the driver's last call
// left it (seen.go). The lease that says a turn runs is lease.json beside
// the events, changed under the same lock.
package log

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lnk-dev/link/internal/fsx"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/internal/leasefile"
)

// File names of a conversation's folder: its events, and its lease.
const (
	EventsFile = "events.jsonl"
	LeaseFile  = leasefile.File
)

// Name is the log's name, as config.json's storage.conversations says it.
const Name = "log"

// The log registers its file in a conversation's folder: a folder whose
// events.jsonl holds an event is the log's (driver.Of). It is the spec's
// way when the spec names none, and runs in the program's process.
func init() {
	driver.Register(driver.Driver{Name: Name, Open: open, Events: []string{EventsFile}, Sign: EventsFile, Default: true})
}

// open is Open as the registry opens a driver.
func open(chats string) (store.Conversations, error) {
	return Open(chats), nil
}

// Driver keeps the conversations of one agent under its conversations
// folder.
type Driver struct {
	chats string
	// Now is the clock leases are taken and expire by.
	Now func() time.Time

	ahead *ahead // the folder made ahead (MakeAhead), nil for none
	convs convs  // the conversations kept between calls (seen.go)
}

var (
	_ store.Conversations = (*Driver)(nil)
	_ store.LatestReader  = (*Driver)(nil)
	_ store.Closer        = (*Driver)(nil)
)

// Open keeps conversations in chats, the agent's conversations folder
// (store.Paths.Chats): each thread's in the folder contract.ThreadFolder
// names, made at its first append.
func Open(chats string) *Driver {
	return &Driver{chats: filepath.Clean(chats), Now: time.Now}
}

// Folder is the folder of thread's conversation.
func (d *Driver) Folder(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return fsx.Join(d.chats, name), nil
}

// writeAt writes the size bytes of line at off in f: at once when small,
// else a buffer at a time, so a line of many megabytes is never held
// whole (store.LineBody).
func writeAt(f *fsx.File, off, size int64, line io.Reader) error {
	buf := make([]byte, min(size, writeBuffer))
	for size > 0 {
		n, err := io.ReadFull(line, buf[:min(size, int64(len(buf)))])
		if err != nil {
			return fmt.Errorf("event's line: %w", err)
		}
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
		off, size = off+int64(n), size-int64(n)
	}
	return nil
}

// writeBuffer is how much of a large line writeAt writes at a time.
const writeBuffer = 1 << 20

// Append writes e as the thread's event e.Seq if that is the next number,
// and returns once it's on the disk.
func (d *Driver) Append(ctx context.Context, thread string, e store.Event) error {
	if err := d.append(ctx, thread, e); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return nil
}

func (d *Driver) append(ctx context.Context, thread string, e store.Event) error {
	if e.Seq < 1 {
		return fmt.Errorf("%w: numbers start at 1", store.ErrSeqTaken)
	}
	size, line, err := store.LineBody(store.InUTC(e))
	if err != nil {
		return err
	}
	if size > store.MaxLine {
		return fmt.Errorf("event of %d bytes is over %d", size, store.MaxLine)
	}
	c, err := d.conv(thread)
	if err != nil {
		return err
	}
	f, err := d.openLocked(ctx, c, os.O_RDWR|os.O_CREATE, exclusive)
	if err != nil {
		return err
	}
	defer f.Close()
	st, end, last, err := lastOf(f, c)
	if err != nil {
		return err
	}
	if e.Seq != last+1 {
		return fmt.Errorf("%w: the next is %d", store.ErrSeqTaken, last+1)
	}
	if err := writeAt(f, end, size, line()); err != nil {
		// Leave no part of it for a reader; the next writer would cut it
		// off anyway.
		_ = f.Truncate(end)
		return err
	}
	if e.Seq == 1 {
		// The file, and maybe its folder, are new: their names are made
		// as durable as the event, synced at once so the file system
		// commits them together; a folder made ahead by this driver had
		// its own names synced as it was made.
		syncs := []func() error{d.ahead.namesSynced(c.dir, f), func() error { return syncDir(d.chats) }}
		if syncs[0] == nil {
			syncs[0] = func() error { return syncDir(c.dir) }
		}
		err = syncNew(f, syncs...)
	} else if err = datasync(f); err != nil {
		err = fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if err != nil {
		return err
	}
	st.Size = end + size
	s := seen{stamp: st, last: e.Seq}
	if size <= maxSeenEvent {
		ev := store.InUTC(e)
		s.event = &ev
	}
	c.saw(s)
	return nil
}

// lastOf is where f's complete lines end and the number of its last
// event, f open under the exclusive lock, with its stamp: as c last saw
// it when f is the file it saw, as it was, its tail not read; else read
// from its tail, an unfinished final line cut off first (a writer that
// stopped mid-line: its event was never acknowledged).
func lastOf(f *fsx.File, c *conv) (st fsx.Stamp, end, last int64, err error) {
	if st, err = f.Stamp(); err != nil {
		return st, 0, 0, err
	}
	if s := c.lastSeen(); s.holds(st) {
		return st, st.Size, s.last, nil
	}
	t, err := readTail(f, st.Size, smallBlock)
	if err != nil {
		return st, 0, 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	defer t.release()
	if t.end < st.Size {
		if err := f.Truncate(t.end); err != nil {
			return st, 0, 0, err
		}
	}
	last, err = lastSeq(f, t)
	return st, t.end, last, err
}

// syncNew syncs a conversation's first event, f's, and the names of f in
// its folder and of the folder in the conversations folder (syncs), all
// at once, and returns once all are on the disk: none waits for another,
// and a journaling file system commits them in one transaction where it
// can.
func syncNew(f *fsx.File, syncs ...func() error) error {
	errs := make(chan error, len(syncs))
	for _, sync := range syncs {
		go func() { errs <- sync() }()
	}
	err := datasync(f)
	if err != nil {
		err = fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	for range syncs {
		err = errors.Join(err, <-errs)
	}
	return err
}

// syncDir makes a folder's names durable (fsx.SyncDir; a test's to
// watch).
var syncDir = fsx.SyncDir

// openFile opens a conversation's file (fsx.OpenFile; a test's to count).
var openFile = fsx.OpenFile

// named is a file read at offsets that names itself in errors.
type named interface {
	io.ReaderAt
	Name() string
}

// lastSeq is the number of the last event of f's complete lines, before
// t's end (t read with smallBlock), 0 for none. A last line longer than a
// block (a large prompt's) is not read whole: its number is read from its
// start, as MarshalLine writes it; any other line's number too, the line
// checked to be one JSON value, else it is parsed (and refused when it is
// no event's).
func lastSeq(f named, t tail) (int64, error) {
	if t.end == 0 {
		return 0, nil
	}
	if !t.holdsLastLine() {
		if seq, ok, err := longLineSeq(f, t.end); ok || err != nil {
			return seq, err
		}
	}
	seq := int64(0)
	err := backwardsFrom(f, t, smallBlock, func(line []byte, off int64) (bool, error) {
		if s, ok := seqPrefix(line); ok && json.Valid(line) {
			seq = s
			return false, nil
		}
		e, err := store.ParseLine(line)
		if err != nil {
			return false, fmt.Errorf("%s at byte %d: %w", f.Name(), off, err)
		}
		seq = e.Seq
		return false, nil
	})
	return seq, err
}

// The locks of a conversation, taken on its events.jsonl by every reader
// and writer, in any process, through its own open file: a reader's,
// which many hold at once, and a writer's, which one holds, and no reader.
const (
	shared    = false
	exclusive = true
)

// openLocked opens c's events.jsonl with flag and takes its lock,
// exclusive or shared; a flag with O_CREATE makes the folder first
// (makeFolder). The lock goes with the file's closing.
func (d *Driver) openLocked(ctx context.Context, c *conv, flag int, exclusive bool) (*fsx.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := openFile(c.events, flag, 0o600)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		// The folder first, at a conversation's first lease or event.
		if err := d.makeFolder(c.dir); err != nil {
			return nil, err
		}
		f, err = openFile(c.events, flag, 0o600)
	}
	if err != nil {
		return nil, err
	}
	if err := fsx.Lock(ctx, f, exclusive); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// opened opens c's events.jsonl for reading under the shared lock; a
// conversation not begun is nil. The caller closes it.
func (d *Driver) opened(ctx context.Context, c *conv) (*fsx.File, error) {
	f, err := d.openLocked(ctx, c, os.O_RDONLY, shared)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// tailOf reads the last first bytes of c's file f, open under its lock
// (readTail), with its stamp, unless f is as c last saw it and what a
// read from from wants is known from that: then done, with known the
// events from from, none when its last event is before from, the last
// when from is its number and c kept it. The caller releases the tail.
func (c *conv) tailOf(f *fsx.File, first, from int64) (t tail, st fsx.Stamp, known []store.Event, done bool, err error) {
	if st, err = f.Stamp(); err != nil {
		return tail{}, st, nil, false, err
	}
	if s := c.lastSeen(); s.holds(st) {
		switch {
		case s.last < from:
			return tail{}, st, nil, true, nil
		case s.last == from && s.event != nil:
			return tail{}, st, []store.Event{*s.event}, true, nil
		}
	}
	if t, err = readTail(f, st.Size, first); err != nil {
		return tail{}, st, nil, false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return t, st, nil, false, nil
}

// sawRead notes what a read under the lock of c's file stamped st found:
// es, its last events through the end of its complete lines t.end. The
// last event kept of the file as it was is kept still.
func (c *conv) sawRead(st fsx.Stamp, t tail, es []store.Event) {
	if len(es) == 0 || t.end != st.Size {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last := es[len(es)-1].Seq
	if c.seen.stamp == st && c.seen.last == last {
		return
	}
	c.seen = seen{stamp: st, last: last}
}

// Read returns the thread's events numbered from and after. From the
// first, it reads the file through; from a later number, it reads
// backwards from the end only as far as that number.
func (d *Driver) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	es, err := d.read(ctx, thread, from)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return es, nil
}

func (d *Driver) read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	c, err := d.conv(thread)
	if err != nil {
		return nil, err
	}
	f, err := d.opened(ctx, c)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	return c.readFrom(f, from)
}

// readFrom reads the events numbered from and after of c's file f, open
// under its lock.
func (c *conv) readFrom(f *fsx.File, from int64) ([]store.Event, error) {
	t, st, known, done, err := c.tailOf(f, smallBlock, max(from, 1))
	if done || err != nil {
		return known, err
	}
	defer t.release()
	var es []store.Event
	if from <= 1 {
		es, err = scan(io.NewSectionReader(f, 0, t.end), f.Name(), from)
	} else {
		es, err = lastLinesFrom(f, t, smallBlock, f.Name(), from, func(e store.Event) bool { return e.Seq <= from })
		if len(es) > 0 && es[0].Seq < from {
			es = es[1:] // the line before from, read to see there's nothing after it
		}
	}
	if err != nil {
		return nil, err
	}
	c.sawRead(st, t, es)
	return es, nil
}

// Latest returns the thread's last n events, reading backwards from the
// end of its file only the lines it returns.
func (d *Driver) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	es, err := d.latest(ctx, thread, n)
	if err != nil {
		return nil, fmt.Errorf("latest %s: %w", thread, err)
	}
	return es, nil
}

func (d *Driver) latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c, err := d.conv(thread)
	if err != nil || n <= 0 {
		return nil, err
	}
	f, err := d.opened(ctx, c)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	t, st, _, _, err := c.tailOf(f, block, 0)
	if err != nil {
		return nil, err
	}
	defer t.release()
	count := 0
	es, err := lastLines(f, t, block, f.Name(), func(store.Event) bool { count++; return count >= n })
	if err != nil {
		return nil, err
	}
	c.sawRead(st, t, es)
	return es, nil
}
