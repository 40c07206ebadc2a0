package home

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/store/internal/foldertime"
)

// stamp is a folder's identity and times, as lstat(2) gives them: any
// entry made, removed or renamed in it changes its times, and another
// folder put in its place has another identity.
type stamp struct {
	dir          string
	known        bool
	dev, ino     uint64
	mtime, ctime unix.Timespec
}

// sysLstat is lstat(2), a test's to count.
var sysLstat = unix.Lstat

// stampOf is dir's stamp; a link or a file is no folder's.
func stampOf(dir string) (stamp, error) {
	var st unix.Stat_t
	for {
		err := sysLstat(dir, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return stamp{}, &fs.PathError{Op: "lstat", Path: dir, Err: err}
		}
		break
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return stamp{dir: dir}, nil
	}
	return stamp{dir: dir, known: true, dev: st.Dev, ino: st.Ino, mtime: st.Mtim, ctime: st.Ctim}, nil
}

// trusted says the folder last changed long enough before now for its
// times to be trusted (foldertime.Trusted).
func (s stamp) trusted(now time.Time) bool { return foldertime.Trusted(s.mtime, s.ctime, now) }
