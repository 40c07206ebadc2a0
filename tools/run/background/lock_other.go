//go:build !unix

package background

import (
	"context"
	"errors"
)

var errNoLocks = errors.New("background commands run on Linux alone")

func tryLock(string) (func(), bool, error)                 { return nil, false, errNoLocks }
func lockHeld(string) (bool, error)                        { return false, errNoLocks }
func waitUnlocked(context.Context, string) (func(), error) { return nil, errNoLocks }
