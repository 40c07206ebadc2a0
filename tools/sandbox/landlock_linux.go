package sandbox

import (
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
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
// refused by Available.
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
	return cfg.BestEffort().Restrict(rules...)
}
