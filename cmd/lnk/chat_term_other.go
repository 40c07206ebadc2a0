//go:build !linux

package main

import "os"

// isTerminal says whether f is a terminal (a character device), whose
// reader is shown a prompt.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
