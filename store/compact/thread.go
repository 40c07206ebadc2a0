package compact

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/lnk-dev/link/internal/fsx"

	"github.com/lnk-dev/link/contract"
	"github.com/lnk-dev/link/store"
)

// maxThreadFrame bounds the first frame's payload: a thread id is at most
// contract.MaxThreadLen bytes, and JSON escapes none of its characters.
const maxThreadFrame = 4 << 10

// firstFrame is the payload of events.zst's first frame, a skippable one:
// the thread, which its folder's name doesn't say whole (telegram-42 for
// telegram:42).
type firstFrame struct {
	Thread string `json:"thread"`
}

// threadFrame is the first frame of thread's events.zst.
func threadFrame(thread string) ([]byte, error) {
	payload, err := json.Marshal(firstFrame{Thread: thread})
	if err != nil {
		return nil, err
	}
	return skippableFrame(payload), nil
}

// Thread reads which thread the compact conversation in dir keeps, from
// the first frame of its events.zst.
func Thread(dir string) (string, error) {
	path := filepath.Join(dir, zstName)
	f, err := fsx.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("thread of %s: %w", dir, err)
	}
	defer f.Close()
	var hb [8]byte
	var h zstd.Header
	if err := readAt(f, hb[:], 0); err != nil {
		return "", fmt.Errorf("thread of %s: %s: %w: no first frame: %v", dir, zstName, store.ErrCorrupt, err)
	}
	if err := h.Decode(hb[:]); err != nil || !h.Skippable {
		return "", fmt.Errorf("thread of %s: %s: %w: its first frame isn't a skippable one naming the thread", dir, zstName, store.ErrCorrupt)
	}
	if h.SkippableSize > maxThreadFrame {
		return "", fmt.Errorf("thread of %s: %s: %w: first frame of %d bytes, over %d", dir, zstName, store.ErrCorrupt, h.SkippableSize, maxThreadFrame)
	}
	payload := make([]byte, h.SkippableSize)
	if err := readAt(f, payload, int64(h.HeaderSize)); err != nil {
		return "", fmt.Errorf("thread of %s: %s: %w: first frame cut short: %v", dir, zstName, store.ErrCorrupt, err)
	}
	var ff firstFrame
	if err := json.Unmarshal(payload, &ff); err != nil {
		return "", fmt.Errorf("thread of %s: %s: %w: first frame: %v", dir, zstName, store.ErrCorrupt, err)
	}
	if err := contract.CheckThread(ff.Thread); err != nil {
		return "", fmt.Errorf("thread of %s: %s: %w: first frame: %v", dir, zstName, store.ErrCorrupt, err)
	}
	return ff.Thread, nil
}

// begin makes dir a compact conversation of thread, if it isn't one yet:
// the folder, and events.zst holding its first frame. events.zst is
// written whole beside and linked into place, so it is there complete or
// not at all, and of writers beginning at once the first one's stays.
func begin(dir, thread string) error {
	path := filepath.Join(dir, zstName)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	first, err := threadFrame(thread)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, zstName, first)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := fsx.SyncDir(dir); err != nil {
		return err
	}
	return fsx.SyncDir(filepath.Dir(dir))
}

// writeTemp writes b whole, synced, to a new hidden file in dir named
// after name, and gives its path, for the caller to put in place.
func writeTemp(dir, name string, b []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}
