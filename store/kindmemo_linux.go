package store

import (
	"time"

	"golang.org/x/sys/unix"
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

// settled says the folder last changed long enough before now to be
// trusted (FolderSettled).
func (s dirStamp) settled(now time.Time) bool { return FolderSettled(s.mtime, s.ctime, now) }

// FolderSettled says a folder whose times are mtime and ctime last
// changed at least FolderSettle before now, or FolderSettleFine on a
// file system that keeps times finer than a second, as its times show
// (finer).
func FolderSettled(mtime, ctime unix.Timespec, now time.Time) bool {
	last := max(time.Unix(mtime.Unix()).UnixNano(), time.Unix(ctime.Unix()).UnixNano())
	wait := FolderSettle
	if finer(mtime, ctime) {
		wait = FolderSettleFine
	}
	return now.UnixNano()-last >= int64(wait)
}

// finer says a folder's times show a part of a second, both of them: its
// file system keeps times finer than a second (ext4, xfs, btrfs, tmpfs:
// to the kernel's clock tick, at most 10 ms). One that keeps whole
// seconds (or FAT's two) never shows a part; a time that falls on a whole
// second by chance is taken for one, the longer wait.
func finer(mtime, ctime unix.Timespec) bool {
	return mtime.Nsec != 0 && ctime.Nsec != 0
}

// regularNonEmpty says name is a regular file (not a link) holding bytes.
func regularNonEmpty(name string) bool {
	var st unix.Stat_t
	return lstat(name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size > 0
}
