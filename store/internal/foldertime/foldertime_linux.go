package foldertime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Trusted says a folder whose times are mtime and ctime last changed at
// least Wait before now, or WaitFine on a file system that keeps times
// finer than a second, as its times show (finer).
func Trusted(mtime, ctime unix.Timespec, now time.Time) bool {
	last := max(time.Unix(mtime.Unix()).UnixNano(), time.Unix(ctime.Unix()).UnixNano())
	wait := Wait
	if finer(mtime, ctime) {
		wait = WaitFine
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
