//go:build !unix

package run

import "os"

// killGroup kills p (no process groups here).
func killGroup(p *os.Process) { p.Kill() }
