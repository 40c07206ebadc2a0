package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperArg starts the test binary, inside a sandbox, as a program that
// tries one thing and says what the kernel answered (helper).
const helperArg = "lnk-sandbox-test-helper"

func TestMain(m *testing.M) {
	if IsTrampoline(os.Args) {
		os.Exit(Main())
	}
	if len(os.Args) == 3 && os.Args[1] == noUserNSArg {
		os.Exit(noUserNS(os.Args[2]))
	}
	if len(os.Args) >= 3 && os.Args[1] == helperArg {
		os.Exit(helper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// helper does what and prints "ok ..." or the kernel's errno by its name
// (EACCES), as the system call returned it.
func helper(what string, args []string) int {
	say := func(err error) int {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Println(unix.ErrnoName(errno))
			return 1
		}
		fmt.Println("error", err)
		return 1
	}
	switch what {
	case "read":
		b, err := os.ReadFile(args[0])
		if err != nil {
			return say(err)
		}
		fmt.Printf("ok %s\n", b)
	case "write":
		if err := os.WriteFile(args[0], []byte("written"), 0o644); err != nil {
			return say(err)
		}
		fmt.Println("ok")
	case "connect":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return say(err)
		}
		addr, _ := net.ResolveTCPAddr("tcp", args[0])
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return say(err)
		}
		fmt.Println("ok")
	case "udp":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		if err != nil {
			return say(err)
		}
		addr, _ := net.ResolveUDPAddr("udp", args[0])
		if err := unix.Sendto(fd, []byte("hello"), 0, &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return say(err)
		}
		fmt.Println("ok")
	case "unshare":
		if err := unix.Unshare(unix.CLONE_NEWUSER); err != nil {
			return say(err)
		}
		fmt.Println("ok")
	case "kill-all":
		if err := unix.Kill(-1, unix.SIGKILL); err != nil {
			return say(err)
		}
		fmt.Println("ok")
	case "env":
		for _, e := range os.Environ() {
			fmt.Println(e)
		}
	default:
		fmt.Println("unknown", what)
		return 2
	}
	return 0
}

// result is what a sandboxed command did.
type result struct {
	stdout, stderr string
	code           int
	pidNS          string // its pid namespace, as /proc names it while it ran
}

// testSpec is a spec over a fresh agent home's workspace, the test
// binary readable inside (for helper).
func testSpec(t testing.TB, args ...string) Spec {
	t.Helper()
	return specIn(t, t.TempDir(), args...)
}

// specIn is testSpec with the Link home at home.
func specIn(t testing.TB, home string, args ...string) Spec {
	t.Helper()
	root := home + "/agents/main"
	ws := root + "/files"
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/endpoint.key", []byte("the agent's key"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Args: args, Dir: ws, Env: Env(ws, nil), Read: []string{exe}}
}

// helperArgs are args for the helper inside a sandbox.
func helperArgs(t *testing.T, what string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe, helperArg, what}, args...)
}

// homeOutsideTmp is a Link home where a person's would be, outside
// /tmp (which each call has of its own): under /var/tmp, removed after t.
func homeOutsideTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "lnk-sandbox-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// run runs spec confined, killing its group past timeout.
func run(t *testing.T, spec Spec, timeout time.Duration) result {
	t.Helper()
	cmd, err := Command(spec)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", cmd.Process.Pid))
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		code = exit.ExitCode()
		if code < 0 {
			code = 128 + int(exit.Sys().(syscall.WaitStatus).Signal())
		}
	} else if werr != nil {
		t.Fatal(werr)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code, pidNS: ns}
}

// inNamespace counts the processes in the pid namespace ns (as
// /proc/<pid>/ns/pid names it).
func inNamespace(ns string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns {
			n++
		}
	}
	return n
}

// said is the helper's answer, its one line.
func (r result) said() string { return strings.TrimSpace(r.stdout) }
