//go:build !unix

package fsx

import "os"

// Open is os.OpenFile where the poller's cost isn't known.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
