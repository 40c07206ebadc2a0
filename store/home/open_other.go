//go:build !linux

package home

import (
	"io/fs"
	"os"

	"github.com/lnk-dev/link/store"
)

// open opens name of agent's home for reading through an os.Root.
func (f Files) open(agent, name string, _ bool) (*os.File, error) {
	if err := store.CheckFileName(name); err != nil {
		return nil, err
	}
	home, err := f.root(agent)
	if err != nil {
		return nil, err
	}
	return openRooted(home, name)
}

// lstat is Lstat of name in agent's home, no link on the way.
func (f Files) lstat(agent, name string) (fs.FileInfo, error) {
	if err := store.CheckFileName(name); err != nil {
		return nil, err
	}
	home, err := f.root(agent)
	if err != nil {
		return nil, err
	}
	return lstatRooted(home, name)
}
