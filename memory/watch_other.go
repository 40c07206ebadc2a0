//go:build !linux

package memory

import (
	"errors"
	"runtime"
)

// watcher is the kernel's record of what changed in the agent's home,
// on Linux alone (inotify); elsewhere there is none, and every search
// looks at every source.
type watcher struct{ wrong error }

func newWatcher(string) (*watcher, error) {
	return nil, errors.New("no watch of the home's folders on " + runtime.GOOS)
}

// change is a name in a watched folder that changed.
type change struct {
	dir, name string
	isDir     bool
	self      bool
}

func (*watcher) begin()                  {}
func (*watcher) add(string)              {}
func (*watcher) end()                    {}
func (*watcher) drain() ([]change, bool) { return nil, true }
func (*watcher) forget(string)           {}
func (*watcher) close() error            { return nil }
