package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal says whether f is a terminal, whose reader is shown a
// prompt: one the terminal ioctl answers (/dev/null, a character device
// too, doesn't).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
