package file

import (
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Confine holds this whole process, by the kernel's Landlock, to the
// workspace dir: files read and written there alone, nothing else of
// the file system opened, no TCP bound or connected to (a server already
// listening goes on accepting), signals and abstract sockets within the
// process. It gives the Landlock ABI the kernel has: 0 where there is
// none (not Linux, or a kernel without it), and nothing is held.
//
// lnk file serve, a process of its own, confines itself once listening;
// the file tool lnk agent chat runs in its own process is not (it would
// hold the chat too).
func Confine(dir string) (abi int, err error) {
	abi, err = llsyscall.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return 0, nil
	}
	// The local time zone is read now: its file is outside.
	time.Now().Local()
	if err := landlock.V11.BestEffort().Restrict(landlock.RWDirs(dir)); err != nil {
		return abi, err
	}
	return abi, nil
}
