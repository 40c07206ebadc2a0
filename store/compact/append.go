package compact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
)

// Append writes e as event e.Seq of thread if that number is the next;
// ErrSeqTaken otherwise. A full tail is folded into a frame first. The
// tail is on the disk before Append returns.
func (d *Driver) Append(ctx context.Context, thread string, e store.Event) error {
	if err := d.append(ctx, thread, e); err != nil {
		return fmt.Errorf("append %s#%d: %w", thread, e.Seq, err)
	}
	return nil
}

func (d *Driver) append(ctx context.Context, thread string, e store.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := d.dir(thread)
	if err != nil {
		return err
	}
	if e.Seq < 1 {
		return fmt.Errorf("%w: numbers start at 1", store.ErrSeqTaken)
	}
	if e.Kind == "" {
		return errors.New("an event has a kind")
	}
	line, err := store.MarshalLine(e)
	if err != nil {
		return err
	}
	if len(line) > store.MaxLine+1 {
		return fmt.Errorf("event of %d bytes is over %d", len(line), store.MaxLine)
	}
	if e.Seq != 1 {
		// A conversation not begun takes only its first event: refused
		// here, it isn't begun for nothing.
		if _, err := os.Lstat(filepath.Join(dir, zstName)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: the next is 1", store.ErrSeqTaken)
		}
	}
	c, err := d.openWriter(ctx, dir, thread)
	if err != nil {
		return err
	}
	defer c.close()
	st, err := c.load()
	if err != nil {
		return err
	}
	if next := st.next(); e.Seq != next {
		return fmt.Errorf("%w: the next is %d", store.ErrSeqTaken, next)
	}
	if err := c.repair(st); err != nil {
		return err
	}
	if len(st.lines) >= FoldEvents || st.complete >= FoldBytes {
		if err := c.fold(st); err != nil {
			return err
		}
	}
	if _, err := c.tail.Write(line); err != nil {
		// Part of a line is a final line unfinished: the next writer cuts it.
		return fmt.Errorf("write %s: %w", c.tail.Name(), err)
	}
	if err := c.tail.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", c.tail.Name(), err)
	}
	return nil
}

// writer is one conversation opened for writing, its lock held exclusive.
type writer struct {
	d    *Driver
	dir  string
	tail *os.File // appended to
	zst  *os.File
}

// openWriter begins thread's conversation in dir if it isn't yet, and
// opens it for writing, holding its lock.
func (d *Driver) openWriter(ctx context.Context, dir, thread string) (*writer, error) {
	if err := begin(dir, thread); err != nil {
		return nil, fmt.Errorf("begin %s: %w", dir, err)
	}
	tail, err := fsx.Open(filepath.Join(dir, tailName), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := fsx.Lock(ctx, tail, true); err != nil {
		tail.Close()
		return nil, err
	}
	zst, err := fsx.Open(filepath.Join(dir, zstName), os.O_RDWR, 0)
	if err != nil {
		tail.Close()
		return nil, err
	}
	return &writer{d: d, dir: dir, tail: tail, zst: zst}, nil
}

// close closes the files, letting the lock go.
func (c *writer) close() {
	c.zst.Close()
	c.tail.Close()
}

// zstState is what's known of an events.zst: where its whole frames end,
// and the last event they hold. Whole frames are never rewritten, so what
// the driver learned of them holds while the file is the same one, no
// shorter, and its bytes before end are still the ones seen there (mark):
// a file put back in place by hand is walked again.
type zstState struct {
	file os.FileInfo
	end  int64
	last int64
	mark []byte
}

// markSize is how many bytes before a whole frame's end mark holds: a
// frame's last bytes, its checksum among them.
const markSize = 16

// marked says whether f's bytes before st.end are still st.mark.
func (st zstState) marked(f *os.File) bool {
	b := make([]byte, len(st.mark))
	return readAt(f, b, st.end-int64(len(b))) == nil && bytes.Equal(b, st.mark)
}

// setMark reads the bytes before st.end as its mark.
func (st *zstState) setMark(f *os.File) error {
	st.mark = make([]byte, min(markSize, st.end))
	return readAt(f, st.mark, st.end-int64(len(st.mark)))
}

// state is a conversation as a writer finds it.
type state struct {
	zst      zstState
	cut      bool       // a frame cut short follows zst.end
	lines    []tailLine // the tail's complete lines
	kept     []tailLine // those of them the frames don't hold
	complete int64      // where the tail's complete lines end
	size     int64      // the tail's size
}

// next is the number the next event takes: after the tail's last, or with
// none, the frames' last.
func (st *state) next() int64 {
	if len(st.kept) > 0 {
		return st.kept[len(st.kept)-1].event.Seq + 1
	}
	return st.zst.last + 1
}

// load reads the tail and what's new of the frames.
func (c *writer) load() (*state, error) {
	data, err := readTail(c.tail)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %w", c.dir, tailName, err)
	}
	st := &state{size: int64(len(data))}
	var complete int
	if st.lines, complete, err = parseTail(data); err != nil {
		return nil, fmt.Errorf("%s: %s %w", c.dir, tailName, err)
	}
	st.complete = int64(complete)
	if st.zst, st.cut, err = c.frames(); err != nil {
		return nil, fmt.Errorf("%s: %s %w", c.dir, zstName, err)
	}
	if st.kept, err = merge(st.zst.last, st.zst.end, st.cut, st.lines); err != nil {
		return nil, fmt.Errorf("%s: %w", c.dir, err)
	}
	return st, nil
}

// frames walks events.zst from where the driver last knew it, and decodes
// the last new frame for its last event.
func (c *writer) frames() (zstState, bool, error) {
	fi, err := c.zst.Stat()
	if err != nil {
		return zstState{}, false, err
	}
	c.d.mu.Lock()
	st, ok := c.d.known[c.dir]
	c.d.mu.Unlock()
	if !ok || !os.SameFile(st.file, fi) || fi.Size() < st.end || !st.marked(c.zst) {
		st = zstState{}
	}
	st.file = fi
	var last *frame
	end, cut, err := walk(c.zst, st.end, fi.Size(), func(f frame) error {
		if !f.skippable {
			last = &f
		}
		return nil
	})
	if err != nil {
		return zstState{}, false, err
	}
	if last != nil {
		data := make([]byte, last.end-last.off)
		if err := readAt(c.zst, data, last.off); err != nil {
			return zstState{}, false, err
		}
		ls, err := c.d.frameLines(data, last.off, -1)
		if err != nil {
			return zstState{}, false, err
		}
		st.last = ls[len(ls)-1].seq
	}
	st.end = end
	if err := st.setMark(c.zst); err != nil {
		return zstState{}, false, err
	}
	c.remember(st)
	return st, cut, nil
}

// remember keeps what's known of the conversation's events.zst.
func (c *writer) remember(st zstState) {
	c.d.mu.Lock()
	c.d.known[c.dir] = st
	c.d.mu.Unlock()
}

// repair cuts off what a writer that stopped left unfinished: a frame cut
// short, whose events are still in the tail, and a final line of the tail.
func (c *writer) repair(st *state) error {
	if st.cut {
		if err := c.zst.Truncate(st.zst.end); err != nil {
			return fmt.Errorf("cut %s: %w", c.zst.Name(), err)
		}
		if err := c.zst.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", c.zst.Name(), err)
		}
		st.cut = false
	}
	if st.size > st.complete {
		if err := c.tail.Truncate(st.complete); err != nil {
			return fmt.Errorf("cut %s: %w", c.tail.Name(), err)
		}
		st.size = st.complete
	}
	return nil
}

// fold writes the tail's events the frames don't hold as the next frame,
// makes it durable, and only then empties the tail. A fold that stops
// between the two leaves events in both, which are read and framed once.
func (c *writer) fold(st *state) error {
	if len(st.kept) > 0 {
		var content []byte
		for _, l := range st.kept {
			content = append(content, l.bytes...)
		}
		f, err := c.d.encode(content)
		if err != nil {
			return err
		}
		if _, err := c.zst.WriteAt(f, st.zst.end); err != nil {
			// Part of a frame is a frame cut short: the next writer cuts it.
			return fmt.Errorf("write %s: %w", c.zst.Name(), err)
		}
		if err := c.zst.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", c.zst.Name(), err)
		}
		st.zst.end += int64(len(f))
		st.zst.last = st.kept[len(st.kept)-1].event.Seq
		st.zst.mark = f[len(f)-min(markSize, len(f)):]
		c.remember(st.zst)
	}
	if err := c.tail.Truncate(0); err != nil {
		return fmt.Errorf("empty %s: %w", c.tail.Name(), err)
	}
	if err := c.tail.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", c.tail.Name(), err)
	}
	st.lines, st.kept, st.complete, st.size = nil, nil, 0, 0
	return nil
}
