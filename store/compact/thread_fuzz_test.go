package compact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// FuzzThread proves an events.zst whose first bytes anyone wrote never
// panics Thread, is refused as corrupt, and that a thread it reads is a
// good one that threadFrame writes back as a frame read as the same.
func FuzzThread(f *testing.F) {
	good, err := threadFrame("telegram:42")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(good[:8:8], `{"thread":""}`...))
	f.Add([]byte{0x50, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0})
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, zstName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		thread, err := Thread(dir)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("refused %q, not as corrupt: %v", b, err)
			}
			return
		}
		if contract.CheckThread(thread) != nil {
			t.Fatalf("read thread %q from %q", thread, b)
		}
		frame, err := threadFrame(thread)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, zstName), frame, 0o600); err != nil {
			t.Fatal(err)
		}
		if again, err := Thread(dir); err != nil || again != thread {
			t.Fatalf("thread %q written back, read as %q, %v", thread, again, err)
		}
	})
}
