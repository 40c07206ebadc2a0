//go:build !unix

package drivers

import "os"

// running says whether a process pid may run: it can be found.
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
