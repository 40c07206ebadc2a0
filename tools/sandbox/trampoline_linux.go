package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// TrampolineArg is the argument that starts this program as a sandbox's
// trampoline (IsTrampoline, Main).
const TrampolineArg = "lnk-sandbox-exec"

// IsTrampoline says whether args (os.Args) start this program as a
// sandbox's trampoline: then main calls Main and nothing else.
func IsTrampoline(args []string) bool { return len(args) == 2 && args[1] == TrampolineArg }

// exitSetup is the trampoline's exit status when it could not confine
// itself or start the command; what went wrong is on its standard error,
// after "lnk sandbox: ".
const exitSetup = 125

// Main is the trampoline: it reads its spec, confines itself (mounts,
// limits, Landlock, capabilities), starts the command as its child, and
// ends with it, its exit status the command's (128+n for one killed by
// signal n). Every process the command leaves ends with it: the
// trampoline is the first process of the call's pid namespace.
func Main() int {
	// Landlock, the capabilities dropped and no_new_privs are this
	// thread's: the command is forked from it, and inherits them.
	runtime.LockOSThread()
	w, err := readWire()
	if err != nil {
		return fail("read the command", err)
	}
	if !w.Unconfined {
		if err := confine(w); err != nil {
			return fail("confine", err)
		}
	} else {
		if err := setLimits(w.Limits); err != nil {
			return fail("limits", err)
		}
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	if w.Probe {
		return 0
	}
	return runChild(w)
}

// fail says on standard error what the trampoline could not do.
func fail(what string, err error) int {
	fmt.Fprintf(os.Stderr, "lnk sandbox: %s: %v\n", what, err)
	return exitSetup
}

func readWire() (wire, error) {
	f := os.NewFile(specFD, "spec")
	if f == nil {
		return wire{}, errors.New("no spec at descriptor 3")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxWire+1))
	if err != nil {
		return wire{}, err
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return wire{}, err
	}
	if err := w.check(); err != nil {
		return wire{}, err
	}
	return w, nil
}

// confine makes the trampoline's namespaces its own (a /proc of the pid
// namespace, empty /tmp and /run, whatever of the workspace's and Read's
// paths they hid bound back), sets the limits, restricts it with
// Landlock and drops every capability: what its child inherits.
func confine(w wire) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	// What the new mounts may hide, held open to bind back.
	// A workspace under /tmp (or /run) is bound back alone: bound
	// there, all of the agent's home would be under the call's /tmp, which
	// Landlock lets it write; so what is beside it isn't there at all.
	keep := append([]string{w.Dir}, w.Read...)
	held := make([]*os.File, len(keep))
	for i, p := range keep {
		f, err := os.OpenFile(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		defer f.Close()
		held[i] = f
	}
	// A /proc of the pid namespace: only the call's processes. Where the
	// kernel refuses it (a container whose /proc is partly masked), the
	// machine's stays: Landlock still refuses a command every other
	// process's /proc files (its ptrace check).
	if unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil {
		boundTasks(w.Limits.Processes)
	}
	tmpSize := strconv.FormatInt(w.Limits.FileSize, 10)
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size="+tmpSize); err != nil {
		return fmt.Errorf("a /tmp of its own: %w", err)
	}
	if fi, err := os.Lstat("/run"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=65536"); err != nil {
			return fmt.Errorf("an empty /run: %w", err)
		}
	}
	for i, p := range keep {
		if err := bindBack(p, held[i]); err != nil {
			return err
		}
	}
	if err := setLimits(w.Limits); err != nil {
		return err
	}
	if err := restrict(w); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := filterCalls(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// boundTasks bounds the tasks (processes and threads) of the call's pid
// namespace, where the kernel keeps pid_max for each (Linux 6.14 on):
// four for each process the limits allow, 301 at the least (the
// kernel's least). RLIMIT_NPROC is no bound for a command run as root
// (the kernel exempts uid 0's processes whatever their namespace), so a
// fork bomb run as root stops here, not at the machine's own limit.
func boundTasks(processes int) {
	n := max(4*processes, 301)
	os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(n)+"\n"), 0)
}

// bindBack binds f (opened at p before /tmp and /run were mounted) at p
// again when a new mount hid it.
func bindBack(p string, f *os.File) error {
	held, err := f.Stat()
	if err != nil {
		return err
	}
	if now, err := os.Stat(p); err == nil && os.SameFile(now, held) {
		return nil
	}
	if held.IsDir() {
		err = os.MkdirAll(p, 0o700)
	} else {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			var g *os.File
			if g, err = os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				g.Close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("bind %s back: %w", p, err)
	}
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Mount(src, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s back: %w", p, err)
	}
	return nil
}

// setLimits sets l on the trampoline, for its child to inherit.
func setLimits(l Limits) error {
	set := func(name string, res int, v uint64) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("limit %s to %d: %w", name, v, err)
		}
		return nil
	}
	return errors.Join(
		set("processes", unix.RLIMIT_NPROC, uint64(l.Processes)),
		set("memory", unix.RLIMIT_AS, uint64(l.Memory)),
		set("CPU time", unix.RLIMIT_CPU, uint64(l.CPUSeconds)),
		set("file size", unix.RLIMIT_FSIZE, uint64(l.FileSize)),
		set("open files", unix.RLIMIT_NOFILE, uint64(l.OpenFiles)),
		set("core dumps", unix.RLIMIT_CORE, 0),
	)
}

// dropCapabilities leaves the trampoline's thread, and every program it starts,
// no capability even as root in its user namespace: none in the
// bounding set, no ambient, none inherited, none effective or permitted,
// and root's gaining them again at exec turned off for good.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3 // SECBIT_NOROOT, _LOCKED, SECBIT_NO_SETUID_FIXUP, _LOCKED
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// runChild starts the command and waits for it, reaping every process
// left to the trampoline, passing on the signals the trampoline is sent.
func runChild(w wire) int {
	path, err := lookPath(w.Args[0], w.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lnk sandbox: %v\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(path, w.Args, &syscall.ProcAttr{
		Dir:   w.Dir,
		Env:   w.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "lnk sandbox: run %s: %v\n", w.Args[0], err)
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOEXEC) {
			return 126
		}
		return 127
	}
	go func() {
		for s := range sigs {
			if w.Unconfined {
				syscall.Kill(pid, s.(syscall.Signal))
			} else {
				syscall.Kill(-1, s.(syscall.Signal)) // every process of the namespace but this one
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return exitSetup
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
}

// lookPath finds name in env's PATH, as a shell would; a name with a
// slash is itself.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := DefaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: no such program in PATH", name)
}
