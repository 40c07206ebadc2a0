//go:build !unix

package delivery

import "os"

// keepOpen: a spare's file is closed after each write, since a file open
// here can't be renamed (Windows shares no delete with an open file).
const keepOpen = false

// linked is never asked here: a spare is opened by its name at each hold.
func linked(*os.File) bool { return true }
