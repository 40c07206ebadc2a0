package sandbox

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemDirs are the folders of the system a command reads and runs
// (each where it is; a link such as /bin is followed to its folder).
// /etc is read in part (etcCover); /dev as devices alone (devices).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sys", "/proc"}

// devices are the devices a command may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// restrict confines the trampoline, every thread of it, with Landlock:
// the workspace and the call's own /tmp read-write (files moved between
// folders too), the system and w.Read read-only, /etc's parts anyone may
// read (w.Etc), the few devices; nothing else, not even a folder's
// names. Without w.Network, every TCP bind and connect is refused too
// (beside the network namespace with no way out). Signals and abstract
// UNIX sockets reach nothing outside the call (Landlock's scopes, ABI 6).
// The strongest Landlock the kernel has is used; one below ABI 1 was
// refused by Available. It restricts the calling thread alone: the
// caller forks the command from it.
func restrict(w wire) error {
	cfg := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}
	if !w.Network {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	}
	rules := []landlock.Rule{
		landlock.RWDirs(w.Dir, "/tmp").WithRefer(),
		landlock.RODirs(systemDirs...).IgnoreIfMissing(),
		landlock.PathAccess(llsys.AccessFSReadDir, "/etc", "/dev"),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
	}
	for _, p := range append(w.Etc, w.Read...) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else {
			rules = append(rules, landlock.ROFiles(p))
		}
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("the kernel's Landlock restricts nothing")
	}
	defer unix.Close(fd)
	// This thread alone, the one that forks the command (Main holds it):
	// restricting every thread of a Go program stops each one by a signal
	// (go-landlock's psx before ABI 8), which under load took 80 ms and
	// once never came back.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return llsys.LandlockRestrictSelf(fd, flags)
}
