//go:build !unix

package delivery

// keepOpen: a spare's file is closed after each write, since a file open
// here can't be renamed (Windows shares no delete with an open file).
const keepOpen = false
