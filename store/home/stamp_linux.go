package home

import (
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
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

// settled says the folder last changed at least Settle before now, or
// SettleFine where its times show a part of a second, both of them (its
// file system keeps times finer than a second: ext4, xfs, btrfs, tmpfs,
// to the kernel's clock tick, at most 10 ms; one that keeps whole
// seconds, or FAT's two, never shows a part, and a time that falls on a
// whole second by chance is taken for one, the longer wait).
func (s stamp) settled(now time.Time) bool {
	last := max(time.Unix(s.mtime.Unix()).UnixNano(), time.Unix(s.ctime.Unix()).UnixNano())
	wait := Settle
	if s.mtime.Nsec != 0 && s.ctime.Nsec != 0 {
		wait = SettleFine
	}
	return now.UnixNano()-last >= int64(wait)
}
