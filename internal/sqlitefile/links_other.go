//go:build !unix

package sqlitefile

import "io/fs"

// Names is how many names (hard links) the file fi has, and whether the
// system says: off Unix os.FileInfo doesn't, so never.
func Names(fs.FileInfo) (n uint64, known bool) { return 0, false }
