//go:build !unix && !windows

package fsx

import "errors"

// lockFile has no lock to take where the system has neither flock nor
// LockFileEx.
func lockFile(uintptr, bool, bool) (bool, error) {
	return false, errors.ErrUnsupported
}
