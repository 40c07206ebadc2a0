package sandbox

import (
	seccomp "github.com/elastic/go-seccomp-bpf"
)

// refusedCalls are the system calls a sandboxed command is refused
// (EPERM) by a seccomp filter: the kernel's riskiest interfaces that a
// command in a workspace has no use for, and a way around the sandbox's
// namespaces (new namespaces and mounts; Landlock refuses the mounts
// too). Everything else is let through: Landlock and the namespaces are
// the confinement, this narrows what of the kernel a command can reach.
var refusedCalls = []string{
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"swapon", "swapoff", "reboot", "acct", "syslog",
}

// filterCalls installs the filter on the calling thread alone (the one
// that forks the command, which inherits it); no_new_privs is set
// already (restrict).
func filterCalls() error {
	return seccomp.LoadFilter(seccomp.Filter{
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Names: refusedCalls, Action: seccomp.ActionErrno}},
		},
	})
}
