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
