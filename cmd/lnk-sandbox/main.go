// Package main is lnk-sandbox, the trampoline of Link's sandbox
// (tools/sandbox) as a program of its own: lnk run starts it, in new
// namespaces, for each command it runs; it confines itself (mounts,
// limits, Landlock, seccomp, no capabilities) and runs the command. It is
// also each background command's supervisor (tools/run/background),
// which lives as long as its command. It is lnk's own trampoline and
// supervisor without lnk's other packages, whose start-up would cost
// every call tens of milliseconds, and each supervisor their memory.
// Installed beside lnk (go install ./cmd/...), or built from the checkout
// as a driver's plugin is.
package main

import (
	"fmt"
	"os"

	"github.com/lnk-dev/link/tools/run/background"
	"github.com/lnk-dev/link/tools/sandbox"
)

func main() {
	if background.IsSupervisor(os.Args) {
		os.Exit(background.Supervise(os.Args, sandbox.Stored))
	}
	if !sandbox.IsTrampoline(os.Args) {
		fmt.Fprintln(os.Stderr, "lnk-sandbox: started by lnk run's sandbox alone, never by hand")
		os.Exit(2)
	}
	os.Exit(sandbox.Main())
}
