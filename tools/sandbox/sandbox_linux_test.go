package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/lnk-dev/link/internal/testwait"
)

// A command works in its workspace: it writes and reads there, and it is
// its working folder and its HOME.
func TestWorkspace(t *testing.T) {
	spec := specIn(t, homeOutsideTmp(t), "sh", "-c", "pwd; echo hi > made.txt; cat made.txt; echo $HOME; ls -A /tmp | wc -l; echo x > /tmp/scratch && cat /tmp/scratch")
	r := run(t, spec, 10*time.Second)
	want := spec.Dir + "\nhi\n" + spec.Dir + "\n1\nx\n" // /tmp holds the test binary's folder alone
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q (want %q), stderr %q", r.code, r.stdout, want, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(spec.Dir, "made.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("the file made: %q %v", b, err)
	}
}

// Every way out is refused by the kernel, as the command's own system
// call was answered: the agent's key beside the workspace (Landlock,
// EACCES), a file made outside every folder the sandbox opens (EACCES),
// one elsewhere in the machine's /tmp (not there at all: the call's /tmp
// is its own, ENOENT), a link from the workspace to /etc/shadow
// (EACCES, even run as root), a write outside the workspace (EACCES,
// even as root), a TCP connect to a port listening on 127.0.0.1 with the
// network off (Landlock's EACCES) and a UDP datagram sent there
// (ENETUNREACH: a network of its own, nothing up), kill -9 -1 (the test
// survives, and the sandbox serves again), a namespace of its own
// (seccomp's EPERM). A home under /tmp has
// nothing beside its workspace in the sandbox (ENOENT).
func TestEscapesRefusedByKernel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	outside, err := os.MkdirTemp("/var/tmp", "lnk-sandbox-test")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	idRSA := filepath.Join(outside, ".ssh", "id_rsa")
	os.MkdirAll(filepath.Dir(idRSA), 0o700)
	os.WriteFile(idRSA, []byte("PRIVATE KEY"), 0o600)
	elsewhere := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(elsewhere, []byte("PRIVATE"), 0o600)

	spec := specIn(t, homeOutsideTmp(t))
	if err := os.Symlink("/etc/shadow", filepath.Join(spec.Dir, "shadow")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		args []string
		want string
	}{
		{"the agent's key", []string{"read", "../endpoint.key"}, "EACCES"},
		{"a key outside", []string{"read", idRSA}, "EACCES"},
		{"the machine's /tmp", []string{"read", elsewhere}, "ENOENT"},
		{"a link to /etc/shadow", []string{"read", "shadow"}, "EACCES"},
		{"/etc/shadow", []string{"read", "/etc/shadow"}, "EACCES"},
		{"a write beside the workspace", []string{"write", "../config.json"}, "EACCES"},
		{"a write to the system", []string{"write", "/usr/lnk-sandbox-test"}, "EACCES"},
		{"a TCP connect", []string{"connect", ln.Addr().String()}, tcpRefusal()},
		{"a UDP datagram", []string{"udp", ln.Addr().String()}, "ENETUNREACH"},
		{"a user namespace of its own", []string{"unshare"}, "EPERM"},
	} {
		s := spec
		s.Args = helperArgs(t, c.args[0], c.args[1:]...)
		r := run(t, s, 10*time.Second)
		if r.said() != c.want || r.code != 1 {
			t.Errorf("%s: exit %d, said %q (want %s), stderr %q", c.what, r.code, r.said(), c.want, r.stderr)
		}
	}
	inTmp := testSpec(t)
	inTmp.Args = helperArgs(t, "read", "../endpoint.key")
	if r := run(t, inTmp, 10*time.Second); r.said() != "ENOENT" {
		t.Errorf("the key of a home under /tmp: exit %d, said %q, stderr %q", r.code, r.said(), r.stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(spec.Dir), "config.json")); err == nil {
		t.Fatal("a file was written beside the workspace")
	}
	if _, err := os.Stat("/usr/lnk-sandbox-test"); err == nil {
		os.Remove("/usr/lnk-sandbox-test")
		t.Fatal("a file was written to /usr")
	}

	// The same calls allowed: the network on connects, /etc/passwd
	// (anyone's to read) is read. So it was the sandbox that refused.
	s := spec
	s.Network = true
	s.Args = helperArgs(t, "connect", ln.Addr().String())
	if r := run(t, s, 10*time.Second); r.said() != "ok" {
		t.Fatalf("network on: %q %q", r.stdout, r.stderr)
	}
	s = spec
	s.Args = helperArgs(t, "read", "/etc/passwd")
	if r := run(t, s, 10*time.Second); !strings.HasPrefix(r.said(), "ok root:") {
		t.Fatalf("/etc/passwd: %q %q", r.stdout, r.stderr)
	}

	// kill -9 -1 reaches nothing outside the call.
	s = spec
	s.Args = []string{"sh", "-c", "sleep 30 & kill -9 -1; echo after"}
	r := run(t, s, 10*time.Second)
	if !strings.Contains(r.stdout, "after") && r.code != 137 {
		t.Fatalf("kill -9 -1: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	s.Args = []string{"echo", "still serving"}
	if r := run(t, s, 10*time.Second); r.stdout != "still serving\n" {
		t.Fatalf("after kill -9 -1: %q %q", r.stdout, r.stderr)
	}
}

// The environment is the spec's alone: nothing of the process that runs
// the sandbox (a model key, an LNK_ address) reaches the command.
func TestEnvironmentIsOwn(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("LNK_RUN", "http://127.0.0.1:1/mcp/secret")
	spec := testSpec(t)
	spec.Args = helperArgs(t, "env")
	r := run(t, spec, 10*time.Second)
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if strings.Join(got, "\n") != strings.Join(spec.Env, "\n") {
		t.Fatalf("the command's environment:\n%s\nwant:\n%s", r.stdout, strings.Join(spec.Env, "\n"))
	}
	if strings.Contains(r.stdout, "secret") || strings.Contains(r.stdout, "LNK_") {
		t.Fatalf("a secret reached the command:\n%s", r.stdout)
	}
}

// A fork bomb, run as whoever runs the test (root in CI, which
// RLIMIT_NPROC doesn't bound), stops at its pid namespace's bound: its
// shells told they cannot fork (EAGAIN), never more processes at once
// than the namespace's pid_max.
func TestForkBombBounded(t *testing.T) {
	if !kernelAtLeast(6, 14) {
		t.Skip("this kernel keeps one pid_max for the machine (6.14 keeps one for each pid namespace): a fork bomb run as root is bounded by the machine's limits alone")
	}
	spec := testSpec(t, "sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 5")
	spec.Limits.Processes = 64
	cmd, err := Command(spec)
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ns, _ := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/pid")
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	most := 0
	deadline := time.After(3 * time.Second)
sample:
	for {
		select {
		case <-deadline:
			break sample
		case <-done:
			break sample
		default:
			most = max(most, inNamespace(ns))
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	if most > 301 || !strings.Contains(stderr.String(), "Cannot fork") {
		t.Fatalf("at most %d processes at once in the bomb's namespace (want 301 at most), the bound reached: %v", most, strings.Contains(stderr.String(), "Cannot fork"))
	}
	t.Logf("at most %d processes at once", most)
	testwait.For(t, 30*time.Second, "the bomb's namespace to empty", func() bool { return inNamespace(ns) == 0 })
}

// lockedBuffer is a command's output written from exec's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tcpRefusal is the kernel's refusal of a TCP connect with the network
// off: Landlock's (ABI 4 on), else the empty network namespace's.
func tcpRefusal() string {
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi >= 4 {
		return "EACCES"
	}
	return "ENETUNREACH"
}

// kernelAtLeast says whether the running kernel is major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}
