package background

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnk-dev/link/internal/testwait"
)

// helper is a run server of background commands in a process of its
// own (serveHelper), driven a line at a time.
type helper struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startHelper(t *testing.T, dir, told string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverEnv+"="+dir, toldEnv+"="+told)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if got := h.line(t); got != "ready" {
		t.Fatalf("the server said %q, want ready", got)
	}
	return h
}

func (h *helper) line(t *testing.T) string {
	t.Helper()
	if !h.out.Scan() {
		t.Fatalf("the server ended: %v", h.out.Err())
	}
	return h.out.Text()
}

// call sends one line and answers the ok's word.
func (h *helper) call(t *testing.T, verb, arg string) string {
	t.Helper()
	fmt.Fprintf(h.in, "%s %s\n", verb, arg)
	got := h.line(t)
	word, ok := strings.CutPrefix(got, "ok ")
	if !ok {
		t.Fatalf("%s %s: %s", verb, arg, got)
	}
	return word
}

// 100 commands started and stopped, or ending on their own, and the run
// server killed with SIGKILL while some run and others wait to end, then
// started again: each end not stopped is told exactly once (40 before the
// kill, 10 that ended while no server ran), no stopped one told, and no
// process of any command or supervisor is left running.
func TestServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("100 commands: not in -short")
	}
	dir, told := t.TempDir(), t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	t.Cleanup(func() { killNaming(dir) }) // a test failed midway leaves none running
	h := startHelper(t, dir, told)
	var quick, stopped, through, gated []string
	for i := range 40 {
		quick = append(quick, h.call(t, "start", fmt.Sprintf("echo quick %d", i)))
		stopped = append(stopped, h.call(t, "start", "exec sleep 1000"))
	}
	for range 10 {
		through = append(through, h.call(t, "start", "exec sleep 1000"))
		gated = append(gated, h.call(t, "start", "while [ ! -e "+gate+" ]; do sleep 0.02; done; echo through"))
	}
	for _, id := range stopped {
		if got := h.call(t, "stop", id); got != "ended" {
			t.Fatalf("stop %s: %s", id, got)
		}
	}
	testwait.For(t, 30*time.Second, "the 40 quick ends told", func() bool { return allExist(told, quick) })

	h.cmd.Process.Kill()
	h.cmd.Wait()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ends := make([]string, len(gated))
	for i, id := range gated {
		ends[i] = filepath.Join(id, endFile)
	}
	testwait.For(t, 30*time.Second, "the 10 gated commands ended, no server running", func() bool { return allExist(dir, ends) })

	h = startHelper(t, dir, told)
	testwait.For(t, 30*time.Second, "the 10 ends while no server ran told", func() bool { return allExist(told, gated) })
	for _, id := range through {
		if got := h.call(t, "stop", id); got != "ended" {
			t.Fatalf("stop %s, running through the kill: %s", id, got)
		}
	}
	h.in.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatal(err)
	}

	ents, err := os.ReadDir(told)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, id := range append(quick, gated...) {
		want[id] = true
	}
	for _, e := range ents {
		if !want[e.Name()] {
			t.Errorf("told %s, which is not one of the ends to tell (a second telling, or a stopped command's)", e.Name())
		}
	}
	if len(ents) != len(want) {
		t.Errorf("%d ends told, want %d", len(ents), len(want))
	}
	// Each supervisor exits just after it writes its command's end: the
	// test waits for every one to be gone, and fails naming one that stays.
	for _, id := range append(append(append(quick, stopped...), through...), gated...) {
		var proc Proc
		if err := readJSON(filepath.Join(dir, id, procFile), &proc); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("command %s's supervisor (%d) and process (%d) gone", id, proc.Supervisor, proc.PID)
		testwait.For(t, 10*time.Second, what, func() bool { return !alive(proc.Supervisor) && !alive(proc.PID) })
	}
	if left := processesNaming(dir); len(left) > 0 {
		t.Errorf("processes left naming the commands' folder: %v", left)
	}
}

// allExist says whether every name exists in dir.
func allExist(dir string, names []string) bool {
	for _, n := range names {
		if !exists(filepath.Join(dir, n)) {
			return false
		}
	}
	return true
}

// killNaming kills every process whose command line holds s: the
// supervisors of the commands in a folder (their commands die with them).
func killNaming(s string) {
	for _, p := range processesNaming(s) {
		pid, _, _ := strings.Cut(p, ":")
		var n int
		if _, err := fmt.Sscan(pid, &n); err == nil {
			killPID(n)
		}
	}
}

// processesNaming lists the living processes whose command line holds s.
func processesNaming(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && alive(pid) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}
