package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is what a watched folder reports: a name in it made,
// removed, renamed, written, or its time changed. A folder reached
// through a link isn't watched.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// watcher is the kernel's record (inotify) of what changed in the
// folders of the agent's home that search reads. Nothing reads it
// between calls: the kernel queues what happens, and a sync takes the
// queue at its start, so a change made before a search began is in it.
// It runs nothing, and costs no CPU while nothing is asked.
type watcher struct {
	mu    sync.Mutex // add is called by the files' and the conversations' looks side by side
	fd    int
	root  string           // the agent's home
	dirs  map[int32]string // each watch's folder, relative to root and slash-separated
	seen  map[int32]bool   // the watches added again since the last full look began
	buf   []byte
	wrong error // why a folder couldn't be watched since the last full look began
}

// newWatcher watches folders of the agent's home at root; nil when the
// kernel can't (no inotify left, or a file system whose changes it may
// not see, made by another machine), and every search then looks at
// every source.
func newWatcher(root string) (*watcher, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(root, &fs); err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	if remote(uint32(fs.Type)) {
		return nil, fmt.Errorf("watch %s: a network file system (type %#x), changed by other machines unseen", root, fs.Type)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	return &watcher{fd: fd, root: root, dirs: map[int32]string{}, buf: make([]byte, 64<<10)}, nil
}

// remote says whether a file system of type t (statfs) may be changed
// by another machine, which its kernel here doesn't report.
func remote(t uint32) bool {
	switch t {
	case unix.NFS_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC,
		unix.FUSE_SUPER_MAGIC, unix.V9FS_MAGIC, unix.CEPH_SUPER_MAGIC, unix.AFS_SUPER_MAGIC, unix.AFS_FS_MAGIC,
		unix.CODA_SUPER_MAGIC, unix.NCP_SUPER_MAGIC:
		return true
	}
	return false
}

// begin starts a full look: the watches added until end are those kept.
func (w *watcher) begin() {
	w.seen = map[int32]bool{}
	w.wrong = nil
}

// add watches the folder rel (relative to the home), before it is read,
// so a change after the read is reported. A folder that can't be
// watched (the kernel's count of watches spent) makes the watcher
// incomplete until a full look watches it.
func (w *watcher) add(rel string) {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(w.root, filepath.FromSlash(rel)), watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) && w.wrong == nil {
			w.wrong = fmt.Errorf("watch %s: %w", rel, err)
		}
		return
	}
	w.dirs[int32(wd)] = rel
	if w.seen != nil {
		w.seen[int32(wd)] = true
	}
}

// end ends a full look: a watch not added again since begin (a folder
// gone or moved away) is removed.
func (w *watcher) end() {
	for wd := range w.dirs {
		if !w.seen[wd] {
			unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, wd)
		}
	}
	w.seen = nil
}

// change is a name in a watched folder that changed: dir is the folder,
// relative to the home, slash-separated ("" for the home itself).
type change struct {
	dir, name string
	isDir     bool // the name is a folder
	self      bool // the folder itself was removed or moved
}

// drain is what changed since it was last called. lost says the
// kernel's queue overflowed, or couldn't be read, and what changed isn't
// known: a full look is needed.
func (w *watcher) drain() (out []change, lost bool) {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) || n == 0 && err == nil {
			return out, false
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, true
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameAt := off + unix.SizeofInotifyEvent
			off = nameAt + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				return nil, true
			}
			dir, ok := w.dirs[ev.Wd]
			if !ok {
				continue // a watch removed since
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(w.dirs, ev.Wd)
				continue
			}
			name := ""
			if ev.Len > 0 {
				b := w.buf[nameAt:off]
				for i, c := range b {
					if c == 0 {
						b = b[:i]
						break
					}
				}
				name = string(b)
			}
			out = append(out, change{dir: dir, name: name, isDir: ev.Mask&unix.IN_ISDIR != 0, self: ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0})
		}
	}
}

// forget removes the watch of the folder rel, gone.
func (w *watcher) forget(rel string) {
	for wd, d := range w.dirs {
		if d == rel {
			unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, wd)
		}
	}
}

func (w *watcher) close() error { return unix.Close(w.fd) }
