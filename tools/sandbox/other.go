//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
)

// TrampolineArg is the argument that starts this program as a sandbox's
// trampoline: never, on this system.
const TrampolineArg = "lnk-sandbox-exec"

// IsTrampoline is false: this system has no sandbox.
func IsTrampoline([]string) bool { return false }

// Main is never run on this system.
func Main() int { return 2 }

// Available refuses: only Linux's kernel sandbox (Landlock and
// namespaces) is made for Link.
func Available() error {
	return fmt.Errorf("only Linux has the sandbox Link uses (Landlock and namespaces): %w", ErrUnavailable)
}

// Program is this program: there is no trampoline off Linux.
func Program() string { return "/proc/self/exe" }

// AssumeAvailable does nothing: nothing is confined off Linux.
func AssumeAvailable() {}

// Command is spec's command unconfined, when spec.Unconfined says so:
// its environment and working folder alone. Otherwise it is refused.
func Command(spec Spec) (*exec.Cmd, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if !spec.Unconfined {
		return nil, Available()
	}
	cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	return cmd, nil
}

// UseProgram does nothing here: there is no trampoline.
func UseProgram(string) {}
