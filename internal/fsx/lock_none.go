//go:build !unix && !windows

package fsx

import (
	"errors"
	"os"
)

// lockFile has no lock to take where the system has neither flock nor
// LockFileEx.
func lockFile(*os.File, bool, bool) (bool, error) {
	return false, errors.ErrUnsupported
}
