package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// wire is what Command hands the trampoline, on a sealed memfd at
// descriptor 3: the spec and what the server read of the system for it.
type wire struct {
	Spec
	Etc   []string `json:"etc,omitempty"` // /etc's parts any user may read (etcCover)
	Probe bool     `json:"probe,omitempty"`
}

// maxWire bounds the spec the trampoline reads.
const maxWire = 4 << 20

// specFD is the trampoline's descriptor of its spec.
const specFD = 3

// Command is the command spec says, to run confined: this program
// started again as the trampoline (Main) in namespaces of its own, which
// confines itself and then runs spec.Args. Its environment is spec.Env
// alone, its working folder spec.Dir; it is its own process group and
// is killed when the thread that starts it ends (Pdeathsig), so the
// caller kills every process of the call with that group (or the
// trampoline alone: the pid namespace ends with it). The caller sets its
// standard input, output and error. Where the kernel offers no sandbox it
// is refused (ErrUnavailable, with why), unless spec.Unconfined.
func Command(spec Spec) (*exec.Cmd, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	spec.Limits = spec.Limits.WithDefaults()
	w := wire{Spec: spec}
	if !spec.Unconfined {
		if err := Available(); err != nil {
			return nil, err
		}
		w.Etc = etcCover()
	}
	return command(w)
}

// command is the trampoline's command for w.
func command(w wire) (*exec.Cmd, error) {
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if len(b) > maxWire {
		return nil, fmt.Errorf("sandbox: the command and its environment are %d bytes, past the %d a command may have", len(b), maxWire)
	}
	f, err := specFile(b)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:       *program.Load(),
		Args:       []string{"lnk-sandbox", TrampolineArg},
		Env:        w.Env,
		Dir:        w.Dir,
		ExtraFiles: []*os.File{f},
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if !w.Unconfined {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		if !w.Network {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return cmd, nil
}

// specFile is b in a sealed memfd, its offset at 0, closed on exec in
// this process (exec.Cmd gives the child its own copy).
func specFile(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("lnk-sandbox-spec", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("sandbox: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "lnk-sandbox-spec")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: memfd: %w", err)
	}
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: memfd: %w", err)
	}
	return f, nil
}

// program is the trampoline's program: this one, unless UseProgram.
var program atomic.Pointer[string]

func init() {
	self := "/proc/self/exe"
	program.Store(&self)
}

// UseProgram makes path the trampoline's program (lnk-sandbox, whose
// main is Main alone) in place of this program started again: a program
// of many packages (lnk, its terminal view's syntax highlighting) spends
// tens of milliseconds in their init before Main runs, at every call.
// Call it before the first Command.
func UseProgram(path string) { program.Store(&path) }

// Program is the trampoline's program, as UseProgram left it: a
// background command's supervisor is the same program started again.
func Program() string { return *program.Load() }

var (
	availOnce sync.Once
	availErr  error
)

// Available says whether this machine confines commands: nil, or
// ErrUnavailable with why (Landlock absent, user namespaces refused).
// It asks the kernel once a process: a trampoline started with every
// namespace and Landlock, which ends before running anything.
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

// AssumeAvailable has this process take the machine to confine commands
// without asking the kernel (Available's probe: a trampoline started and
// ended): for a process started by one that asked already, as a
// background command's supervisor is by its run server. A kernel that
// doesn't confine is still refused, by the trampoline itself (its exit
// status 125, why said on its standard error).
func AssumeAvailable() { availOnce.Do(func() {}) }

func probe() error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		why := "the kernel has no Landlock"
		if err != nil {
			why += " (" + err.Error() + "; enabled at boot by lsm=...,landlock)"
		}
		return fmt.Errorf("%s: %w", why, ErrUnavailable)
	}
	dir, err := os.MkdirTemp("", "lnk-sandbox-probe")
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer os.RemoveAll(dir)
	cmd, err := command(wire{Spec: Spec{Args: []string{"true"}, Dir: dir, Env: Env(dir, nil), Limits: DefaultLimits}, Etc: etcCover(), Probe: true})
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	if err != nil {
		return fmt.Errorf("user namespaces are refused here (%v; a kernel setting such as user.max_user_namespaces, kernel.unprivileged_userns_clone or kernel.apparmor_restrict_unprivileged_userns): %w", err, ErrUnavailable)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		err = errors.Join(errors.New("no answer in 10 s"), <-done)
	}
	if err != nil {
		return fmt.Errorf("the sandbox could not be made here (%v: %s): %w", err, strings.TrimSpace(stderr.String()), ErrUnavailable)
	}
	return nil
}
