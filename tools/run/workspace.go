package run

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// linkHome is the Link home an agent's root (<home>/agents/<agent>) is
// under.
func linkHome(root string) string { return filepath.Dir(filepath.Dir(root)) }

// ensureWorkspace makes the workspace (0700) when there is none, and
// refuses one that is not a folder of its own: a symbolic link there
// would give the sandbox another folder to write.
func ensureWorkspace(ws string) error {
	fi, err := os.Lstat(ws)
	if os.IsNotExist(err) {
		if err := os.MkdirAll(ws, 0o700); err != nil {
			return fmt.Errorf("make the workspace: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("the workspace: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("the workspace (files/) is not a folder (%s): a link there is never followed", fi.Mode().Type())
	}
	return nil
}
