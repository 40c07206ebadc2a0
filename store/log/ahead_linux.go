package log

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/fsx"
)

// renameNoReplace renames from to to only if to isn't there: renameat2's
// RENAME_NOREPLACE, fs.ErrExist when it is.
var renameNoReplace = func(from, to string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
}

// fsTopdirFL is FS_TOPDIR_FL (linux/fs.h, chattr +T): a folder at the
// top of directory hierarchies.
const fsTopdirFL = 0x00020000

// spreadFolders marks chats, where it isn't, as the top of unrelated
// folders (FS_TOPDIR_FL, chattr +T), which the conversations' are: ext4
// then puts each folder made in it in the block group with the fewest
// folders that has room (the Orlov allocator's choice for a top folder),
// and the files made in a folder in that folder's group, rather than
// every one in the group of chats itself. Where ext4 keeps no journal,
// making an inode passes over every inode of its group freed in the
// last seconds (recently_deleted), so where other programs make and
// remove many files beside the home (/tmp) each inode made in its group
// cost up to 0.8 ms of processor (docs/decisions/022-perf-cold-message-syncs.md,
// 025-perf-cold-message-inodes.md). A file system
// without the flag, or that refuses it, is left as it is: only where
// folders go depends on it.
func spreadFolders(chats string) {
	f, err := fsx.Open(chats, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fd := int(f.Fd())
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsTopdirFL != 0 {
		return
	}
	_ = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsTopdirFL))
}

// unsupported says err is a file system's refusal of RENAME_NOREPLACE.
func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}
