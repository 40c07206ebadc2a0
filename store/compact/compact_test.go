package compact_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/lnk-dev/link/contract"

	"github.com/lnk-dev/link/store"
	"github.com/lnk-dev/link/store/compact"
	"github.com/lnk-dev/link/store/storetest"
)

// open gives a driver of an empty conversations folder, closed with tb.
func open(tb testing.TB) *compact.Driver {
	d := compact.Open(tb.TempDir())
	tb.Cleanup(func() { d.Close() })
	return d
}

func TestDriver(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Conversations { return open(t) })
}

// TestFirstFrame: events.zst starts with a skippable frame naming the
// thread, which a stock decoder skips: decoded whole, events.zst is the
// framed events' lines.
func TestFirstFrame(t *testing.T) {
	for _, th := range storetest.Threads {
		chats := t.TempDir()
		d := compact.Open(chats)
		defer d.Close()
		want := storetest.Events(compact.FoldEvents+3, th)
		for _, e := range want {
			if err := d.Append(context.Background(), th, e); err != nil {
				t.Fatal(err)
			}
		}
		name, err := contract.ThreadFolder(th)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(chats, name)
		got, err := compact.Thread(dir)
		if err != nil || got != th {
			t.Fatalf("thread of %s: %q, %v; want %q", dir, got, err, th)
		}
		// The first FoldEvents were folded on the next append.
		var lines []byte
		for _, e := range want[:compact.FoldEvents] {
			l, err := store.MarshalLine(e)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l...)
		}
		zst, err := os.ReadFile(filepath.Join(dir, "events.zst"))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := zstd.NewReader(bytes.NewReader(zst))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(dec)
		dec.Close()
		if err != nil || !bytes.Equal(plain, lines) {
			t.Fatalf("%s: klauspost's stream decoder gives %d bytes, %v; want the %d of the framed lines", th, len(plain), err, len(lines))
		}
		if _, err := exec.LookPath("zstd"); err == nil {
			cmd := exec.Command("zstd", "-dcq", filepath.Join(dir, "events.zst"))
			out, err := cmd.Output()
			if err != nil || !bytes.Equal(out, lines) {
				t.Fatalf("%s: zstd -d gives %d bytes, %v; want the %d of the framed lines", th, len(out), err, len(lines))
			}
		} else if os.Getenv("CI") != "" {
			t.Fatal("no zstd command: .ci/run installs it, and this test needs it in CI")
		}
	}
	// A folder whose events.zst doesn't start so names no thread.
	dir := t.TempDir()
	for _, b := range [][]byte{nil, []byte("\x50\x2a\x4d\x18\x03\x00\x00\x00{}"), []byte("\x50\x2a\x4d\x18\x02\x00\x00\x00{}"), []byte("\x28\xb5\x2f\xfd\x00\x00\x01\x00\x00")} {
		if err := os.WriteFile(filepath.Join(dir, "events.zst"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := compact.Thread(dir); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("thread of %q: %v, want ErrCorrupt", b, err)
		}
	}
}
