package compact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/storetest"
)

const thread = "telegram:42"

// conv is a conversation's folder and a driver of it.
type conv struct {
	t     *testing.T
	chats string
	d     *compact.Driver
	small bool // small events, so a frame is a few hundred bytes
}

func newConv(t *testing.T) *conv {
	chats := t.TempDir()
	c := &conv{t: t, chats: chats, d: compact.Open(chats)}
	t.Cleanup(func() { c.d.Close() })
	return c
}

func (c *conv) dir() string { return filepath.Join(c.chats, "telegram-42") }

// file reads one of the conversation's files.
func (c *conv) file(name string) []byte {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir(), name))
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// put writes the conversation's files as given.
func (c *conv) put(zst, tail []byte) {
	c.t.Helper()
	for name, b := range map[string][]byte{"events.zst": zst, "events.jsonl": tail} {
		if err := os.WriteFile(filepath.Join(c.dir(), name), b, 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
}

// add appends events from to to, as c.event makes them.
func (c *conv) add(d *compact.Driver, from, to int64) {
	c.t.Helper()
	for seq := from; seq <= to; seq++ {
		if err := d.Append(context.Background(), thread, c.event(seq)); err != nil {
			c.t.Fatalf("append #%d: %v", seq, err)
		}
	}
}

// event is event seq of the conversation: storetest's, or a small one.
func (c *conv) event(seq int64) store.Event {
	if c.small {
		return store.Event{Seq: seq, Time: time.Unix(1_800_000_000+seq, 0).UTC(), Kind: store.KindMessage, Text: fmt.Sprint("m", seq)}
	}
	return storetest.Event(seq, "a")
}

// check fails unless the conversation reads as events 1 to n, each once.
func (c *conv) check(d *compact.Driver, what string, n int) {
	c.t.Helper()
	got, err := d.Read(context.Background(), thread, 1)
	if err != nil {
		c.t.Fatalf("%s: read: %v", what, err)
	}
	want := make([]store.Event, n)
	for i := range want {
		want[i] = c.event(int64(i + 1))
	}
	storetest.Same(c.t, what, got, want)
}

// foldState is a conversation of 64 events (small ones, or storetest's), its tail full (33 to 64),
// the files as they are before the 65th event's append folds the tail,
// and events.zst as it is after.
func foldState(t *testing.T, small bool) (c *conv, zst, tail, after []byte) {
	c = newConv(t)
	c.small = small
	c.add(c.d, 1, 64)
	zst, tail = c.file("events.zst"), c.file("events.jsonl")
	if n := bytes.Count(tail, []byte{'\n'}); n != compact.FoldEvents {
		t.Fatalf("tail of %d lines before the fold, want %d", n, compact.FoldEvents)
	}
	c.add(c.d, 65, 65)
	after = c.file("events.zst")
	if len(after) <= len(zst) || !bytes.HasPrefix(after, zst) {
		t.Fatalf("events.zst of %d bytes after the fold, %d before: not appended to", len(after), len(zst))
	}
	if got := c.file("events.jsonl"); bytes.Count(got, []byte{'\n'}) != 1 {
		t.Fatalf("tail after the fold holds %d lines, want 1", bytes.Count(got, []byte{'\n'}))
	}
	c.check(c.d, "after the fold", 65)
	return c, zst, tail, after
}

// TestCutFrame cuts the frame a fold appends at every byte, as a writer
// killed mid-append leaves it: every acknowledged event still reads once,
// and the next append cuts the rest off and folds the tail again.
func TestCutFrame(t *testing.T) {
	// Small events: each cut costs an append's four fsyncs, so a frame
	// of a few hundred bytes keeps the test short.
	c, zst, tail, after := foldState(t, true)
	frame := after[len(zst):]
	t.Logf("cutting a frame of %d bytes", len(frame))
	for k := range len(frame) {
		c.put(append(bytes.Clone(zst), frame[:k]...), tail)
		// A new driver knows nothing of the files; the first one knew
		// them as they were before the cut.
		d := c.d
		if k%16 == 0 {
			d = compact.Open(c.chats)
		}
		what := fmt.Sprintf("cut %d bytes into the frame", k)
		c.check(d, what, 64)
		c.add(d, 65, 65)
		if got := c.file("events.zst"); !bytes.Equal(got, after) {
			t.Fatalf("%s: events.zst after the next append is %d bytes, want the %d of one fold", what, len(got), len(after))
		}
		c.check(d, what+", then appended to", 65)
		if d != c.d {
			d.Close()
		}
	}
	// A writer stopped near the end of a frame longer than this driver's
	// (another level, another version): the next fold cuts all of it off.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i * i * 7919 >> 3)
	}
	long := enc.EncodeAll(append(bytes.Clone(tail), noise...), nil)
	if len(long) <= len(frame) {
		t.Fatalf("a frame at the fastest level is %d bytes, not longer than the %d of this one's", len(long), len(frame))
	}
	c.put(append(bytes.Clone(zst), long[:len(long)-1]...), tail)
	c.check(c.d, "a longer frame cut short", 64)
	c.add(c.d, 65, 65)
	if got := c.file("events.zst"); !bytes.Equal(got, after) {
		t.Fatalf("events.zst after a longer frame cut short and the next append is %d bytes, want %d", len(got), len(after))
	}
	c.check(c.d, "a longer frame cut short, then appended to", 65)
}

// TestFoldStopped stops a fold between its frame on the disk and the tail
// emptied: each event is read once, and the next fold frames none again.
func TestFoldStopped(t *testing.T) {
	c, zst, tail, after := foldState(t, false)
	for _, fresh := range []bool{false, true} {
		c.put(after, tail)
		d := c.d
		if fresh {
			d = compact.Open(c.chats)
			defer d.Close()
		}
		what := fmt.Sprintf("fold stopped (new driver: %v)", fresh)
		c.check(d, what, 64)
		latest, err := d.Latest(context.Background(), thread, 3)
		if err != nil {
			t.Fatal(err)
		}
		storetest.Same(t, what+": latest 3", latest, storetest.Events(64, "a")[61:])
		c.add(d, 65, 65)
		if got := c.file("events.zst"); !bytes.Equal(got, after) {
			t.Fatalf("%s: events.zst is %d bytes after the next fold, want %d: a frame written twice", what, len(got), len(after))
		}
		c.check(d, what+", then appended to", 65)
	}
	// A tail of events the frames hold, and one more after them.
	c.put(zst, tail)
	c.add(c.d, 65, 66)
	c.check(c.d, "appended after", 66)
	_ = after
}

// TestUnfinishedLine leaves part of a line at the tail's end, as a writer
// killed mid-write does: it isn't read, and the next append cuts it off.
func TestUnfinishedLine(t *testing.T) {
	c := newConv(t)
	c.add(c.d, 1, 5)
	line, err := store.MarshalLine(storetest.Event(6, "a"))
	if err != nil {
		t.Fatal(err)
	}
	tail := c.file("events.jsonl")
	for _, part := range [][]byte{line[:1], line[:len(line)/2], line[:len(line)-1]} {
		c.put(c.file("events.zst"), append(bytes.Clone(tail), part...))
		c.check(c.d, "with part of a line", 5)
		if err := c.d.Append(context.Background(), thread, storetest.Event(7, "a")); !errors.Is(err, store.ErrSeqTaken) {
			t.Fatalf("append #7 after part of #6: %v, want ErrSeqTaken", err)
		}
	}
	c.add(c.d, 6, 6)
	c.check(c.d, "appended after part of a line", 6)
	if got, want := c.file("events.jsonl"), append(tail, line...); !bytes.Equal(got, want) {
		t.Fatalf("tail is\n%s\nwant\n%s", got, want)
	}
}

// TestCorrupt damages a conversation of four frames and a tail in the
// middle: every read is an error wrapping ErrCorrupt that names the file
// and the place, never a skip.
func TestCorrupt(t *testing.T) {
	c := newConv(t)
	var ends []int // where events.zst ends after each fold
	for seq := int64(1); seq <= 4*compact.FoldEvents+10; seq++ {
		c.add(c.d, seq, seq)
		if size := len(c.file("events.zst")); len(ends) == 0 || ends[len(ends)-1] != size {
			ends = append(ends, size)
		}
	}
	if len(ends) != 5 {
		t.Fatalf("events.zst grew %d times, want the first frame and 4 folds", len(ends))
	}
	zst, tail := c.file("events.zst"), c.file("events.jsonl")
	second, third := ends[1], ends[2] // the second frame of events is [second, third)
	flip := func(b []byte, at int, x byte) []byte {
		b = bytes.Clone(b)
		b[at] ^= x
		return b
	}
	for _, tc := range []struct {
		name      string
		zst, tail []byte
		want      string
	}{
		{"content", flip(zst, (second+third)/2, 0x55), tail, fmt.Sprintf("events.zst frame at byte %d", second)},
		{"checksum", flip(zst, third-1, 0x01), tail, fmt.Sprintf("events.zst frame at byte %d", second)},
		{"magic", flip(zst, second, 0xff), tail, fmt.Sprintf("events.zst frame at byte %d", second)},
		// The first block's header says "reserved type" (its bits 1-2 set).
		{"block type", flip(zst, second+6, 0x06), tail, "events.zst frame at byte"},
		{"tail line", zst, bytes.Replace(tail, []byte(`"seq":134`), []byte(`"seq":"x"`), 1), "events.jsonl line 6"},
		{"tail gap", zst, bytes.Replace(tail, []byte(`"seq":134`), []byte(`"seq":135`), 1), "events.jsonl line 6"},
		{"tail after a gap", zst, tail[bytes.IndexByte(tail, '\n')+1:], "events.jsonl line 1"},
		{"last frame cut, tail emptied", zst[:len(zst)-3], nil, "events.zst frame at byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.put(tc.zst, tc.tail)
			d := compact.Open(c.chats)
			defer d.Close()
			_, err := d.Read(context.Background(), thread, 1)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("read: %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), filepath.Join(c.dir(), "")) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read: %q names not the folder and %q", err, tc.want)
			}
			if _, err := d.Latest(context.Background(), thread, 1); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("latest: %v, want ErrCorrupt", err)
			}
		})
	}
	// The damage undone, it reads whole again.
	c.put(zst, tail)
	c.check(compact.Open(c.chats), "undamaged", 4*compact.FoldEvents+10)
}

// TestFoldBytes folds a tail of a megabyte though it holds few events.
func TestFoldBytes(t *testing.T) {
	c := newConv(t)
	big := storetest.Event(1, "a")
	big.Text = strings.Repeat("a megabyte of one message. ", compact.FoldBytes/27+1)
	if err := c.d.Append(context.Background(), thread, big); err != nil {
		t.Fatal(err)
	}
	zst := len(c.file("events.zst"))
	c.add(c.d, 2, 2)
	if got := len(c.file("events.zst")); got <= zst {
		t.Fatalf("events.zst of %d bytes after a megabyte of tail, %d before: not folded", got, zst)
	}
	if n := bytes.Count(c.file("events.jsonl"), []byte{'\n'}); n != 1 {
		t.Fatalf("tail holds %d lines after the fold, want 1", n)
	}
	got, err := c.d.Read(context.Background(), thread, 1)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "after a megabyte", got, []store.Event{big, storetest.Event(2, "a")})
}

// TestReadersDuringFolds reads while another driver appends and folds:
// a reader sees each event once, in order, never a fold half done.
func TestReadersDuringFolds(t *testing.T) {
	c := newConv(t)
	const n = 2*compact.FoldEvents + 5
	writer := compact.Open(c.chats)
	defer writer.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			for {
				got, err := c.d.Read(context.Background(), thread, 1)
				if err != nil {
					errs <- err
					return
				}
				for i, e := range got {
					if e.Seq != int64(i+1) {
						errs <- fmt.Errorf("read %d events: event %d is #%d", len(got), i, e.Seq)
						return
					}
				}
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		})
	}
	c.add(writer, 1, n)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c.check(c.d, "after the folds", n)
}

// TestLeaseClock judges leases by the driver's clock.
func TestLeaseClock(t *testing.T) {
	c := newConv(t)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c.d.Now = func() time.Time { return now }
	ctx := context.Background()
	l, err := c.d.Lease(ctx, thread, "h1", time.Minute)
	if err != nil || !l.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("lease: %+v, %v", l, err)
	}
	now = now.Add(59 * time.Second)
	if _, err := c.d.Lease(ctx, thread, "h2", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease for h2 a second before h1's expires: %v, want ErrLeaseHeld", err)
	}
	now = now.Add(time.Second)
	if l, err := c.d.Lease(ctx, thread, "h2", time.Minute); err != nil || l.Holder != "h2" {
		t.Fatalf("lease for h2 as h1's expires: %+v, %v", l, err)
	}
	// The lease is in the folder: another driver (another process) sees it.
	other := compact.Open(c.chats)
	defer other.Close()
	other.Now = c.d.Now
	if _, err := other.Lease(ctx, thread, "h1", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("lease for h1 by another driver: %v, want ErrLeaseHeld", err)
	}
	// A lease begins the conversation, so its folder says it's compact.
	if kind, err := driver.Of(c.dir()); err != nil || kind != compact.Name {
		t.Fatalf("detect after a lease: %q, %v", kind, err)
	}
}
