package file

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandbox is the kernel's confinement each call runs in: a Landlock
// ruleset allowing the workspace alone (read, write, make, remove; no
// other file of the machine), no TCP bound or connected to, signals and
// abstract sockets kept within, entered by an OS thread of the call's
// own that ends with it. So a call reaches nothing outside the workspace
// even through a flaw of its own lookup, in whatever process serves it
// (lnk agent chat's too, whose other threads it leaves alone).
type sandbox struct {
	fd     int // the ruleset; -1: the kernel has no Landlock
	flags  uint32
	closed atomic.Bool
}

// noSandbox, set by a benchmark, runs calls without a thread of their
// own, to measure what the sandbox costs.
var noSandbox atomic.Bool

func newSandbox(dir string) (*sandbox, error) {
	if abi, err := llsyscall.LandlockGetABIVersion(); err != nil || abi < 1 {
		return &sandbox{fd: -1}, nil
	}
	fd, flags, err := landlock.V11.BestEffort().NewRulesetFD(landlock.RWDirs(dir))
	if err != nil {
		return nil, fmt.Errorf("the calls' sandbox: %w", err)
	}
	return &sandbox{fd: fd, flags: flags}, nil
}

// run runs fn on an OS thread of its own held by the sandbox, ended with
// fn: a thread once held is never given back to the runtime. An error
// entering the sandbox is fn's, which is then not run.
func (s *sandbox) run(fn func() error) error {
	if s.closed.Load() {
		return errClosed
	}
	if s.fd < 0 || noSandbox.Load() {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the runtime ends the thread with this
		// goroutine, and makes its other threads from one not held
		// (its template thread), never by cloning this one.
		runtime.LockOSThread()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("a call failed: %v", r)
			}
		}()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- fmt.Errorf("the call's sandbox: no_new_privs: %w", err)
			return
		}
		if err := llsyscall.LandlockRestrictSelf(s.fd, s.flags); err != nil {
			done <- fmt.Errorf("the call's sandbox: landlock_restrict_self: %w", err)
			return
		}
		done <- fn()
	}()
	return <-done
}

func (s *sandbox) close() {
	if !s.closed.Swap(true) && s.fd >= 0 {
		unix.Close(s.fd)
	}
}
