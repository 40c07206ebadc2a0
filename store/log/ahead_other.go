//go:build !linux

package log

// renameNoReplace is nil where a rename can't refuse to replace what is
// there: no folder is made ahead.
var renameNoReplace func(from, to string) error

func unsupported(error) bool { return true }

// spreadFolders does nothing here: no folder is made ahead.
func spreadFolders(string) {}
