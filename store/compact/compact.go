// Package compact keeps each conversation compact: its events as lines of
// JSON (store.MarshalLine) in zstd frames appended to events.zst, so a
// write never rewrites what's there, and the events since the last frame
// as lines of a tail, events.jsonl. Every FoldEvents of them (or
// FoldBytes) are folded into the next frame, compressed hard, since a
// frame is written once per many events.
//
// events.zst starts with a skippable frame naming the thread (Thread), so
// a folder says whose it is though its name doesn't say it whole. The
// tail's lock is the conversation's: writers hold it exclusive, readers
// shared. A frame cut short by a writer that stopped is not read, and the
// next writer cuts it off: its events are still in the tail, which is
// emptied only once the frame is on the disk. An event found in both is
// read and framed once.
//
// There is no frame index: a read reads the whole conversation.
package compact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/internal/fsx"
	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
)

// The files of a compact conversation's folder.
const (
	zstName  = "events.zst"
	tailName = "events.jsonl"
)

// Name is compact's name, as config.json's storage.conversations says it.
const Name = "compact"

// Compact registers its files in a conversation's folder: a folder with
// an events.zst is compact's, even an empty one a crash left, and its
// tail, events.jsonl, is compact's too, not a log (driver.Of). It keeps
// no copy for people, and runs in the program's process.
func init() {
	driver.Register(driver.Driver{Name: Name, Open: open, Events: []string{zstName, tailName}, Sign: zstName, EmptySign: true, NoTranscript: true})
}

// open is Open as the registry opens a driver.
func open(chats string) (store.Conversations, error) {
	return Open(chats), nil
}

// When the tail is folded into a frame: once it holds FoldEvents events,
// or FoldBytes bytes, the next append folds it first.
const (
	FoldEvents = 32
	FoldBytes  = 1 << 20
)

// Level is the zstd level of frames: klauspost/compress's hardest, about
// zstd's 11 (docs/decisions/007-compact-zstd-level.md).
const Level = zstd.SpeedBestCompression

const (
	// maxFrame bounds what one frame decodes to: a fold takes a tail under
	// FoldBytes and one event after it.
	maxFrame = 2 * store.MaxLine
	// maxTail bounds the tail: under FoldBytes, an event after it, and a
	// final line a writer didn't finish.
	maxTail = FoldBytes + 2*(store.MaxLine+1)
)

// Driver keeps the compact conversations of one agent, each in its
// thread's folder of the agent's conversations folder.
type Driver struct {
	// Now is the clock leases are given and judged by; time.Now if nil.
	Now func() time.Time

	chats string

	// encoders holds encoders between folds. One at Level holds some
	// 35 MB of tables, and folds are rare, so the driver keeps none for
	// long: the pool lets them go at a garbage collection.
	encoders sync.Pool

	mu     sync.Mutex
	closed bool
	dec    *zstd.Decoder
	known  map[string]zstState // by folder: what's known of its events.zst
}

var (
	_ store.Conversations = (*Driver)(nil)
	_ store.LatestReader  = (*Driver)(nil)
	_ store.Closer        = (*Driver)(nil)
)

// Open gives the driver of the conversations in chats, the agent's
// conversations folder. It opens nothing until a conversation is used.
func Open(chats string) *Driver {
	return &Driver{chats: chats, known: map[string]zstState{}}
}

// Close lets the driver's decoder go.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.dec != nil {
		d.dec.Close()
		d.dec = nil
	}
	return nil
}

var errClosed = errors.New("compact driver closed")

// encoderOptions are the options of the driver's encoders at level: one
// at a time, a window of FoldBytes (a whole fold's, but for an event past
// it), and memory allocated as needed. With those, an encoder at Level
// allocates some 35 MB where it would 50, and a fold with a new one takes
// a few milliseconds where it took a hundred or more; frames of folds of
// FoldBytes or less are the same bytes.
func encoderOptions(level zstd.EncoderLevel) []zstd.EOption {
	return []zstd.EOption{
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(FoldBytes),
		zstd.WithLowerEncoderMem(true),
	}
}

// encode compresses content as one frame at Level, with its checksum.
func (d *Driver) encode(content []byte) ([]byte, error) {
	enc, ok := d.encoders.Get().(*zstd.Encoder)
	if !ok {
		// Used only by EncodeAll, an encoder starts no goroutine and
		// needs no Close: the pool may drop it.
		var err error
		enc, err = zstd.NewWriter(nil, encoderOptions(Level)...)
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	f := enc.EncodeAll(content, make([]byte, 0, len(content)/2))
	d.encoders.Put(enc)
	return f, nil
}

// decoder is the driver's decoder of frames, made at first use.
func (d *Driver) decoder() (*zstd.Decoder, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errClosed
	}
	if d.dec == nil {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxFrame), zstd.WithDecoderMaxWindow(maxFrame))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		d.dec = dec
	}
	return d.dec, nil
}

func (d *Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// dir is thread's folder; a thread id the contract refuses has none.
func (d *Driver) dir(thread string) (string, error) {
	name, err := contract.ThreadFolder(thread)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.chats, name), nil
}

// Read returns thread's events numbered from and after. It reads the
// whole conversation: every frame is decompressed and its checksum and
// numbers checked, and the events from from on parsed.
func (d *Driver) Read(ctx context.Context, thread string, from int64) ([]store.Event, error) {
	c, err := d.readAll(ctx, thread)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	es, err := c.events(min(max(from, 1)-1, c.len()))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", thread, err)
	}
	return es, nil
}

// Latest returns thread's last n events. It reads the whole conversation
// as Read does, and parses the n events it returns.
func (d *Driver) Latest(ctx context.Context, thread string, n int) ([]store.Event, error) {
	c, err := d.readAll(ctx, thread)
	if err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	es, err := c.events(c.len() - min(max(int64(n), 0), c.len()))
	if err != nil {
		return nil, fmt.Errorf("latest %d of %s: %w", n, thread, err)
	}
	return es, nil
}

// conversation is a conversation as a reader finds it: the frames' lines,
// then the tail's events the frames don't hold.
type conversation struct {
	dir  string
	fr   framed
	tail []tailLine
}

func (c *conversation) len() int64 { return int64(len(c.fr.lines) + len(c.tail)) }

// events parses the events from the i-th (from 0) on.
func (c *conversation) events(i int64) ([]store.Event, error) {
	var es []store.Event
	if i < int64(len(c.fr.lines)) {
		var err error
		if es, err = c.fr.events(int(i)); err != nil {
			return nil, fmt.Errorf("%s: %s %w", c.dir, zstName, err)
		}
	}
	for _, l := range c.tail[max(0, i-int64(len(c.fr.lines))):] {
		es = append(es, l.event)
	}
	return es, nil
}

// readAll reads thread under the shared lock: the whole frames, then the
// tail's events they don't hold. A conversation not begun reads as none.
func (d *Driver) readAll(ctx context.Context, thread string) (*conversation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := d.dir(thread)
	if err != nil {
		return nil, err
	}
	c := &conversation{dir: dir}
	var tail []byte
	tf, err := fsx.Open(filepath.Join(dir, tailName), os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No tail: a conversation not begun, or begun this moment.
	case err != nil:
		return nil, err
	default:
		defer tf.Close()
		if err := fsx.Lock(ctx, tf, false); err != nil {
			return nil, err
		}
		if tail, err = readTail(tf); err != nil {
			return nil, fmt.Errorf("%s: %s %w", dir, tailName, err)
		}
	}
	data, err := fsx.ReadFile(filepath.Join(dir, zstName))
	if errors.Is(err, fs.ErrNotExist) && tf == nil {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if c.fr, err = d.readFrames(data); err != nil {
		return nil, fmt.Errorf("%s: %s %w", dir, zstName, err)
	}
	lines, _, err := parseTail(tail)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %w", dir, tailName, err)
	}
	if c.tail, err = merge(c.fr.last(), c.fr.end, c.fr.cut, lines); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

// readTail reads the whole of an open tail.
func readTail(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxTail {
		return nil, fmt.Errorf("%w: %d bytes, over %d", store.ErrCorrupt, fi.Size(), int64(maxTail))
	}
	b := make([]byte, fi.Size())
	if err := readAt(f, b, 0); err != nil {
		return nil, err
	}
	return b, nil
}
