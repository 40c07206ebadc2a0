package log_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// seenRig is a conversation of three events a driver wrote, so it knows
// the file as it left it, and the path of its events.jsonl.
func seenRig(t *testing.T) (*log.Driver, string) {
	t.Helper()
	ctx := context.Background()
	d := log.Open(t.TempDir())
	for _, e := range storetest.Events(3, "a") {
		if err := d.Append(ctx, "default", e); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := d.Folder("default")
	if err != nil {
		t.Fatal(err)
	}
	return d, filepath.Join(dir, log.EventsFile)
}

// sameLength is events 1 and 2, the second's text padded so their lines
// are want bytes long, and those lines: a file as long as the driver left
// it whose last event is another.
func sameLength(t *testing.T, want int) ([]byte, []store.Event) {
	t.Helper()
	es := storetest.Events(2, "b")
	short := len(lines(t, es))
	if short > want {
		t.Fatalf("two events take %d bytes, over %d", short, want)
	}
	es[1].Text += strings.Repeat("x", want-short)
	b := lines(t, es)
	if len(b) != want {
		t.Fatalf("padded to %d bytes, want %d", len(b), want)
	}
	return b, es
}

// A file put in place of the one the driver left (renamed over it), as
// long as it was, is read as the new file: an append of the number after
// the old one's last is refused, the new one's next is taken, a read
// from the old next finds none and one from the new file's last finds it.
func TestSeenReplaced(t *testing.T) {
	d, path := seenRig(t)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, es := sameLength(t, len(old))
	if err := os.WriteFile(path+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	checkSecondFile(t, d, path, b, es)
}

// A file removed and made again, as long as the one the driver left, is
// read as the new file; the old is held open meanwhile, so the new can't
// take its inode's number.
func TestSeenRemovedMadeAgain(t *testing.T) {
	d, path := seenRig(t)
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	info, err := old.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	b, es := sameLength(t, int(info.Size()))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	checkSecondFile(t, d, path, b, es)
}

// checkSecondFile checks that d reads the conversation default as the
// file b, the lines of es (events 1 and 2), now at path, where it last
// left one of events 1 to 3 as long.
func checkSecondFile(t *testing.T, d *log.Driver, path string, b []byte, es []store.Event) {
	t.Helper()
	ctx := context.Background()
	if es, err := d.Read(ctx, "default", 3); err != nil || len(es) != 0 {
		t.Fatalf("read from 3 of the new file: %d events, %v; want none", len(es), err)
	}
	if err := d.Append(ctx, "default", storetest.Event(4, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #4 after the old file's #3, to the new file of 2: %v, want ErrSeqTaken", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, b) {
		t.Fatal("a refused append changed the new file")
	}
	if err := d.Append(ctx, "default", storetest.Event(3, "c")); err != nil {
		t.Fatalf("append #3 to the new file: %v", err)
	}
	got, err := d.Read(ctx, "default", 2)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "read from 2", got, []store.Event{es[1], storetest.Event(3, "c")})
}

// A file removed is a conversation not begun: a read finds none, and an
// append of the number after the one the driver left is refused.
func TestSeenRemoved(t *testing.T) {
	ctx := context.Background()
	d, path := seenRig(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if es, err := d.Read(ctx, "default", 1); err != nil || len(es) != 0 {
		t.Fatalf("read of a removed file: %d events, %v", len(es), err)
	}
	if err := d.Append(ctx, "default", storetest.Event(4, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #4 to a removed file: %v, want ErrSeqTaken", err)
	}
}

// What another writer did since the driver left the file is read: its
// event (by another driver: another process's), and then a final line a
// writer left unfinished, which the next append cuts off.
func TestSeenAnotherWriter(t *testing.T) {
	ctx := context.Background()
	d, path := seenRig(t)
	other := log.Open(filepath.Dir(filepath.Dir(path)))
	if err := other.Append(ctx, "default", storetest.Event(4, "o")); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(ctx, "default", storetest.Event(4, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #4 after another's #4: %v, want ErrSeqTaken", err)
	}
	got, err := d.Read(ctx, "default", 4)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Same(t, "read from 4", got, []store.Event{storetest.Event(4, "o")})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":5,"kind":"mess`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := d.Append(ctx, "default", storetest.Event(5, "a")); err != nil {
		t.Fatalf("append #5 after an unfinished line: %v", err)
	}
	want := append(storetest.Events(3, "a"), storetest.Event(4, "o"), storetest.Event(5, "a"))
	if got, _ := os.ReadFile(path); !bytes.Equal(got, lines(t, want)) {
		t.Fatalf("file:\n%s\nwant\n%s", got, lines(t, want))
	}
}

// A read from the number of the event the driver appended last, which it
// keeps, gives it as a read of its line does, every field (each kind of
// event, storetest.Event), byte for byte as JSON; one longer than the
// driver keeps is read from its line.
func TestSeenLastEvent(t *testing.T) {
	ctx := context.Background()
	chats := t.TempDir()
	d := log.Open(chats)
	es := storetest.Events(12, "a")
	es[11].Text = strings.Repeat("long ", 4<<10)
	for _, e := range es {
		if err := d.Append(ctx, "default", e); err != nil {
			t.Fatal(err)
		}
		got, err := d.Read(ctx, "default", e.Seq)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := log.Open(chats).Read(ctx, "default", e.Seq) // no event kept: read from the line
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(fresh) != 1 {
			t.Fatalf("read from #%d: %d events, and %d read from the line; want 1", e.Seq, len(got), len(fresh))
		}
		a, _ := json.Marshal(got[0])
		b, _ := json.Marshal(fresh[0])
		if !bytes.Equal(a, b) {
			t.Fatalf("#%d kept reads as\n%s\nread from its line as\n%s", e.Seq, a, b)
		}
	}
}
