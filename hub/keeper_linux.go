package hub

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// envKeeper makes a program that calls KeeperMain a harness's keeper:
// its value is the hub's process id and the grace in milliseconds,
// "PID,MS".
const envKeeper = "LNK_HUB_KEEPER"

// keeperHooked says KeeperMain was called: the program can be its own
// harnesses' keeper.
var keeperHooked atomic.Bool

// KeeperMain runs this process as a harness's keeper when the hub
// started it as one, and exits; otherwise it returns at once, and the
// hubs of this process run each harness under a keeper (a copy of this
// program): call it first in main, and in a test binary's TestMain.
//
// The keeper leads the harness's process group and is the child
// subreaper of all the harness starts, so it reaps every process the
// harness leaves (no zombie, whatever the agent starts), and ends them
// all, whether or not they stayed in the group: when the harness's first
// process exits, when the hub stops it (SIGTERM; SIGKILL past the
// grace), and at once when the hub dies, even killed outright, which a
// kill-with-parent signal on the harness reached only for its first
// process (npm's codex-acp, a node wrapper, left the native binary it
// started running for good).
func KeeperMain() {
	v, ok := os.LookupEnv(envKeeper)
	if !ok {
		keeperHooked.Store(true)
		return
	}
	os.Exit(keep(v, os.Args[1:]))
}

// keeperCommand is how command is run, with env: under a keeper (this
// program) when KeeperMain was called, else as it is.
func keeperCommand(command, env []string, grace time.Duration) ([]string, []string, bool) {
	if !keeperHooked.Load() {
		return command, env, false
	}
	kept := append([]string{"/proc/self/exe"}, command...)
	if path, err := exec.LookPath(command[0]); err == nil {
		kept[1] = path // found on the hub's PATH, as it was run without a keeper
	}
	env = append(env[:len(env):len(env)], fmt.Sprintf("%s=%d,%d", envKeeper, os.Getpid(), grace.Milliseconds()))
	return kept, env, true
}

// dieWithParent has the harness's first process told when the hub's
// dies: a keeper SIGUSR1, which it answers by ending all it keeps; a
// harness run as it is, SIGKILL, reaching that process alone.
func dieWithParent(a *syscall.SysProcAttr, kept bool) {
	a.Pdeathsig = syscall.SIGKILL
	if kept {
		a.Pdeathsig = syscall.SIGUSR1
	}
}

// keep is the keeper: it runs command as its child, reaps all it
// leaves, and ends them all when it ends, when told to stop, or when the
// hub goes; it exits as command did.
func keep(v string, command []string) int {
	var hub, graceMS int
	if _, err := fmt.Sscanf(v, "%d,%d", &hub, &graceMS); err != nil || len(command) == 0 {
		fmt.Fprintf(os.Stderr, "harness keeper: started as %q with %q\n", v, command)
		return 2
	}
	grace := time.Duration(graceMS) * time.Millisecond
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGCHLD, syscall.SIGINT, syscall.SIGHUP)
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	first, code := startKept(command)
	if code != 0 {
		return code
	}
	return watchKept(hub, first, grace, sigs)
}

// startKept starts command, the harness, as the keeper's child, the
// keeper's variable left out of its environment, and gives its pipes to
// it alone: first is its pid, code not 0 the keeper's exit when it could
// not start.
func startKept(command []string) (first, code int) {
	path, err := exec.LookPath(command[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 0, 127
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envKeeper+"=") {
			env = append(env, kv)
		}
	}
	first, err = syscall.ForkExec(path, command, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start %s: %v\n", command[0], err)
		return 0, 127
	}
	// Its pipes are the harness's alone now: they end when it and what
	// it started let them go.
	if null, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0); err == nil {
		for fd := range 3 {
			syscall.Dup3(null, fd, 0)
		}
		syscall.Close(null)
	}
	return first, 0
}

// watchKept reaps every process the keeper holds until none is left,
// exiting as the first, first: once it ended, or SIGTERM came, all are
// sent SIGTERM, and SIGKILL after grace (at once on SIGUSR1, or when
// hub, the keeper's parent, went before its signal was set).
func watchKept(hub, first int, grace time.Duration, sigs <-chan os.Signal) int {
	var (
		status   syscall.WaitStatus
		ended    bool // the first process was reaped
		stopping bool // all were sent SIGTERM
		hard     bool // all are sent SIGKILL, again until none is left
		kill     <-chan time.Time
		tick     = time.NewTicker(100 * time.Millisecond)
	)
	stop := func() {
		if !stopping {
			stopping = true
			signalKept(syscall.SIGTERM)
			kill = time.After(grace)
		}
	}
	if os.Getppid() != hub { // the hub went before its signal was set
		hard = true
	}
	for {
		if hard {
			signalKept(syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return exitAs(status)
			}
			if pid <= 0 || err != nil {
				break
			}
			if pid == first {
				status, ended = ws, true
			}
		}
		if ended {
			stop()
		}
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGTERM:
				stop()
			case syscall.SIGUSR1:
				hard = true
			}
		case <-kill:
			hard = true
		case <-tick.C:
		}
	}
}

// exitAs is the keeper's exit code as its first process exited: its
// code, or, killed by a signal, the keeper killed by the same.
func exitAs(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// signalKept sends sig to every process the keeper keeps: its children
// and theirs, down the tree, whatever their group (a subreaper's
// orphans are its children).
func signalKept(sig syscall.Signal) {
	for _, pid := range descendants(os.Getpid()) {
		syscall.Kill(pid, sig)
	}
}

// descendants are the processes under root, read from /proc.
func descendants(root int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, ...
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	for queue := children[root]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}
