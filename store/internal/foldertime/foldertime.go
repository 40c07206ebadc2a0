// Package foldertime says when a folder's times can be trusted to change
// with its next change: a file system keeps them to a clock's tick, so a
// folder changed within the last tick may change again with the same
// times. The router's remembered drivers (store/router) and store/home's
// remembered misses both trust a folder so.
package foldertime

import "time"

// Wait is how long after its last change a folder's times are trusted to
// change with its next one; WaitFine where the folder's times show the
// file system keeps them finer than a second (to the kernel's clock tick,
// at most 10 ms): ten ticks of the coarsest.
const (
	Wait     = 2 * time.Second
	WaitFine = 100 * time.Millisecond
)
