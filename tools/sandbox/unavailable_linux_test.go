package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// noUserNSArg starts the test binary in a user namespace of its own
// whose kernel refuses it any more (user.max_user_namespaces 0 there):
// it says what Available and Command answer, and runs a command
// unconfined when told to.
const noUserNSArg = "lnk-sandbox-test-no-userns"

func noUserNS(dir string) int {
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
		fmt.Println("setup:", err)
		return 2
	}
	spec := Spec{Args: []string{"sh", "-c", "echo unconfined"}, Dir: dir, Env: Env(dir, nil)}
	_, err := Command(spec)
	fmt.Printf("refused=%v\n%v\n", errors.Is(err, ErrUnavailable), err)
	spec.Unconfined = true
	cmd, err := Command(spec)
	if err != nil {
		fmt.Println("unconfined:", err)
		return 1
	}
	out, err := cmd.CombinedOutput()
	fmt.Printf("%s%v\n", out, err)
	return 0
}

// Where the kernel refuses user namespaces, a command is refused, never
// run unconfined on its own: the refusal says why and how to turn the
// sandbox off (config.json); Unconfined, which only config.json asks,
// runs it.
func TestRefusedWithoutSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, noUserNSArg, t.TempDir())
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	for _, want := range []string{"refused=true", "user namespaces are refused here", `"run": {"sandbox": "off"}`, "unconfined\n<nil>"} {
		if !strings.Contains(got, want) {
			t.Fatalf("lacks %q:\n%s", want, got)
		}
	}
}
