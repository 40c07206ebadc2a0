package log_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/driver"
	"github.com/lnk-dev/link/store/log"
	"github.com/lnk-dev/link/store/storetest"
)

// lines is the events.jsonl of es.
func lines(t testing.TB, es []store.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, e := range es {
		line, err := store.MarshalLine(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	return b.Bytes()
}

// withFile opens a driver whose thread default has data as its events.jsonl.
func withFile(t testing.TB, data []byte) (*log.Driver, string) {
	t.Helper()
	d := log.Open(t.TempDir())
	dir, err := d.Folder("default")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, log.EventsFile)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return d, path
}

func TestPartialFinalLine(t *testing.T) {
	ctx := context.Background()
	for _, tail := range []string{
		`{"seq":4,"time":"2026-11-30T09:`,
		`{"seq":4,"kind":"message","text":"` + strings.Repeat("long ", 60_000), // longer than a read's block
		`{`,
	} {
		t.Run(fmt.Sprintf("%d bytes", len(tail)), func(t *testing.T) {
			want := storetest.Events(3, "a")
			d, path := withFile(t, append(lines(t, want), tail...))
			got, err := d.Read(ctx, "default", 1)
			if err != nil {
				t.Fatalf("read with a partial final line: %v", err)
			}
			storetest.Same(t, "read", got, want)
			got, err = d.Read(ctx, "default", 2)
			if err != nil {
				t.Fatalf("read from 2: %v", err)
			}
			storetest.Same(t, "read from 2", got, want[1:])
			got, err = d.Latest(ctx, "default", 10)
			if err != nil {
				t.Fatalf("latest with a partial final line: %v", err)
			}
			storetest.Same(t, "latest", got, want)
			// Reading repairs nothing: the file is as it was.
			if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte(tail)) {
				t.Fatal("a read changed the file")
			}
			// The next append cuts it off and takes its number.
			want = append(want, storetest.Event(4, "b"))
			if err := d.Append(ctx, "default", want[3]); err != nil {
				t.Fatalf("append after a partial line: %v", err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, lines(t, want)) {
				t.Fatalf("file after repair:\n%s\nwant\n%s", b, lines(t, want))
			}
		})
	}
}

func TestOnlyPartialLine(t *testing.T) {
	ctx := context.Background()
	d, path := withFile(t, []byte(`{"seq":1,"ki`))
	got, err := d.Read(ctx, "default", 1)
	if err != nil || len(got) != 0 {
		t.Fatalf("read of a lone partial line: %d events, %v", len(got), err)
	}
	if err := d.Append(ctx, "default", storetest.Event(2, "a")); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("append #2 over a lone partial line: %v, want ErrSeqTaken", err)
	}
	if err := d.Append(ctx, "default", storetest.Event(1, "a")); err != nil {
		t.Fatalf("append #1 over a lone partial line: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, lines(t, storetest.Events(1, "a"))) {
		t.Fatalf("file after repair: %q", b)
	}
}

func TestCorrupt(t *testing.T) {
	ctx := context.Background()
	es := storetest.Events(5, "a")
	line := func(i int) []byte { return lines(t, es[i-1:i]) }
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	bad := []byte("not an event\n")
	tests := []struct {
		name   string
		data   []byte
		line   int   // of the corrupt line, as a read from the first names it
		offset int64 // of the corrupt line, as a read backwards names it
		latest int   // how many latest events read without reaching it
	}{
		{"middle", join(line(1), line(2), bad, line(4), line(5)), 3, int64(len(join(line(1), line(2)))), 2},
		{"first", join(bad, line(2), line(3)), 1, 0, 2},
		{"empty line", join(line(1), []byte("\n"), line(3)), 2, int64(len(line(1))), 1},
		{"out of order", join(line(1), line(2), line(4), line(5)), 3, int64(len(join(line(1)))), 2},
		{"repeated", join(line(1), line(2), line(2), line(3)), 3, int64(len(line(1))), 2},
		{"not from 1", join(line(2), line(3)), 1, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, path := withFile(t, tt.data)
			_, err := d.Read(ctx, "default", 1)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("read: %v, want ErrCorrupt", err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("line %d ", tt.line)) {
				t.Fatalf("read: %q names not %s line %d", msg, path, tt.line)
			}
			_, err = d.Latest(ctx, "default", 100)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("latest: %v, want ErrCorrupt", err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("byte %d:", tt.offset)) {
				t.Fatalf("latest: %q names not %s byte %d", msg, path, tt.offset)
			}
			// What's after it reads: a turn's window isn't lost to an old line.
			got, err := d.Latest(ctx, "default", tt.latest)
			if err != nil || len(got) != tt.latest {
				t.Fatalf("latest %d after the corrupt line: %d events, %v", tt.latest, len(got), err)
			}
		})
	}
}

// TestCorruptLastLine: an append after a last line that is no event's
// is refused, the file left as it was, whether or not the line starts as
// an event's ({"seq":N,) and so is read by its number alone when whole.
func TestCorruptLastLine(t *testing.T) {
	ctx := context.Background()
	for _, last := range []string{
		`{"seq":3}`,
		`{"seq":3,"kind":"message"`,
		`{"seq":3,"kind":"message"}{"seq":4,"kind":"message"}`,
		`{"seq":3,"kind":"message","text":"a"]`,
	} {
		data := append(lines(t, storetest.Events(2, "a")), last+"\n"...)
		d, path := withFile(t, data)
		err := d.Append(ctx, "default", storetest.Event(3, "a"))
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("append after the last line %s: %v, want ErrCorrupt naming %s", last, err, path)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
			t.Fatal("a refused append changed the file")
		}
	}
}

func TestFolders(t *testing.T) {
	ctx := context.Background()
	chats := t.TempDir()
	d := log.Open(chats)
	if err := d.Append(ctx, "telegram:42", storetest.Event(1, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lease(ctx, "telegram:42", "h1", 1e9); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(chats, "telegram-42")
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", info.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "events.jsonl lease.json" {
		t.Fatalf("folder holds %v, want events.jsonl and lease.json", names)
	}
	if kind, err := driver.Of(dir); err != nil || kind != log.Name {
		t.Fatalf("detect: %q, %v; want %q", kind, err, log.Name)
	}
	// A read of a conversation not begun makes no folder.
	if _, err := d.Read(ctx, "telegram:43", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(chats, "telegram-43")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read made a folder: %v", err)
	}
}
