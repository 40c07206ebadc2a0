package router

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store/internal/foldertime"
)

// dirStamp is a folder's identity and times, as lstat(2) gives them.
type dirStamp struct {
	known        bool
	dev, ino     uint64
	mtime, ctime unix.Timespec
}

// lstat is lstat(2), again on EINTR.
func lstat(name string, st *unix.Stat_t) error {
	for {
		if err := unix.Lstat(name, st); err != unix.EINTR {
			return err
		}
	}
}

// stampDir is dir's stamp; a link or a file is no folder's (not known).
func stampDir(dir string) (dirStamp, error) {
	var st unix.Stat_t
	if err := lstat(dir, &st); err != nil {
		return dirStamp{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dirStamp{}, nil
	}
	return dirStamp{known: true, dev: st.Dev, ino: st.Ino, mtime: st.Mtim, ctime: st.Ctim}, nil
}

// trusted says the folder last changed long enough before now to be
// trusted (foldertime.Trusted).
func (s dirStamp) trusted(now time.Time) bool { return foldertime.Trusted(s.mtime, s.ctime, now) }

// regularNonEmpty says name is a regular file (not a link) holding bytes.
func regularNonEmpty(name string) bool {
	var st unix.Stat_t
	return lstat(name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size > 0
}
