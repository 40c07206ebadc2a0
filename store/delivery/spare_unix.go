//go:build unix

package delivery

import (
	"os"
	"syscall"
)

// keepOpen: a spare's file stays open between holds, since a file renamed
// while open stays open here.
const keepOpen = true

// linked says whether f still has a name: a spare kept open that a
// listing removed has none, and what is written into it is nowhere.
func linked(f *os.File) bool {
	info, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 0
}
