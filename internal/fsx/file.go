package fsx

import (
	"os"
	"syscall"
)

// Handle is an open file as Lock, Datasync and Fsync take it: an
// *os.File, or a *File.
type Handle interface {
	// Name is the name the file was opened by, for errors.
	Name() string
	// SyscallConn hands the file's descriptor to a call.
	SyscallConn() (syscall.RawConn, error)
}

var (
	_ Handle = (*os.File)(nil)
	_ Handle = (*File)(nil)
)

// Stamp is a file's identity and length at one moment: the device and
// inode it is, when it was made (Born, in nanoseconds since 1970; 0 where
// the file system or the platform keeps no birth) and its size. Two
// stamps equal, Born known, are one file of one length: one removed and
// another made under its name has another birth, even where the inode's
// number is used again.
type Stamp struct {
	Dev, Ino uint64
	Born     int64
	Size     int64
}
